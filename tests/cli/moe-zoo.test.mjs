// The zoo's mixtures of experts of issue #30 through `prenet predict`: Llama 4 Scout (16 experts and a shared one in
// each of 48 layers, 107.8 G parameters in its language model) does not fit one device; expert parallelism splits
// its experts over the devices, which then hold one expert per layer each and exchange tokens by all-to-all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers.mjs';

const predict = (...args) => json('predict', ...args);

const scout = ['--model', 'llama4-scout', '--hardware', 'h200-sxm-141gb', '--precision', 'bf16', '--seq', '4096'];

test('llama4-scout does not fit one device', () => {
  const r = predict(...scout, '--batch', '1').results[0];
  assert.equal(r.memory.fits, false);
  // Its bf16 weights alone (2 bytes x 107.77 G) are past the device's 141 GB.
  assert.ok(r.memory.weights_bytes > 2 * 107.7e9, String(r.memory.weights_bytes));
});

test('llama4-scout with expert parallelism over 16 devices holds 1/16 of the routed experts on each', () => {
  const layout = (zero, ep) => ['--gpus', '16', '--dp', '16', '--tp', '1', '--pp', '1', '--cp', '1', '--zero', zero,
    '--ep', ep, '--batch', '1', '--global-batch', '16', '--checkpointing', 'full'];
  const ep = predict(...scout, ...layout('1', '16')).results[0];
  const replicated = predict(...scout, ...layout('1', '1')).results[0];
  assert.equal(ep.plan.ep, 16);
  // Expert parallelism moves tokens to their experts by all-to-all; without it there is none.
  assert.ok(ep.step.communication['expert parallel'].total_ms > 0, JSON.stringify(ep.step.communication));
  assert.equal(replicated.step.communication['expert parallel'].total_ms, 0);
  // Without ZeRO's weight sharding a device holds every weight it uses: all 107,769,861,120 without expert
  // parallelism; with it, one of the 16 routed experts of each layer (96,636,764,160 / 16) and the shared experts,
  // attention and embeddings whole (11,133,096,960): 17,172,894,720.
  const ratio = ep.memory.weights_bytes / replicated.memory.weights_bytes;
  assert.ok(Math.abs(ratio - 17172894720 / 107769861120) < 1e-6, String(ratio));
  // ZeRO-3 then shards what every device holds over the 16, and the model fits 141 GB devices.
  assert.ok(predict(...scout, ...layout('3', '16')).results[0].memory.fits);
});
