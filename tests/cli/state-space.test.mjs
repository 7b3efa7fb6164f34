// The state-space and hybrid importers through the CLI (docs/importers.md, "State-space and hybrid models"): a
// Mamba-2 and a Jamba config predict on an H100 with their published parameter counts, and a bad one is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

import { assertFails, fixture as fixtureOf, json, run } from './helpers.mjs';
const fixture = (file) => fixtureOf('hf', file);

const predict = (file) => json('predict', '--model', fixture(file), '--hardware', 'h100-sxm5-80gb', '--batch', '1',
                               '--seq', '2048');

test('a Mamba-2 config predicts a positive step on an H100 with its published count', () => {
  const r = predict('mamba-codestral-7b-v0.1.json');
  assert.equal(r.model.params, 7285403648);  // Mistral AI: "7,285,403,648 parameters"
  assert.equal(r.settings.precision, 'bf16');  // its torch_dtype
  const step = r.results[0].step;
  assert.ok(step.total_ms > 0 && Number.isFinite(step.total_ms));
  assert.ok(step.forward_ms > 0 && step.backward_ms > step.forward_ms);
  assert.ok(r.model.forward_flops > 2 * 7e9 * 2048);  // at least 2 x params x tokens
  // The SSD kernels have no measured family, and the reply says how they are timed.
  assert.ok(r.model.import_notes.some((n) => /no measured kernel family/.test(n)), r.model.import_notes.join('; '));
});

test('a Jamba config predicts a positive step on an H100 with its published count', () => {
  const r = predict('jamba-v0.1.json');
  assert.equal(r.model.params, 51570323328);  // model.safetensors.index.json: 103140646656 bytes of bf16
  assert.ok(r.results[0].step.total_ms > 0);
  // 52B parameters with Adam do not fit one 80 GB device, and the reply says so.
  assert.equal(r.results[0].memory.fits, false);
});

test('tensor parallelism splits a pure Mamba-2 model\'s mixers', () => {
  const r = json('predict', '--model', fixture('mamba-codestral-7b-v0.1.json'), '--hardware', 'h100-sxm5-80gb',
                 '--gpus', '16', '--tp', '8');
  assert.equal(r.results[0].plan.tp, 8);
  assert.ok(r.results[0].step.communication_total_ms > 0);
});

test('the zoo names the state-space models', () => {
  const ids = json('zoo').models.map((m) => m.id);
  for (const id of ['mamba-2.8b', 'mamba2-2.7b', 'jamba-v0.1']) assert.ok(ids.includes(id), id);
});

test('a bad state-space config is refused naming the field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-ssm-'));
  const doc = JSON.parse(readFileSync(fixture('mamba-codestral-7b-v0.1.json'), 'utf8'));
  doc.num_heads = 100;
  writeFileSync(join(dir, 'bad.json'), JSON.stringify(doc));
  const r = run('features', '--model', join(dir, 'bad.json'));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^prenet: error: .*num_heads/);
});

test('LoRA on a Mamba model adapts its mixers\' projections by PEFT\'s names, and attention\'s targets are refused', () => {
  const base = ['predict', '--model', fixture('falcon-mamba-7b.json'), '--hardware', 'rtx-4090', '--seq', '1024',
                '--finetune', 'lora'];
  // Falcon-Mamba-7B: 64 layers, d 4096, d_inner 8192, dt_rank 256, N 16; r 8 on in_proj, x_proj, out_proj.
  const r = json(...base, '--lora-targets', 'in_proj,x_proj,out_proj');
  assert.equal(r.settings.lora_targets, 'in,x,out');
  assert.equal(r.model.trainable_params, 64 * 8 * ((4096 + 2 * 8192) + (8192 + 256 + 2 * 16) + (8192 + 4096)));
  assert.ok(r.results[0].step.total_ms > 0);
  // PEFT's default (q_proj, v_proj) finds nothing in it: refused, naming the field and the Mamba targets.
  assertFails(base, /lora_targets|no projection LoRA can adapt.*in, x, dt, out \(Mamba mixers\)/);
});
