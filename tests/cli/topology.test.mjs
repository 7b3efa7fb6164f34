// Torus pods and full meshes through `prenet predict` (docs/parallel.md, "Topologies"): every sheet answers a
// multi-device request, TPU pods are cut into slices joined by the data-centre network, --topology shapes them,
// and the published layouts of the largest TPU runs predict without error (their times are not compared: PaLM's
// and Gopher's are reserved for an independent check).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFails, prenet } from './helpers.mjs';

function predict(...args) {
  const r = prenet(['predict', '--json', ...args], { timeout: 120_000 });
  assert.equal(r.status, 0, `prenet predict ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('PaLM 540B on 6,144 TPU v4 chips: two slices of 12x16x16 over the data-centre network', () => {
  const r = predict('--model', 'palm-540b', '--hardware', 'tpu-v4', '--gpus', '6144', '--seq', '2048',
    '--global-batch', '2048', '--precision', 'bf16').results[0];
  assert.equal(r.plan.dp * r.plan.tp * r.plan.pp * r.plan.cp, 6144);
  assert.equal(r.plan.scale_up.topology, 'torus');
  assert.equal(r.plan.scale_up.slice, '12x16x16');
  assert.equal(r.plan.scale_up.slices, 2);
  assert.equal(r.plan.scale_up.domain, 3072);
  assert.ok(r.step.total_ms > 0 && Number.isFinite(r.step.total_ms));
  assert.ok(r.throughput.mfu > 0.05 && r.throughput.mfu < 0.9, String(r.throughput.mfu));
});

test('Gopher 280B on 4,096 TPU v3 chips: four 2D pods of 32x32', () => {
  const r = predict('--model', 'gopher-280b', '--hardware', 'tpu-v3', '--gpus', '4096', '--seq', '2048',
    '--global-batch', '1536', '--precision', 'bf16').results[0];
  assert.equal(r.plan.scale_up.slice, '32x32');
  assert.equal(r.plan.scale_up.slices, 4);
  assert.ok(r.step.total_ms > 0 && Number.isFinite(r.step.total_ms));
});

test('--topology shapes the slice, and a smaller slice is no faster on the same chips', () => {
  const args = ['--model', 'llama2-7b', '--hardware', 'tpu-v5p', '--gpus', '256', '--dp', '32', '--tp', '8',
    '--pp', '1', '--seq', '4096', '--global-batch', '256', '--precision', 'bf16'];
  const whole = predict(...args).results[0];
  const cut = predict(...args, '--topology', '4x4x8').results[0];
  assert.equal(cut.plan.scale_up.slice, '4x4x8');
  assert.equal(cut.plan.scale_up.slices, 2);
  assert.equal(predict(...args, '--topology', '4x4x8').settings.topology, '4x4x8');
  // The same layout across two slices reduces its gradients over the data-centre network too.
  assert.ok(cut.step.total_ms >= whole.step.total_ms * 0.999, `${cut.step.total_ms} vs ${whole.step.total_ms}`);
});

test('bad slices are refused by name', () => {
  assertFails(['predict', '--model', 'gpt2', '--hardware', 'tpu-v4', '--gpus', '200', '--topology', '4x4x8'],
    /not whole slices/);
  assertFails(['predict', '--model', 'gpt2', '--hardware', 'h100-sxm5-80gb', '--gpus', '16', '--topology', '4x4'],
    /torus/);
  assertFails(['predict', '--model', 'gpt2', '--hardware', 'tpu-v4', '--gpus', '64', '--topology', '4x4x4x1'],
    /--topology/);
});

test('every catalogue sheet answers a 16-device request or names the missing number', () => {
  const r = prenet(['hardware', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const listing = JSON.parse(r.stdout);
  const ids = (listing.hardware ?? listing).map((h) => h.id);
  assert.ok(ids.length > 40);
  for (const id of ids) {
    const p = prenet(['predict', '--json', '--model', 'gpt2', '--hardware', id, '--gpus', '16', '--dp', '16', '--tp', '1',
      '--pp', '1', '--global-batch', '64'], { timeout: 60_000 });
    if (p.status === 0) continue;
    // Refused only where the sheet lacks a published interconnect figure, and then saying which.
    assert.match(p.stderr, /publishes no|not published|intra_node_gbps/, `${id}: ${p.stderr}`);
  }
});
