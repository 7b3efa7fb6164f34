// Checks data/published/throughput.csv: it parses, models are zoo ids, hardware are catalogue ids,
// precision valid, throughput positive, sources are URLs. Needs build/prenet (skipped without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chipOf, deviceFamily, parseCsv, throughputArgs, VENDORS_CSV, withFamilyBlock } from '../../tools/compare_published.mjs';

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

// data/published/throughput_vendors.csv: the other vendors' rows and small pinned layouts. Same checks, plus: a model may
// be a config under data/published/configs/ that prenet builds, `gpus` is the pinned data-parallel width, and the
// overhead fit (tools/fit_overhead.mjs) never reads the file.
test('other-vendor throughput rows are well formed and stay out of the overhead fit', (t) => {
  if (!existsSync(prenet)) { t.skip(`${prenet} not found; build it with: bash scripts/build.sh native`); return; }
  const rows = parseCsv(readFileSync(VENDORS_CSV, 'utf8'));
  assert.ok(rows.length >= 10, `expected at least 10 rows, got ${rows.length}`);
  const zoo = ids(JSON.parse(execFileSync(prenet, ['zoo', '--json'], { encoding: 'utf8' })));
  const hw = ids(JSON.parse(execFileSync(prenet, ['hardware', '--json'], { encoding: 'utf8' })));
  const vendors = new Set();
  for (const [i, r] of rows.entries()) {
    const where = `row ${i + 2} (${r.model} on ${r.hardware})`;
    for (const c of ['model', 'hardware', 'precision', 'batch', 'seq', 'image', 'optimizer', 'grad_accum', 'checkpointing', 'gpus',
      'samples_per_s', 'framework', 'source_url', 'source_note', 'role']) assert.ok(c in r, `${where}: column ${c} missing`);
    assert.ok(zoo.has(r.model) || (r.model.startsWith('data/published/configs/') && existsSync(resolve(root, r.model))),
      `${where}: model is neither a zoo id nor a config under data/published/configs/`);
    assert.ok(hw.has(r.hardware), `${where}: hardware ${r.hardware} is not a catalogue id`);
    assert.ok(['fp32', 'tf32', 'fp16', 'bf16', 'fp8'].includes(r.precision), `${where}: precision ${r.precision}`);
    assert.ok(['sgd', 'adam', 'adamw', 'adafactor', 'lion'].includes(r.optimizer), `${where}: optimizer ${r.optimizer}`);
    assert.ok(Number.isInteger(Number(r.batch)) && Number(r.batch) > 0, `${where}: batch ${r.batch}`);
    assert.ok(Number.isInteger(Number(r.gpus)) && Number(r.gpus) >= 1, `${where}: gpus ${r.gpus}`);
    assert.ok(['', 'none', 'full'].includes(r.checkpointing), `${where}: checkpointing ${r.checkpointing}`);
    assert.ok(Number(r.samples_per_s) > 0, `${where}: samples_per_s ${r.samples_per_s}`);
    assert.ok(r.source_url.startsWith('http') && r.source_note.length > 0, `${where}: source`);
    assert.ok(['validate', 'excluded'].includes(r.role), `${where}: role must be validate or excluded`);
    vendors.add(deviceFamily(r.hardware).split(' ')[0]);
    // The row's own prediction runs (a pinned layout on several devices included).
    const out = JSON.parse(execFileSync(prenet, throughputArgs(r), { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 }));
    assert.ok(out.results[0].throughput.samples_per_s > 0, `${where}: no prediction`);
    if (Number(r.gpus) > 1) assert.equal(out.results[0].plan.dp, Number(r.gpus), `${where}: layout not pinned`);
  }
  assert.ok(vendors.size >= 3, `rows from at least 3 vendors, got ${[...vendors]}`);
  assert.doesNotMatch(readFileSync(resolve(root, 'tools/fit_overhead.mjs'), 'utf8'), /throughput_vendors/);
});

test('a pinned layout and checkpointing reach the prediction only when a row has them', () => {
  const base = { model: 'gpt2', hardware: 'gaudi2', batch: '16', precision: 'bf16', optimizer: 'adamw', framework: 'PyTorch', seq: '1024' };
  assert.ok(!throughputArgs(base).includes('--gpus') && !throughputArgs(base).includes('--checkpointing'));
  assert.deepEqual(throughputArgs({ ...base, checkpointing: 'full' }).slice(-2), ['--checkpointing', 'full']);
  const pinned = throughputArgs({ ...base, gpus: '8' });
  for (const [flag, value] of [['--gpus', '8'], ['--dp', '8'], ['--tp', '1'], ['--pp', '1'], ['--zero', '0'], ['--checkpointing', 'none']])
    assert.equal(pinned[pinned.indexOf(flag) + 1], value, flag);
});

test('the per-vendor block of docs/accuracy.md is inserted once and then replaced in place', () => {
  const doc = '# A\n\n## Whole training steps against published throughput\n\nPointer.\n\n## Calibration\n\nText.\n';
  const once = withFamilyBlock(doc, 'table one');
  assert.match(once, /Pointer\.\n\n<!-- per-vendor[^\n]*-->\ntable one\n<!-- end per-vendor x generation -->\n\n## Calibration/);
  const twice = withFamilyBlock(once, 'table two');
  assert.equal(twice, once.replace('table one', 'table two'));
  assert.equal(withFamilyBlock('# no such section\n', 'x'), '# no such section\n');
});
