// The Keras and Hugging Face importers through the CLI: counts, the config's torch_dtype as the default
// precision (and where it came from), import notes in JSON and in the tables, bad files as clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { fixture, json, run } from './helpers.mjs';

test('a Keras to_json() file imports with the exporter\'s count', () => {
  const f = json('features', '--model', fixture('keras', 'mnist-functional-keras2.1.1.json'));
  assert.equal(f.params, 1199882);
  assert.deepEqual(f.import_notes, []);
  assert.equal(json('features', '--model', fixture('keras', 'embedding-gru-tfjs.json')).params, 2300);
});

test('a config\'s torch_dtype is the default precision; --precision wins, and the source is echoed', () => {
  const model = fixture('hf', 'qwen3-0.6b.json');
  const f = json('features', '--model', model);
  assert.equal(f.params, 596049920);
  assert.equal(f.settings.precision, 'bf16');
  assert.equal(f.settings.precision_source, 'config.json torch_dtype');
  const asked = json('features', '--model', model, '--precision', 'fp32');
  assert.equal(asked.settings.precision, 'fp32');
  assert.equal(asked.settings.precision_source, '--precision');
  assert.equal(json('features', '--model', 'gpt2').settings.precision_source, 'default');
  const p = run('predict', '--model', model, '--hardware', 'h100-sxm5-80gb');
  assert.equal(p.status, 0, p.stderr);
  assert.match(p.stdout, /bf16.*torch_dtype/);
});

test('what an import leaves out is in the result and in the table', () => {
  const clip = json('features', '--model', fixture('hf', 'clip-vit-base-patch32.json'));
  assert.equal(clip.params, 87456000);
  assert.match(clip.import_notes[0], /text tower/);
  const dir = mkdtempSync(join(tmpdir(), 'prenet-keras-'));
  const doc = JSON.parse(readFileSync(fixture('keras', 'mnist-sequential-keras2.1.1.json'), 'utf8'));
  doc.config.splice(4, 0, { class_name: 'MyCustomLayer', config: { name: 'mystery' } });
  writeFileSync(join(dir, 'custom.json'), JSON.stringify(doc));
  const f = json('features', '--model', join(dir, 'custom.json'));
  assert.equal(f.params, 1199882);
  assert.match(f.import_notes[0], /mystery.*MyCustomLayer.*has no PreNeT kind: costed as memory-bound/);
  // Counted and costed as an ONNX graph's unknown ops are: one memory-bound layer of its tensors.
  assert.deepEqual(f.unknown_ops, [{ op: 'MyCustomLayer', count: 1 }]);
  const mystery = f.layers.find((l) => l.name === 'mystery');
  assert.equal(mystery?.kind, 'memory_bound');
  assert.ok(mystery.forward_flops > 0, 'its work is counted');
  const table = run('features', '--model', join(dir, 'custom.json'));
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /note: layer 'mystery'/);
  const predicted = json('predict', '--model', join(dir, 'custom.json'), '--hardware', 'h100-sxm5-80gb');
  assert.match(predicted.model.import_notes[0], /MyCustomLayer/);
  // The predict table: the settings on one line (ending with the predictor), each note on a line of its own.
  const lines = run('predict', '--model', join(dir, 'custom.json'), '--hardware', 'h100-sxm5-80gb').stdout.split('\n');
  assert.match(lines[0], /, predictor \w+$/);
  assert.match(lines[1], /^note: layer 'mystery'.*\]$/);
});

test('bad Keras and HF files are clear errors, not crashes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-bad-'));
  const cases = [
    [{ class_name: 'Sequential', config: { layers: [{ class_name: 'Dense', config: { units: 4 } }] } }, /input shape/],
    [{ class_name: 'Functional', config: { layers: [{ class_name: 'Dense', name: 'd', config: { units: 4 }, inbound_nodes: [[['x', 0, 0, {}]]] }] } }, /'x'/],
    [{ model_type: 'deepseek_v3', hidden_size: 64 }, /num_hidden_layers/],
    [{ model_type: 'qwen3', torch_dtype: 'int3' }, /torch_dtype/],
  ];
  cases.forEach(([doc, message], i) => {
    const file = join(dir, `bad${i}.json`);
    writeFileSync(file, JSON.stringify(doc));
    const r = run('features', '--model', file);
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, message);
  });
});
