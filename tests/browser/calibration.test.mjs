// The "Calibrate" panel (issue #28) in headless Chromium: a measurements CSV chosen on the page goes through the
// worker to the wasm module's `calibrate`; the page shows each row before and after and the scales, and the
// numbers are the CLI's with the same file (`prenet calibrate --measurements same.csv --out x.json`, then
// `prenet predict ... --calibration x.json --json`). The results are corrected at once and marked; the
// calibration survives a reload, is removed by "Remove calibration", is exported and imported as the same JSON,
// keeps its accelerators when another's measurements are added (as `prenet calibrate --calibration` keeps them),
// goes into a link only when ticked, and the widget applies one from its `calibration` attribute.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as F from '../../web/js/format.js';
import { TIME_TOLERANCE, cli, cliBinary, close, compareReplies, dist, settled, shot, splitCommand, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 900 } });

const HW = 'a100-sxm4-80gb';
const OTHER = 't4';
// Three measured steps of GPT-2 on an A100, about 1.2 times the uncalibrated prediction.
const ROWS = [
  { batch: 4, measured_ms: 27.5 },
  { batch: 8, measured_ms: 46 },
  { batch: 16, measured_ms: 85 },
];
const CSV = `model,hardware,batch,seq,precision,measured_ms,measures\n${ROWS.map((r) => `gpt2,${HW},${r.batch},512,bf16,${r.measured_ms},step`).join('\n')}\n`;

const dir = mkdtempSync(join(tmpdir(), 'prenet-calibration-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const csvFile = join(dir, 'same.csv');
writeFileSync(csvFile, CSV);

/** `prenet calibrate --measurements FILE --out OUT`: the document it writes. */
function cliCalibrate(measurements, out) {
  const r = spawnSync(cliBinary, ['calibrate', '--measurements', measurements, '--out', out], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `prenet calibrate exited ${r.status}: ${r.stderr}`);
  return JSON.parse(readFileSync(out, 'utf8'));
}

/** Two calibration documents agree: the same keys and strings, numbers to the times' tolerance. */
function sameDoc(page, native, path = 'calibration') {
  if (typeof native === 'number') return close(page, native, path, TIME_TOLERANCE);
  if (native === null || typeof native !== 'object') return assert.equal(page, native, path);
  assert.ok(page && typeof page === 'object', `${path}: page has ${JSON.stringify(page)}`);
  assert.deepEqual(Object.keys(page).sort(), Object.keys(native).sort(), `${path}: keys`);
  for (const key of Object.keys(native)) sameDoc(page[key], native[key], `${path}.${key}`);
}

const stepMs = (args) => cli(['predict', ...args, '--json']).results[0].step.total_ms;
const rowArgs = (r) => ['--model', 'gpt2', '--hardware', HW, '--batch', String(r.batch), '--seq', '512', '--precision', 'bf16'];
const state = (page) => page.evaluate(() => window.prenet.state());
const predict = (page) => page.evaluate(() => window.prenet.last().predict);
const calibratedIds = (page) => page.$$eval('#results-table tbody tr', (trs) => trs.filter((tr) => tr.querySelector('.badge.calibrated')).map((tr) => tr.dataset.id));

async function chooseFile(page, file) {
  await page.click('#tab-cal-file');
  await page.setInputFiles('#cal-file', file);
}

describe('the Calibrate panel', () => {
  test('a measurements CSV: before/after per row, the CLI\'s numbers, corrected results at once, kept across a reload, removed', async () => {
    const h = harness();
    const page = await h.page(`index.html#hw=${HW},${OTHER}`);
    await settled(page);
    assert.equal(await page.locator('#cal-status').textContent(), 'No calibration: the results are the calculator’s own predictions.');
    assert.deepEqual(await calibratedIds(page), []);
    const uncalibrated = await predict(page);

    await chooseFile(page, csvFile);
    await page.waitForSelector('#cal-before-after tbody tr');
    await settled(page);
    await page.waitForFunction(() => window.prenet.last().predict.results.some((r) => r.calibrated));
    assert.match(await page.textContent('#cal-file-status'), /Calibrated with 3 measurements from same\.csv/);
    await shot(page, 'calibration-panel');

    // The same file through the CLI: the same document, and each row's before and after are its predictions
    // without and with it.
    const out = join(dir, 'x.json');
    const native = cliCalibrate(csvFile, out);
    const mine = (await state(page)).calibration;
    sameDoc(mine, native);
    assert.equal(native.devices[HW].rows, 3);
    const reply = await page.evaluate(() => window.prenet.last().calibrate);
    assert.equal(reply.rows.length, 3);
    const cells = await page.$$eval('#cal-before-after tbody tr', (trs) =>
      trs.map((tr) => Object.fromEntries([...tr.querySelectorAll('[data-col]')].map((el) => [el.dataset.col, { text: (el.querySelector('.v') ?? el).textContent.trim(), value: Number(el.dataset.value) }]))),
    );
    for (const [i, r] of ROWS.entries()) {
      const before = stepMs(rowArgs(r));
      const after = stepMs([...rowArgs(r), '--calibration', out]);
      const row = reply.rows[i];
      assert.equal(row.row, i + 1);
      assert.equal(row.hardware, HW);
      assert.equal(row.measured_ms, r.measured_ms);
      close(row.predicted_ms_before, before, `row ${i + 1} before`, TIME_TOLERANCE);
      close(row.predicted_ms_after, after, `row ${i + 1} after`, TIME_TOLERANCE);
      close(row.ape_before_pct, (Math.abs(before - r.measured_ms) / r.measured_ms) * 100, `row ${i + 1} APE before`, 1e-6);
      close(row.ape_after_pct, (Math.abs(after - r.measured_ms) / r.measured_ms) * 100, `row ${i + 1} APE after`, 1e-6);
      // What the page shows is those numbers.
      assert.equal(cells[i].measured.text, F.ms(r.measured_ms));
      assert.equal(cells[i].before.text, F.ms(before), `row ${i + 1}: shown before`);
      assert.equal(cells[i].after.text, F.ms(after), `row ${i + 1}: shown after`);
      close(cells[i].after.value, after, `row ${i + 1}: the after cell's value`, TIME_TOLERANCE);
      close(cells[i]['ape-after'].value, row.ape_after_pct, `row ${i + 1}: the APE shown`, 0);
    }
    // The fit improves the rows it was made from.
    const ape = (k) => reply.rows.map((r) => r[k]).sort((a, b) => a - b)[1];
    assert.ok(ape('ape_after_pct') < ape('ape_before_pct'), 'median APE after < before');
    // The scales per accelerator are shown.
    const families = await page.$$eval(`#cal-scales [data-device="${HW}"] [data-scale]`, (lis) => lis.map((li) => li.dataset.scale));
    assert.deepEqual(families.sort(), Object.keys(native.devices[HW].scales).filter((k) => native.devices[HW].scales[k] !== 1).sort());
    assert.ok(families.includes('gemm'));

    // The results are corrected at once: the A100 is calibrated and marked, the T4 is unchanged, bit for bit.
    const calibrated = await predict(page);
    const byId = (doc, id) => doc.results.find((r) => r.hardware === id);
    assert.equal(byId(calibrated, HW).calibrated, true);
    assert.equal(byId(calibrated, HW).calibration_rows, 3);
    assert.equal(byId(calibrated, OTHER).calibrated, false);
    assert.equal(byId(calibrated, OTHER).calibration_rows, null);
    assert.equal(byId(calibrated, OTHER).step.total_ms, byId(uncalibrated, OTHER).step.total_ms);
    assert.notEqual(byId(calibrated, HW).step.total_ms, byId(uncalibrated, HW).step.total_ms);
    assert.deepEqual(await calibratedIds(page), [HW]);
    assert.match(await page.locator(`#results-table tr[data-id="${HW}"] .badge.calibrated`).getAttribute('title'), /Calibrated with 3 of your measurements/);
    // The page's command line names the calibration file and prints the page's numbers with the CLI's document.
    const args = splitCommand(await page.locator('#cli').textContent());
    const at = args.indexOf('--calibration');
    assert.ok(at > 0 && args[at + 1] === 'calibration.json', `the command line has --calibration calibration.json: ${args.join(' ')}`);
    args[at + 1] = out;
    compareReplies(calibrated, cli(args.slice(1)), 'calibrated page vs CLI');
    assert.equal(await page.locator('#cli-files button[data-save-calibration]').textContent(), 'calibration.json');

    // Exported as the same JSON.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#cal-export')]);
    assert.equal(download.suggestedFilename(), 'calibration.json');
    assert.deepEqual(JSON.parse(readFileSync(await download.path(), 'utf8')), mine);

    // Kept across a reload: the same calibration, the same marks, the before/after still shown.
    assert.doesNotMatch(page.url(), /cal=/, 'not in the link without the opt-in');
    await page.reload();
    await settled(page);
    assert.deepEqual((await state(page)).calibration, mine);
    assert.deepEqual(await calibratedIds(page), [HW]);
    assert.equal(await page.locator('#cal-before-after tbody tr').count(), 3);
    assert.match(await page.textContent('#cal-status'), /Calibrated with your measurements: .*A100.* \(3 rows\)/);
    assert.equal(await page.locator('#cal-keep').isHidden(), true, 'saved here: nothing to keep');

    // Removed: the results are the uncalibrated ones again, and stay so after a reload.
    await page.click('#cal-remove');
    await page.waitForFunction(() => !window.prenet.state().calibration);
    await settled(page);
    await page.waitForFunction(() => !window.prenet.last().predict.results.some((r) => r.calibrated));
    assert.deepEqual(await calibratedIds(page), []);
    assert.equal(byId(await predict(page), HW).step.total_ms, byId(uncalibrated, HW).step.total_ms);
    assert.equal(await page.evaluate(() => localStorage.getItem('prenet.calibration')), null);
    assert.equal(await page.locator('#cal-result').isHidden(), true);
    await page.reload();
    await settled(page);
    assert.equal((await state(page)).calibration, null);
    assert.deepEqual(await calibratedIds(page), []);

    // Imported: the CLI's file applies as it is.
    await chooseFile(page, out);
    await page.waitForFunction(() => Boolean(window.prenet.state().calibration));
    await settled(page);
    await page.waitForFunction(() => window.prenet.last().predict.results.some((r) => r.calibrated));
    assert.deepEqual((await state(page)).calibration, native);
    assert.deepEqual(await calibratedIds(page), [HW]);

    // Another accelerator measured on top: the A100's calibration is kept, as the CLI keeps it with --calibration.
    const t4File = join(dir, 't4.csv');
    writeFileSync(t4File, `model,hardware,batch,seq,precision,measured_ms,measures\ngpt2,${OTHER},4,512,fp16,150,step\n`);
    await chooseFile(page, t4File);
    await page.waitForFunction((id) => Boolean(window.prenet.state().calibration?.devices?.[id]), OTHER);
    await settled(page);
    await page.waitForFunction((id) => window.prenet.last().predict.results.some((r) => r.hardware === id && r.calibrated), OTHER);
    assert.match(await page.textContent('#cal-file-status'), /Calibrated with 1 measurement from t4\.csv\. .*Kept: .*A100.* \(not measured here\)/);
    const both = join(dir, 'both.json');
    const r = spawnSync(cliBinary, ['calibrate', '--measurements', t4File, '--calibration', out, '--out', both], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    sameDoc((await state(page)).calibration, JSON.parse(readFileSync(both, 'utf8')));
    assert.deepEqual((await state(page)).calibration.devices[HW], native.devices[HW], 'the A100\'s kept as it was');
    assert.deepEqual((await calibratedIds(page)).sort(), [HW, OTHER].sort());
    await page.click('#cal-remove');
    await page.waitForFunction(() => !window.prenet.state().calibration);
  });

  test('typed rows: the same numbers as the CLI with the CSV the page downloads; a bad row is named', async () => {
    const h = harness();
    const page = await h.page(`index.html#hw=${OTHER}&precision=fp16&seq=512`);
    await settled(page);
    await page.click('#tab-cal-rows');
    await page.waitForSelector('#cal-measured_ms-0');
    // A row without a time is refused by the page, naming it.
    await page.selectOption('#cal-hardware-0', OTHER);
    await page.fill('#cal-batch-0', '8');
    await page.click('#cal-run');
    assert.match(await page.textContent('#cal-file-status'), /Row 1: give the measured time/);
    assert.equal(await page.getAttribute('#cal-measured_ms-0', 'aria-invalid'), 'true');
    // A non-positive time is the API's to refuse: its message names the row and the field is marked.
    await page.fill('#cal-measured_ms-0', '-3');
    await page.click('#cal-run');
    await page.waitForFunction(() => /row 1/i.test(document.getElementById('cal-file-status').textContent) && document.getElementById('cal-file-status').classList.contains('bad'));
    assert.match(await page.textContent('#cal-file-status'), /row 1: measured_ms must be a positive number/);
    assert.equal(await page.getAttribute('#cal-measured_ms-0', 'aria-invalid'), 'true', 'the field the API names is marked');
    assert.equal((await state(page)).calibration, null);
    await page.fill('#cal-measured_ms-0', '280');
    await page.click('#cal-add');
    assert.equal(await page.inputValue('#cal-batch-1'), '8', 'a new row repeats the last one\'s settings');
    await page.fill('#cal-batch-1', '16');
    await page.fill('#cal-measured_ms-1', '540');
    await page.click('#cal-run');
    await page.waitForSelector('#cal-before-after tbody tr >> nth=1');
    await settled(page);
    await page.waitForFunction(() => window.prenet.last().predict.results.some((r) => r.calibrated));
    assert.deepEqual(await calibratedIds(page), [OTHER]);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#cal-csv')]);
    const typedCsv = join(dir, 'typed.csv');
    writeFileSync(typedCsv, readFileSync(await download.path(), 'utf8'));
    assert.equal(readFileSync(typedCsv, 'utf8'), `model,hardware,batch,seq,precision,measured_ms,measures\ngpt2,${OTHER},8,512,fp16,280,step\ngpt2,${OTHER},16,512,fp16,540,step\n`);
    sameDoc((await state(page)).calibration, cliCalibrate(typedCsv, join(dir, 'typed.json')));
    await page.click('#cal-remove');
    await page.waitForFunction(() => !window.prenet.state().calibration);
  });

  test('a profiler trace is measured with the page\'s settings: one row per family it times, the CLI\'s numbers', async () => {
    const h = harness();
    const page = await h.page(`index.html#hw=${HW},${OTHER}&model=gpt2&batch=8&seq=512&precision=bf16`);
    await settled(page);
    const args = splitCommand(await page.locator('#cli').textContent()).slice(1);
    // The page's own command line (`predict ... --json`) on the accelerator the trace is measured on.
    const step = cli(args.map((a, i) => (args[i - 1] === '--hardware' ? HW : a))).results[0].step;
    // Two profiled steps whose GEMMs took 1.25x the prediction.
    const events = [];
    // And one layer norm whose operator recorded its shapes: matched by shape, timed as prenet kernels times it.
    const lnCsv = join(dir, 'ln.csv');
    writeFileSync(lnCsv, 'op,b,h,precision\nln,4096,768,bf16\n');
    const ln = spawnSync(cliBinary, ['kernels', '--csv', lnCsv, '--hardware', HW], { encoding: 'utf8' });
    assert.equal(ln.status, 0, ln.stderr);
    const lnMs = Number(ln.stdout.trim().split('\n')[1].split(',').pop());
    for (const n of [1, 2]) {
      events.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${n}`, ts: 0, dur: 1 });
      events.push({ ph: 'X', cat: 'kernel', name: 'ampere_bf16_s16816gemm_bf16_128x128_ldg8', ts: 0, dur: 1000 * 1.25 * step.by_family_ms.gemm });
      events.push({ ph: 'X', cat: 'cpu_op', name: 'aten::native_layer_norm', ts: 0, dur: 5,
        args: { 'External id': n, 'Input Dims': [[8, 512, 768], [768], [768], []], 'Input type': ['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar'], 'Concrete Inputs': ['', '', '', ''] } });
      events.push({ ph: 'X', cat: 'kernel', name: 'vectorized_layer_norm_kernel', ts: 0, dur: 1000 * 1.1 * lnMs, args: { 'External id': n } });
    }
    const trace = join(dir, 'trace.json');
    writeFileSync(trace, JSON.stringify({ traceEvents: events }));
    await chooseFile(page, trace);
    await page.waitForFunction(() => window.prenet.last().calibrate?.rows?.length);
    await settled(page);
    assert.match(await page.textContent('#cal-file-status'), /trace\.json \(profiled with this page’s settings\)/);
    const reply = await page.evaluate(() => window.prenet.last().calibrate);
    assert.deepEqual(reply.rows.map((r) => [r.measures, r.matched_by]), [['kernels:norm', 'shape'], ['kernels:gemm', 'name']]);
    close(reply.rows[0].predicted_ms_before, lnMs, 'the shaped layer norm as prenet kernels times it', 1e-4);
    close(reply.rows[0].measured_ms, 1.1 * lnMs, 'its time per step', 1e-9);
    assert.match(await page.textContent('#cal-before-after'), /norm kernels, by shape \(1 shape\)/);
    reply.rows.reverse();  // the GEMM row's checks below
    close(reply.rows[0].measured_ms, 1.25 * step.by_family_ms.gemm, 'the trace\'s GEMM time per step', 1e-9);
    close(reply.rows[0].predicted_ms_before, step.by_family_ms.gemm, 'the page\'s prediction of it', TIME_TOLERANCE);
    assert.ok(reply.rows[0].ape_after_pct < reply.rows[0].ape_before_pct);
    assert.deepEqual(Object.keys(reply.calibration.devices), [HW]);
    await page.waitForFunction(() => window.prenet.last().predict.results.some((r) => r.calibrated));
    // Kept in the browser (the origin's storage, which the next test shares): removed again.
    await page.click('#cal-remove');
    await page.waitForFunction(() => !window.prenet.state().calibration);
  });

  test('links carry it only when ticked; a link\'s calibration applies without being saved until kept; the widget fetches one from its site', async () => {
    const h = harness();
    const doc = cliCalibrate(csvFile, join(dir, 'link.json'));
    const page = await h.page(`index.html#hw=${HW}`);
    await settled(page);
    assert.equal(await page.isDisabled('#share-cal'), true, 'nothing to share yet');
    await chooseFile(page, join(dir, 'link.json'));
    await page.waitForFunction(() => Boolean(window.prenet.state().calibration));
    await settled(page);
    assert.equal(await page.isDisabled('#share-cal'), false);
    await page.waitForTimeout(300); // the hash is written 200 ms after a change
    assert.doesNotMatch(page.url(), /cal=/);
    await page.check('#share-cal');
    await page.waitForFunction(() => location.hash.includes('cal='));
    const link = page.url();
    await page.uncheck('#share-cal');
    await page.waitForFunction(() => !location.hash.includes('cal='));
    // Someone else's browser: nothing saved; the link's calibration applies, said, and can be kept.
    await page.click('#cal-remove');
    await page.waitForFunction(() => !window.prenet.state().calibration);
    const other = await h.page(link.slice(h.url.length));
    await settled(other);
    await other.waitForFunction(() => window.prenet.last().predict.results.some((r) => r.calibrated));
    assert.deepEqual((await state(other)).calibration, doc);
    assert.equal(await other.locator('#cal-from-link').isVisible(), true);
    assert.equal(await other.evaluate(() => localStorage.getItem('prenet.calibration')), null);
    assert.equal(await other.isChecked('#share-cal'), true, 'the link keeps carrying it');
    await other.click('#cal-keep');
    assert.deepEqual(await other.evaluate(() => JSON.parse(localStorage.getItem('prenet.calibration'))), doc);
    assert.equal(await other.locator('#cal-from-link').isHidden(), true);
    await other.click('#cal-remove');

    // The widget: a calibration on its own site is fetched and applied; one elsewhere is refused.
    const served = join(dist, 'test-calibration.json');
    writeFileSync(served, JSON.stringify(doc));
    try {
      const w = await h.page(`widget.html?model=gpt2&hardware=${HW},${OTHER}&batch=8&seq=512&calibration=test-calibration.json`);
      await w.waitForFunction(() => document.documentElement.dataset.ready === 'true');
      assert.equal(await w.locator('#w-table .badge.calibrated').count(), 1);
      assert.match(await w.locator('#w-table tbody tr', { hasText: 'calibrated' }).textContent(), /A100/);
      const away = await h.page(`widget.html?model=gpt2&hardware=${HW}&calibration=https://example.com/c.json`);
      await away.waitForFunction(() => document.documentElement.dataset.ready === 'error');
      assert.match(await away.textContent('#w-error'), /calibration=https:\/\/example.com\/c.json: not on this site/);
    } finally {
      rmSync(served, { force: true });
    }
  });
});
