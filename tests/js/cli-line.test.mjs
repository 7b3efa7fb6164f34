// The `prenet predict ... --json` line the page shows (web/js/state.js commandLine): one flag per request
// key, taken from the option table's `flag` column; files for documents and custom sheets; shell quoting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as S from '../../web/js/state.js';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/options.json', import.meta.url), 'utf8'));
const table = S.optionTable(fixture);
const SHEET = { id: 'custom-lab gpu', name: 'Lab GPU' };
const line = (patch) => S.commandLine(Object.assign(S.fresh(table), patch), table);

test('the default line: the model, every accelerator, the page defaults, both budgets', () => {
  assert.equal(line({}), 'prenet predict --model gpt2 --hardware all --batch 8 --precision bf16 --tokens 1000000000 --samples 1281167 --epochs 1 --json');
});

test("every request key with a flag becomes that flag: a switch alone, a value after it", () => {
  const text = line({ grad_accum: 4, checkpointing: true, optimizer_impl: 'foreach', price_per_hour: 2.5, input_samples_per_s: 800, attention: 'math', predictor: 'roofline', budget: 'tokens', tokens: 2e9 });
  assert.match(text, / --grad-accum 4 /);
  assert.match(text, / --checkpointing /);
  assert.doesNotMatch(text, /--checkpointing \S*true/);
  assert.match(text, / --optimizer-impl foreach /);
  assert.match(text, / --price-per-hour 2\.5 /);
  assert.match(text, / --input-samples-per-s 800 /);
  assert.match(text, / --attention math /);
  assert.match(text, / --predictor roofline /);
  assert.match(text, / --tokens 2000000000 /);
  assert.doesNotMatch(text, /--samples|--epochs/);
  // Each request key maps to its row's flag; nothing else appears.
  const state = Object.assign(S.fresh(table), { grad_accum: 4, checkpointing: true });
  const request = S.predictRequest(state, table);
  const flags = S.commandLine(state, table).split(' ').filter((w) => w.startsWith('--'));
  const expected = Object.keys(request).filter((k) => k !== 'command').map((k) => table.byName.get(k).flag).filter(Boolean);
  assert.deepEqual(flags, [...expected, '--json']);
});

test('the flags come from the table: a renamed flag is followed', () => {
  const renamed = S.optionTable(fixture.options.map((r) => (r.name === 'grad_accum' ? { ...r, flag: '--accumulate' } : r)));
  const text = S.commandLine(Object.assign(S.fresh(renamed), { grad_accum: 3 }), renamed);
  assert.match(text, / --accumulate 3 /);
  assert.doesNotMatch(text, /--grad-accum/);
});

test('documents and custom sheets are files beside the command; API-only keys have no flag', () => {
  const text = line({ source: 'file', doc: { layers: [] }, docName: 'my model (v2).json', hw: ['t4'], custom: [SHEET] });
  assert.match(text, /^prenet predict --model my-model-v2-\.json --hardware t4,custom-lab-gpu\.json /);
  assert.doesNotMatch(text, /custom_hardware|custom-hardware/);
  assert.match(line({ source: 'layers', doc: { layers: [] } }), /--model model\.json /);
  assert.match(line({ hw: [], custom: [SHEET] }), /--hardware custom-lab-gpu\.json /);
});

test('words the shell would split are quoted', () => {
  assert.match(line({ model: "bob's model" }), /--model 'bob'\\''s model' /);
  assert.match(line({ model: 'gpt2-medium' }), /--model gpt2-medium /);
});
