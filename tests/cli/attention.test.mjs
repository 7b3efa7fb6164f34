// --attention flash|flash1|eager (flash by default, as PyTorch's SDPA): the fused kernel keeps less memory and the
// choice is echoed in settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prenet = process.env.PRENET || join(root, 'build', 'prenet');
const predict = (...args) => {
  const r = spawnSync(prenet, ['predict', '--json', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};

test('flash attention is the default, lowers activation memory and is echoed', () => {
  const common = ['--model', 'llama2-7b', '--seq', '4096', '--batch', '2', '--precision', 'bf16', '--hardware', 'h100-sxm5-80gb'];
  const eager = predict(...common, '--attention', 'eager');
  const flash = predict(...common);
  assert.equal(eager.settings.attention, 'eager');
  assert.equal(flash.settings.attention, 'flash');
  assert.deepEqual(predict(...common, '--attention', 'flash').results[0].step, flash.results[0].step);
  assert.ok(flash.results[0].memory.activation_bytes < eager.results[0].memory.activation_bytes / 2);
  assert.equal(flash.model.params, eager.model.params);
});

// --attention flash1 (FlashAttention 1, Triton's of 2022): the same kernels and memory, attention 230/124 as long.
test('flash1 times the attention kernels at the published first-generation ratio and is echoed', () => {
  const common = ['--model', 'llama2-7b', '--seq', '8192', '--batch', '1', '--precision', 'bf16', '--hardware', 'a100-sxm4-80gb'];
  const second = predict(...common);
  const first = predict(...common, '--attention', 'flash1');
  assert.equal(first.settings.attention, 'flash1');
  const a2 = second.results[0].step.by_family_ms.attention, a1 = first.results[0].step.by_family_ms.attention;
  assert.ok(Math.abs(a1 / a2 - 230 / 124) < 1e-9, `${a1} / ${a2}`);
  assert.equal(first.results[0].step.by_family_ms.gemm, second.results[0].step.by_family_ms.gemm);
  assert.equal(first.results[0].memory.peak_allocated_bytes, second.results[0].memory.peak_allocated_bytes);
});

test('an unknown attention mode is a clear error', () => {
  const r = spawnSync(prenet, ['predict', '--model', 'gpt2', '--attention', 'sparse'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--attention must be eager, flash or flash1, got 'sparse'/);
});
