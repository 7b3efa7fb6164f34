// The page's calibration (issue #28), its pure parts: web/js/calibration.js (storage, typed rows as the
// `calibrate` command's rows, files, the before/after and scales in words) and state.js's side (the document on
// every predict request, the command line's --calibration, the link's `cal=` only on opt-in, a link's document
// checked). The panel itself, against the wasm module and the CLI: tests/browser/calibration.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as C from '../../web/js/calibration.js';
import * as S from '../../web/js/state.js';
import { readJson } from '../../web/js/documents.js';
import { calibratedBadge } from '../../web/js/results/table.js';
import { buildRows } from '../../web/js/results/rows.js';
import { calibrationUrlProblem, queryProblems } from '../../web/js/widget-words.js';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/options.json', import.meta.url), 'utf8'));
// The fixture's table with the calibration row the API adds (type document, flag --calibration).
const table = S.optionTable({ ...fixture, options: [...fixture.options, { name: 'calibration', flag: '--calibration', type: 'document', commands: ['predict', 'kernels'] }] });

const DOC = {
  format: 'prenet-calibration',
  version: 1,
  prenet: '0.1.0',
  predictor: 'learned',
  devices: {
    'a100-sxm4-80gb': {
      rows: 3,
      scales: { gemm: 1.12, attention: 0.97, communication: 1, overhead: 1.3 },
      log_sd: { gemm: 0.05, attention: 0.1, communication: 0.2, overhead: 0.08 },
      before: { median_ape_pct: 14.2, worst_off_by: 1.25 },
      after: { median_ape_pct: 2.1, worst_off_by: 1.04 },
    },
  },
};

function memoryStorage() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k), map: m };
}

test('the document rides on every predict request, and only there', () => {
  const s = { ...S.fresh(table), hw: ['a100-sxm4-80gb'] };
  assert.equal('calibration' in S.predictRequest(s, table), false, 'none without a calibration');
  s.calibration = DOC;
  assert.equal(S.predictRequest(s, table).calibration, DOC);
  assert.equal('calibration' in S.featuresRequest(s, table), false, 'features takes none');
});

test('the command line names the exported file: --calibration calibration.json', () => {
  const s = { ...S.fresh(table), hw: ['a100-sxm4-80gb'], calibration: DOC };
  const line = S.commandLine(s, table);
  assert.match(line, / --calibration calibration\.json /);
  assert.equal(S.CALIBRATION_FILE, 'calibration.json');
  assert.doesNotMatch(S.commandLine({ ...s, calibration: null }, table), /--calibration/);
});

test('links carry the calibration only on opt-in, and read it back checked', async () => {
  const s = { ...S.fresh(table), calibration: DOC };
  assert.equal(await S.toHash(s, table), '', 'not in the link by default');
  const hash = await S.toHash({ ...s, shareCal: true }, table);
  assert.match(hash, /^#cal=/);
  const back = await S.fromHash(hash, table);
  assert.deepEqual(back.calibration, DOC);
  assert.equal(back.shareCal, true, 'a link that carried it keeps carrying it');
  assert.equal(await S.toHash({ ...S.fresh(table), shareCal: true }, table), '', 'the opt-in alone carries nothing');
  // A damaged or foreign document: a note, no calibration.
  const notes = [];
  const bad = await S.fromHash(`#cal=${await S.pack({ ...DOC, format: 'something-else' })}`, table, notes);
  assert.equal(bad.calibration, null);
  assert.match(notes.join(' '), /calibration could not be used \(it is not a calibration/);
  const notes2 = [];
  assert.equal((await S.fromHash('#cal=zzzz', table, notes2)).calibration, null);
  assert.equal(notes2.length, 1);
});

test('calibrationProblem: the shape only (format, version, devices by id)', () => {
  assert.equal(S.calibrationProblem(DOC), null);
  assert.match(S.calibrationProblem([]), /not a JSON object/);
  assert.match(S.calibrationProblem({ ...DOC, version: 2 }), /version 2/);
  assert.match(S.calibrationProblem({ ...DOC, devices: {} }), /names no accelerator/);
  assert.match(S.calibrationProblem({ ...DOC, devices: { '<b>': {} } }), /not an id/);
  assert.match(S.calibrationProblem({ ...DOC, devices: null }), /no "devices"/);
});

test('storage: saved, read back with its rows, recognised, forgotten; junk reads as none', () => {
  const st = memoryStorage();
  assert.equal(C.loadSaved(st), null);
  const rows = [{ row: 1, hardware: 'a100-sxm4-80gb', measured_ms: 100 }];
  assert.equal(C.save(st, DOC, rows), true);
  assert.deepEqual(C.loadSaved(st), { doc: DOC, rows });
  assert.equal(C.isSaved(st, structuredClone(DOC)), true);
  assert.equal(C.isSaved(st, { ...DOC, prenet: 'other' }), false);
  C.save(st, DOC);
  assert.equal(C.loadSaved(st).rows, null, 'an imported document has no rows');
  C.forget(st);
  assert.equal(C.loadSaved(st), null);
  st.setItem(C.CAL_KEY, '{not json');
  assert.equal(C.loadSaved(st), null);
  st.setItem(C.CAL_KEY, JSON.stringify({ format: 'x' }));
  assert.equal(C.loadSaved(st), null);
  const full = { ...memoryStorage(), setItem: () => { throw new Error('QuotaExceededError'); } };
  assert.equal(C.save(full, DOC), false);
  assert.equal(C.exportText(DOC), `${JSON.stringify(DOC, null, 2)}\n`);
});

test('typed rows become the calibrate command\'s rows: the page\'s model for a blank one, numbers as numbers', () => {
  const typed = [
    { model: '', hardware: 'a100-sxm4-80gb', batch: '8', seq: '', precision: 'bf16', measured_ms: '123.5', measures: 'step' },
    { model: 'bert-base', hardware: 't4', batch: '4', seq: '128', precision: '', measured_ms: '40', measures: 'forward' },
    { model: '', hardware: '', batch: '', seq: '', precision: '', measured_ms: '', measures: 'step' }, // untouched: skipped
  ];
  assert.deepEqual(C.measurementRows(typed, 'gpt2').rows, [
    { model: 'gpt2', hardware: 'a100-sxm4-80gb', batch: 8, precision: 'bf16', measured_ms: 123.5, measures: 'step' },
    { model: 'bert-base', hardware: 't4', batch: 4, seq: 128, measured_ms: 40, measures: 'forward' },
  ]);
  const doc = { layers: [] };
  assert.equal(C.measurementRows(typed.slice(0, 1), doc).rows[0].model, doc, 'a model document as it is');
  assert.deepEqual(C.measurementRows([{ ...typed[0], measured_ms: '' , batch: '8' }], 'gpt2').error, { row: 1, field: 'measured_ms', message: 'Row 1: give the measured time in milliseconds.' });
  assert.equal(C.measurementRows([{ ...typed[0], hardware: '' }], 'gpt2').error.field, 'hardware');
  assert.match(C.measurementRows([], 'gpt2').error.message, /at least one/);
  // Text the page cannot read as a number goes as it is: the API names the row and field.
  assert.equal(C.measurementRows([{ ...typed[0], batch: 'eight' }], 'gpt2').rows[0].batch, 'eight');
});

test('measurementsCsv: the columns any row has, quoted where needed; a document as its file', () => {
  const csv = C.measurementsCsv([
    { model: 'gpt2', hardware: 'a100-sxm4-80gb', batch: 8, measured_ms: 100, measures: 'step' },
    { model: { layers: [] }, hardware: 't4', batch: 2, seq: 64, measured_ms: 5.5, measures: 'forward' },
  ], 'my,model.json');
  assert.equal(csv, 'model,hardware,batch,seq,measured_ms,measures\ngpt2,a100-sxm4-80gb,8,,100,step\n"my,model.json",t4,2,64,5.5,forward\n');
});

test('a file: CSV text, a JSON list of rows, a profiler trace, or a calibration document', () => {
  const rj = (t) => readJson(t, { json_depth: 64, document_bytes: 1e6 }, 'x');
  assert.deepEqual(C.readMeasurementsFile('m.csv', 'model,hardware\n', rj), { measurements: 'model,hardware\n' });
  assert.deepEqual(C.readMeasurementsFile('m.json', '[{"model":"gpt2"}]', rj), { measurements: [{ model: 'gpt2' }] });
  assert.deepEqual(C.readMeasurementsFile('c.json', JSON.stringify(DOC), rj), { calibration: DOC });
  const trace = { traceEvents: [{ name: 'ampere_sgemm', ph: 'X', dur: 10 }] };
  assert.deepEqual(C.readMeasurementsFile('trace.json', JSON.stringify(trace), rj), { trace });
  assert.match(C.readMeasurementsFile('c.json', JSON.stringify({ ...DOC, version: 9 }), rj).error, /not a calibration the page can use: its version 9/);
  assert.match(C.readMeasurementsFile('x.json', '{"a":1}', rj).error, /neither measurements/);
  assert.match(C.readMeasurementsFile('x.json', '{"a":', rj).error, /not valid JSON/);
});

test('adding to a calibration keeps the earlier rows of the accelerators the reply kept, then its own', () => {
  const earlier = [{ row: 1, hardware: 'a100' }, { row: 2, hardware: 'h100' }];
  const reply = { rows: [{ row: 1, hardware: 'h100' }], kept_devices: ['a100'], replaced_devices: ['h100'] };
  assert.deepEqual(C.mergedRows(earlier, reply), [{ row: 1, hardware: 'a100' }, { row: 1, hardware: 'h100' }]);
  assert.deepEqual(C.mergedRows(null, { rows: [{ row: 1, hardware: 't4' }], kept_devices: [] }), [{ row: 1, hardware: 't4' }]);
  assert.equal(C.mergedRows(earlier, { rows: [], kept_devices: [] }), null);
});

test('in words: the status, each row before and after, the scales per accelerator (text escaped)', () => {
  const names = (id) => ({ 'a100-sxm4-80gb': 'NVIDIA A100 <SXM4>' })[id] ?? id;
  assert.match(C.statusHtml(null, names), /No calibration/);
  const status = C.statusHtml(DOC, names);
  assert.match(status, /<strong>NVIDIA A100 &lt;SXM4&gt;<\/strong> \(3 rows\)/);
  const rows = [{ row: 1, hardware: 'a100-sxm4-80gb', measures: 'step', measured_ms: 120, predicted_ms_before: 100, predicted_ms_after: 118, ape_before_pct: 16.6667, ape_after_pct: 1.6667 }];
  const html = C.beforeAfterHtml(rows, names);
  assert.match(html, /data-col="before" data-value="100"><span class="v">100 ms<\/span><span class="range" data-col="ape-before" data-value="16.6667">off 16\.7%/);
  assert.match(html, /data-col="after" data-value="118"><span class="v">118 ms<\/span>/);
  assert.match(html, /<span class="range">A100 &lt;SXM4&gt;, a whole training step/);
  assert.equal(C.beforeAfterHtml(null), '');
  // A trace's rows: a family's kernels, and whether they were matched by their shapes or by name.
  assert.equal(C.measuredWords({ measures: 'kernels:gemm', matched_by: 'shape', operators: 3 }), 'gemm kernels, by shape (3 shapes)');
  assert.equal(C.measuredWords({ measures: 'kernels:norm', matched_by: 'name', operators: null }), 'norm kernels, by name');
  assert.match(C.beforeAfterHtml([{ ...rows[0], measures: 'kernels:attention', matched_by: 'shape', operators: 1 }], names), /A100 &lt;SXM4&gt;, attention kernels, by shape \(1 shape\)/);
  const scales = C.scalesHtml(DOC, names);
  assert.match(scales, /data-scale="gemm"><span>gemm<\/span> <strong>× 1\.12<\/strong>/);
  assert.match(scales, /Median error 14\.2% → 2\.1%; worst off by 1\.25× → 1\.04×/);
  assert.doesNotMatch(scales, /<SXM4>/);
  assert.doesNotMatch(scales, /data-scale="communication"/, 'a scale left at 1 is not listed');
  assert.match(scales, /the others stay at 1/);
  // The CLI's form: the sd from the log_covariance diagonal over scale_keys.
  const cov = { ...DOC, scale_keys: ['gemm', 'overhead'], devices: { x: { rows: 1, scales: { gemm: 1.1, overhead: 1 }, log_covariance: [[0.01, 0], [0, 0.04]] } } };
  assert.deepEqual(C.devices(cov)[0].log_sd, { gemm: 0.1, overhead: 0.2 });
  assert.match(C.scalesHtml(cov), /× 1\.1<\/strong><span class="hint"> ±11%/);
});

test('the typed rows as fields: one labelled control per column, the known accelerators, the page model as placeholder', () => {
  const html = C.rowsTableHtml([C.blankRow({ hardware: 'h100', batch: 8, precision: 'bf16' })], {
    hardware: [{ id: 'h100', name: 'H100' }, { id: 't4', name: 'T4' }],
    precisions: ['fp32', 'bf16'],
    pageModel: 'this page’s model (gpt2)',
  });
  for (const key of C.COLUMNS) assert.match(html, new RegExp(`<label class="field[^"]*" for="cal-${key}-0">`), key);
  assert.match(html, /<option value="h100" selected>H100<\/option>/);
  assert.match(html, /<option value="bf16" selected>bf16<\/option>/);
  assert.match(html, /placeholder="this page’s model \(gpt2\)"/);
  assert.match(html, /data-remove-row="0"/);
});

test('results: a calibrated result is marked, with the rows it rests on', () => {
  const reply = { settings: {}, results: [
    { hardware: 'a', name: 'A', step: { total_ms: 1 }, calibrated: true, calibration_rows: 3 },
    { hardware: 'b', name: 'B', step: { total_ms: 1 }, calibrated: false, calibration_rows: null },
  ] };
  const [a, b] = buildRows(reply, { hardware: new Map() });
  assert.deepEqual([a.calibrated, a.calibrationRows, b.calibrated, b.calibrationRows], [true, 3, false, null]);
  assert.match(calibratedBadge(a), /class="badge calibrated" title="Calibrated with 3 of your measurements on this accelerator/);
  assert.equal(calibratedBadge(b), '');
});

test('the widget\'s calibration attribute: a URL on its own site only', () => {
  const origin = 'https://example.org';
  assert.equal(calibrationUrlProblem('calibration.json', origin), null);
  assert.equal(calibrationUrlProblem('/prenet/cal/mine.json', origin), null);
  assert.equal(calibrationUrlProblem('https://example.org/c.json', origin), null);
  assert.match(calibrationUrlProblem('https://evil.example/c.json', origin), /not on this site/);
  assert.match(calibrationUrlProblem('data:application/json,{}', origin), /not on this site/);
  assert.match(calibrationUrlProblem('//evil.example/c.json', origin), /not on this site/);
  assert.deepEqual(queryProblems(new URLSearchParams('model=gpt2&calibration=c.json'), table, origin), []);
  assert.match(queryProblems(new URLSearchParams('calibration=https://evil.example/c.json'), table, origin)[0], /^calibration=https:\/\/evil.example\/c.json: not on this site/);
});
