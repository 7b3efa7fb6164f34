// Checks data/published/throughput.csv: it parses, models are zoo ids, hardware are catalogue ids,
// precision valid, throughput positive, sources are URLs. Needs build/prenet (skipped without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chipOf, parseCsv } from '../../tools/compare_published.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const prenet = resolve(root, process.env.PRENET ?? 'build/prenet');
const csv = resolve(root, 'data/published/throughput.csv');
const ids = (json) => {
  const list = Array.isArray(json) ? json : Object.values(json).find(Array.isArray) ?? [];
  return new Set(list.map((x) => (typeof x === 'string' ? x : x.id)));
};

test('published throughput rows are well formed', (t) => {
  if (!existsSync(prenet)) { t.skip(`${prenet} not found; build it with: bash scripts/build.sh native`); return; }
  const rows = parseCsv(readFileSync(csv, 'utf8'));
  assert.ok(rows.length >= 10, `expected at least 10 rows, got ${rows.length}`);
  const zoo = ids(JSON.parse(execFileSync(prenet, ['zoo', '--json'], { encoding: 'utf8' })));
  const hw = ids(JSON.parse(execFileSync(prenet, ['hardware', '--json'], { encoding: 'utf8' })));
  assert.ok(zoo.size > 0 && hw.size > 0, 'zoo and hardware lists are not empty');
  const columns = ['model', 'hardware', 'precision', 'batch', 'seq', 'image', 'optimizer', 'grad_accum', 'samples_per_s',
    'framework', 'source_url', 'source_note', 'role'];
  for (const [i, r] of rows.entries()) {
    const where = `row ${i + 2} (${r.model} on ${r.hardware})`;
    for (const c of columns) assert.ok(c in r, `${where}: column ${c} missing`);
    assert.ok(zoo.has(r.model), `${where}: model ${r.model} is not a zoo id`);
    assert.ok(hw.has(r.hardware), `${where}: hardware ${r.hardware} is not a catalogue id`);
    assert.ok(['fp32', 'tf32', 'fp16', 'bf16', 'fp8'].includes(r.precision), `${where}: precision ${r.precision}`);
    assert.ok(['sgd', 'adam', 'adamw', 'adafactor', 'lion'].includes(r.optimizer), `${where}: optimizer ${r.optimizer}`);
    assert.ok(Number.isInteger(Number(r.batch)) && Number(r.batch) > 0, `${where}: batch ${r.batch}`);
    assert.ok(r.grad_accum === '' || (Number.isInteger(Number(r.grad_accum)) && Number(r.grad_accum) > 0),
      `${where}: grad_accum ${r.grad_accum}`);
    assert.ok(Number(r.samples_per_s) > 0, `${where}: samples_per_s ${r.samples_per_s}`);
    assert.ok(r.source_url.startsWith('http'), `${where}: source_url ${r.source_url}`);
    assert.ok(r.source_note.length > 0, `${where}: source_note empty`);
    assert.ok(['validate', 'excluded'].includes(r.role), `${where}: role must be validate or excluded (published figures are never fitted on)`);
    if (r.role === 'excluded') assert.match(r.source_note, /EXCLUDED/, `${where}: an excluded row says why`);
  }
});

test('a chip is the leading token of an id when it names a part', () => {
  assert.equal(chipOf('v100-sxm2-16gb'), 'v100');
  assert.equal(chipOf('a100-pcie-40gb'), 'a100');
  assert.equal(chipOf('t4'), 't4');
  assert.equal(chipOf('mi300x'), 'mi300x');
  assert.equal(chipOf('rtx-3090'), 'rtx-3090');
  assert.equal(chipOf('titan-x-pascal'), 'titan-x-pascal');
});
