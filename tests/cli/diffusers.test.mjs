// diffusers configs through the CLI: the SDXL UNet's step on one accelerator, its latent size and frozen encoders
// in the reply's notes and settings, LoRA's trained count, an unsupported _class_name refused by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prenet = process.env.PRENET || join(root, 'build', 'prenet');
const run = (...args) => spawnSync(prenet, args, { encoding: 'utf8' });
const json = (...args) => {
  const r = run(...args, '--json');
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};
const sdxl = join(root, 'tests', 'fixtures', 'diffusers', 'sdxl_unet.json');

test('the SDXL UNet trains at 1024 px by default: its parameters, a step, the latents in the notes', () => {
  const r = json('predict', '--model', sdxl, '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16');
  assert.equal(r.model.trainable_params, 2567463684);
  assert.ok(r.model.params > r.model.trainable_params, 'the frozen encoders are counted in params');
  assert.equal(r.model.tokens_per_sample, 0);
  assert.equal(r.settings.image, 1024);
  const notes = r.model.import_notes.join('\n');
  assert.match(notes, /1024x1024 px/);
  assert.match(notes, /latents 4x128x128/);
  assert.match(notes, /frozen, forward only: VAE encoder/);
  const step = r.results[0].step;
  assert.ok(step.forward_ms > 0 && step.backward_ms > 0, JSON.stringify(step));
  assert.ok(r.results[0].memory.frozen_weights_bytes > 0);
});

test('--image sets the latents; a quarter of the pixels costs less than half the step', () => {
  const big = json('predict', '--model', sdxl, '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16');
  const small = json('predict', '--model', sdxl, '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16', '--image', '512');
  assert.equal(small.settings.image, 512);
  assert.match(small.model.import_notes.join('\n'), /latents 4x64x64/);
  assert.ok(small.model.forward_flops < 0.3 * big.model.forward_flops);
});

test('--encoders cached leaves the VAE and text encoders out of the step; the settings still say the image', () => {
  const run = json('predict', '--model', sdxl, '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16');
  const cached = json('predict', '--model', sdxl, '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16', '--encoders', 'cached');
  assert.equal(cached.model.params, 2567463684);
  assert.equal(cached.settings.image, 1024);
  assert.match(cached.model.import_notes.join('\n'), /--encoders cached/);
  assert.ok(cached.results[0].step.forward_ms < run.results[0].step.forward_ms);
  assert.equal(cached.results[0].memory.frozen_weights_bytes, 0);
  // The replies say which models have such encoders (the page shows the field from it), and no other.
  assert.deepEqual([run.model.pipeline_encoders, cached.model.pipeline_encoders], [true, true]);
  assert.equal(json('features', '--model', sdxl).pipeline_encoders, true);
  assert.equal(json('features', '--model', 'gpt2').pipeline_encoders, undefined);
});

test('LoRA on the attention projections trains diffusers\' DreamBooth LoRA count', () => {
  const r = json('features', '--model', sdxl, '--finetune', 'lora', '--lora-targets', 'q,k,v,o', '--lora-rank', '4',
    '--precision', 'bf16');
  assert.equal(r.trainable_params, 5806080);
  const table = run('predict', '--model', sdxl, '--hardware', 'rtx-4090', '--finetune', 'lora', '--lora-targets',
    'q,k,v,o', '--lora-rank', '4', '--precision', 'bf16');
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /5\.81M trained, lora/);
  // The settings line is whole, the import notes follow it one a line.
  const lines = table.stdout.split('\n');
  assert.match(lines[0], /predictor \S+$/);
  assert.match(lines[1], /^note: diffusers UNet2DConditionModel: trains the denoiser at 1024x1024 px/);
  assert.match(lines[3], /^note: not costed: .*MSE on the denoiser's output$/);
});

test('an unsupported _class_name names the supported ones', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'prenet-diffusers-')), 'config.json');
  writeFileSync(file, JSON.stringify({ _class_name: 'PixArtTransformer2DModel', num_layers: 28 }));
  const r = run('features', '--model', file);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /PixArtTransformer2DModel.*not supported.*UNet2DConditionModel.*FluxTransformer2DModel/s);
});
