// --mixed autocast|half: how fp16/bf16 training keeps its tensors (docs/training-model.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prenet = process.env.PRENET || join(root, 'build', 'prenet');
const predict = (...args) => {
  const r = spawnSync(prenet, ['predict', '--json', '--hardware', 'a100-sxm4-80gb', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};
const common = ['--model', 'bert-large', '--seq', '512', '--batch', '4', '--predictor', 'roofline'];

test('fp16 and bf16 default to autocast: fp32 weights and gradients plus half weight copies', () => {
  const params = predict(...common).model.params;
  for (const precision of ['fp16', 'bf16']) {
    const out = predict(...common, '--precision', precision);
    assert.equal(out.settings.mixed, 'autocast');
    const m = out.results[0].memory;
    assert.equal(m.weights_bytes, 4 * params);
    assert.equal(m.gradients_bytes, 4 * params);
    // Every matmul weight at 2 bytes; the embedding tables (31.8M of 335M) are not cast.
    assert.ok(m.weight_copies_bytes > 1.8 * params && m.weight_copies_bytes < 1.82 * params, `${m.weight_copies_bytes}`);
  }
});

test('--mixed half is the half-precision model with an fp32 master copy', () => {
  const autocast = predict(...common, '--precision', 'bf16');
  const half = predict(...common, '--precision', 'bf16', '--mixed', 'half');
  const params = half.model.params;
  assert.equal(half.settings.mixed, 'half');
  const m = half.results[0].memory;
  assert.equal(m.weights_bytes, 6 * params);
  assert.equal(m.gradients_bytes, 2 * params);
  assert.equal(m.weight_copies_bytes, 0);
  // Autocast keeps fp32 layer norms and softmax outputs: more activation memory than a half model.
  assert.ok(autocast.results[0].memory.activation_bytes > 1.2 * m.activation_bytes);
});

test('mixed is null without mixed precision and fp8 is always a bf16 model', () => {
  assert.equal(predict(...common).settings.mixed, null);
  assert.equal(predict(...common, '--precision', 'fp8').settings.mixed, 'half');
  const r = spawnSync(prenet, ['predict', ...common, '--precision', 'fp8', '--mixed', 'autocast'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^prenet: error: fp8 runs as a bf16 model/);
  const full = spawnSync(prenet, ['predict', ...common, '--mixed', 'half'], { encoding: 'utf8' });
  assert.equal(full.status, 2);
  assert.match(full.stderr, /'mixed' applies to fp16 and bf16 \(the precision is fp32\)/);
  const bad = spawnSync(prenet, ['predict', ...common, '--precision', 'bf16', '--mixed', 'apex'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--mixed must be autocast or half, got 'apex'/);
});

test('the table names the recipe', () => {
  const r = spawnSync(prenet, ['predict', ...common, '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16', '--mixed', 'half'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout.split('\n')[0], /, bf16 \(half\), adamw/);
});
