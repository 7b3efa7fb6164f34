// Vision-language configs through the CLI: the count, the sequence (text and image tokens) and the image assumed
// in the reply, --image changing the image tokens, and sizes the model cannot take as errors naming the option.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { fixture, json, run } from './helpers.mjs';
const llava = fixture('hf', 'llava-1.5-7b-hf.json');
const qwen = fixture('hf', 'qwen2-vl-2b-instruct.json');

test('a LLaVA config imports whole: tower, projector and language model, with the image tokens said', () => {
  const f = json('features', '--model', llava, '--seq', '2048');
  assert.equal(f.params, 7063427072);
  assert.equal(f.settings.seq, 2048);
  const note = f.import_notes.find((n) => /image per sample/.test(n));
  assert.match(note, /336 x 336 image per sample: 576 image tokens/);
  assert.match(note, /2048 tokens holds them and 1472 text tokens/);
  const names = f.layers.map((l) => l.name);
  assert.ok(names.some((n) => /projector\.linear_1/.test(n)), names.slice(0, 20).join(' '));
  const p = run('predict', '--model', llava, '--hardware', 'h100-sxm5-80gb', '--seq', '2048');
  assert.equal(p.status, 0, p.stderr);
  assert.match(p.stdout, /576 image tokens/);
});

test('--image changes the image tokens of a model that takes any size', () => {
  const small = json('features', '--model', qwen, '--seq', '4096', '--image', '448');
  const large = json('features', '--model', qwen, '--seq', '4096', '--image', '896');
  assert.ok(small.import_notes.some((n) => /256 image tokens/.test(n)));
  assert.ok(large.import_notes.some((n) => /1024 image tokens/.test(n)));
  assert.equal(small.params, large.params);
});

test('a size the model cannot take names the option', () => {
  const image = run('features', '--model', llava, '--image', '448', '--json');
  assert.notEqual(image.status, 0);
  assert.match(image.stdout + image.stderr, /image.*resizes every image to its tower's 336 px/s);
  const seq = run('features', '--model', llava, '--seq', '512', '--json');
  assert.notEqual(seq.status, 0);
  assert.match(seq.stdout + seq.stderr, /seq.*leaves no room for text beside the 576 image tokens/s);
});

test('fine-tuning\'s shorter default sequence applies unless the image tokens fill it', () => {
  assert.equal(json('features', '--model', llava, '--finetune', 'lora').settings.seq, 2048);
  // Idefics3's 2873 image tokens at its default 1456 px leave no room in 2048: its own 8192 stays.
  const idefics = fixture('hf', 'idefics3-8b-llama3.json');
  assert.equal(json('features', '--model', idefics, '--finetune', 'lora').settings.seq, 8192);
});

test('freezing the tower trains the projector and the language model', () => {
  const f = json('features', '--model', llava, '--seq', '2048', '--finetune', 'freeze', '--freeze', 'vision_tower');
  assert.equal(f.params, 7063427072);
  assert.equal(f.trainable_params, 7063427072 - 303507456);  // CLIP ViT-L/14-336's 303,507,456 frozen
});
