// memory.advice.changes (docs/training-model.md "Ranked changes"): every advised change, applied through the CLI
// as its flags, really fits, at the peak and step time the advice predicted; the cheapest first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prenet } from './helpers.mjs';

const predict = (args) => {
  const r = prenet(['predict', '--json', '--predictor', 'roofline', ...args]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).results[0];
};

// The request with a change's flags in place of its own (every flag here takes a value).
function withFlags(args, flags) {
  const change = flags.split(' ');
  const named = new Set(change.filter((t) => t.startsWith('--')));
  const kept = [];
  for (let i = 0; i < args.length; i += 2) if (!named.has(args[i])) kept.push(args[i], args[i + 1]);
  return [...kept, ...change];
}

// Applies each change's flags to the request and checks the advice's numbers.
function assertEachChangeFits(args) {
  const result = predict(args);
  assert.equal(result.memory.fits, false, 'the request itself must not fit');
  const { changes, summary } = result.memory.advice;
  assert.ok(changes.length > 0, summary);
  for (let i = 1; i < changes.length; ++i) assert.ok(changes[i - 1].step_ms <= changes[i].step_ms, 'cheapest first');
  assert.ok(summary.includes(`cheapest change ${changes[0].flags}: fits at `), summary);
  for (const change of changes) {
    const applied = predict(withFlags(args, change.flags));
    assert.equal(applied.memory.fits, true, change.flags);
    assert.equal(applied.memory.peak_reserved_bytes, change.peak_reserved_bytes, change.flags);
    assert.equal(applied.memory.peak_bytes_per_device, change.peak_bytes_per_device, change.flags);
    const ms = applied.step.total_ms;
    assert.ok(Math.abs(ms - change.step_ms) <= 1e-9 * ms, `${change.flags}: ${ms} vs ${change.step_ms}`);
  }
  return changes;
}

test('one device: each advised change fits as advised, the micro-batch cut before full checkpointing', () => {
  const changes = assertEachChangeFits(['--model', 'gpt2-xl', '--hardware', 'a100-sxm4-80gb', '--seq', '1024', '--batch', '16', '--precision', 'bf16']);
  const flags = changes.map((c) => c.flags);
  assert.ok(flags.includes('--checkpointing full'), flags.join('; '));
  assert.ok(flags.indexOf('--batch 8 --grad-accum 2') < flags.indexOf('--checkpointing full'), flags.join('; '));
});

test('eight devices: a pinned ZeRO stage raised and a pinned dp left to the plan search, each fitting as advised', () => {
  const changes = assertEachChangeFits(['--model', 'llama2-7b', '--hardware', 'a100-sxm4-80gb', '--gpus', '8', '--dp', '8', '--zero', '0', '--batch', '1', '--global-batch', '8', '--seq', '4096', '--precision', 'bf16', '--checkpointing', 'none']);
  const flags = changes.map((c) => c.flags);
  // DDP's full replica (148 GB, and PyTorch DDP's bucket copy of the gradients) does not fit; ZeRO 2 and 3 do, and
  // a smaller dp with the rest (tensor or pipeline parallelism) searched.
  assert.deepEqual(flags.slice(0, 2), ['--zero 2', '--zero 3']);
  assert.ok(flags.some((f) => /^--dp [124]$/.test(f)), flags.join('; '));
});

test("a large vocabulary's logits: chunked loss alone fits and ranks first, for it costs no step time", () => {
  const changes = assertEachChangeFits(['--model', 'gpt2-large', '--hardware', 'a10', '--seq', '1024', '--batch', '4', '--precision', 'bf16']);
  assert.equal(changes[0].flags, '--loss chunked');
  assert.equal(changes[0].step_increase, 0);
  assert.ok(changes.slice(1).every((c) => c.step_increase > 0), changes.map((c) => c.flags).join('; '));
});
