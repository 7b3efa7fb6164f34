// ONNX models through the CLI (docs/importers.md): `--model file.onnx` reads the file's bytes and hands them to
// the API base64-encoded; the fixtures' parameter counts are PyTorch's own; unknown ops are listed; bad files
// exit 2 with one line naming the problem, never a crash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertFails, prenet as run, root } from './helpers.mjs';

const fixtures = join(root, 'tests/fixtures/onnx');
const recorded = JSON.parse(readFileSync(join(fixtures, 'fixtures.json'), 'utf8'));
let dir;
const prenet = (...args) => run(args, { timeout: 60_000 });

function json(...args) {
  const r = prenet(...args, '--json');
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'prenet-onnx-'));
  const good = readFileSync(join(fixtures, 'lstm_lm_tied.onnx'));
  writeFileSync(join(dir, 'truncated.onnx'), good.subarray(0, good.length >> 1));
  writeFileSync(join(dir, 'text.onnx'), 'this is not a model\n');
  writeFileSync(join(dir, 'config.onnx'), '{"model_type": "gpt2"}');
  writeFileSync(join(dir, 'empty.onnx'), '');
  // The graph field (7) declaring 2^40 bytes.
  writeFileSync(join(dir, 'huge.onnx'), Buffer.from([0x08, 0x08, 0x3a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x61]));
  writeFileSync(join(dir, 'big.onnx'), Buffer.alloc(40 * 1024 * 1024 + 1, 0x08));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('every fixture imports with PyTorch\'s parameter count', () => {
  for (const [name, entry] of Object.entries(recorded.models)) {
    const doc = json('features', '--model', join(fixtures, `${name}.onnx`));
    assert.equal(doc.params, entry.params, name);
    assert.equal(doc.model, name);
    assert.equal(doc.unknown_ops, undefined, name);
  }
});

test('an ONNX model predicts like a zoo model, at the requested sizes', () => {
  const onnx = json('predict', '--model', join(fixtures, 'resnet18.onnx'), '--hardware', 'a100-sxm4-80gb', '--batch', '32');
  const zoo = json('predict', '--model', 'resnet18', '--hardware', 'a100-sxm4-80gb', '--batch', '32');
  assert.equal(onnx.model.params, zoo.model.params);
  assert.equal(onnx.settings.batch, 32);
  const [a, b] = [onnx.results[0].step.total_ms, zoo.results[0].step.total_ms];
  assert.ok(Math.abs(a - b) / b < 0.05, `onnx ${a} ms vs zoo ${b} ms`);
  const lm = json('features', '--model', join(fixtures, 'transformer_encoder.onnx'), '--seq', '64');
  assert.equal(lm.settings.seq, 64);
});

test('unknown ops are listed in the reply and the table', () => {
  const file = join(fixtures, 'unknown_op.onnx');
  const doc = json('features', '--model', file);
  assert.equal(doc.params, recorded.handmade.unknown_op.params);
  assert.deepEqual(doc.unknown_ops, [{ op: 'com.example.Frobnicate', count: 1 }]);
  assert.ok(doc.layers.some((l) => l.kind === 'memory_bound'));
  const predicted = json('predict', '--model', file, '--hardware', 'a100-sxm4-80gb');
  assert.deepEqual(predicted.model.unknown_ops, doc.unknown_ops);
  const table = prenet('predict', '--model', file, '--hardware', 'a100-sxm4-80gb');
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /unknown ops \(costed memory-bound over their tensors\): com\.example\.Frobnicate x1/);
});

test('bad ONNX files are refused with a message', () => {
  const f = (name) => join(dir, name);
  assertFails(['features', '--model', f('truncated.onnx')], /truncated or corrupt/);
  assertFails(['features', '--model', f('text.onnx')], /ONNX file: not .*ONNX model/);
  assertFails(['features', '--model', f('config.onnx')], /looks like JSON/);
  assertFails(['features', '--model', f('empty.onnx')], /empty/);
  assertFails(['features', '--model', f('huge.onnx')], /truncated or corrupt/);
  assertFails(['features', '--model', f('big.onnx')], /more than the limit of 40 MiB/);
  assertFails(['features', '--model', f('missing.onnx')], /cannot read model file/);
});
