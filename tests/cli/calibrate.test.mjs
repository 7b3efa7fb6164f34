// `prenet calibrate` (measured rows in, a calibration document out) and `--calibration` on predict and kernels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prenet = process.env.PRENET || join(root, 'build', 'prenet');
const run = (...args) => spawnSync(prenet, args, { encoding: 'utf8', timeout: 120000 });
const json = (...args) => {
  const r = run(...args, '--json');
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
};

test('calibrate writes the document, prints each row before and after, and predict applies it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-calibrate-'));
  const out = join(dir, 'calibration.json');
  const r = run('calibrate', '--measurements', join(root, 'examples/measurements-a100.csv'), '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /APE before %/);
  assert.match(r.stdout, /a100-sxm4-80gb +6 /);
  const doc = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(doc.format, 'prenet-calibration');
  assert.equal(doc.devices['a100-sxm4-80gb'].rows, 6);
  // The example's file is what calibrate writes from it (examples/ stays in step with the code).
  assert.deepEqual(doc, JSON.parse(readFileSync(join(root, 'examples/calibration-a100.json'), 'utf8')));

  const args = ['predict', '--model', 'resnet50', '--hardware', 'a100-sxm4-80gb,h100-sxm5-80gb', '--batch', '256',
    '--precision', 'tf32', '--optimizer', 'sgd', '--attention', 'eager'];
  const plain = json(...args);
  const calibrated = json(...args, '--calibration', out);
  assert.equal(calibrated.results[0].calibrated, true);
  assert.equal(calibrated.results[0].calibration_rows, 6);
  assert.notEqual(calibrated.results[0].step.total_ms, plain.results[0].step.total_ms);
  assert.equal(calibrated.results[1].calibrated, false);
  assert.equal(calibrated.results[1].step.total_ms, plain.results[1].step.total_ms);
  // The row calibrate reports for this run is what predict answers with the file.
  const rows = json('calibrate', '--measurements', join(root, 'examples/measurements-a100.csv')).rows;
  assert.ok(Math.abs(rows[0].predicted_ms_after - calibrated.results[0].step.total_ms) < 1e-9 * rows[0].predicted_ms_after);
});

test('kernels applies the calibration to the device it names', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-calibrate-'));
  const csv = join(dir, 'k.csv');
  writeFileSync(csv, 'op,m,n,k,precision\ngemm,4096,4096,4096,tf32\n');
  const cal = join(root, 'examples/calibration-a100.json');
  const doc = JSON.parse(readFileSync(cal, 'utf8'));
  const time = (...extra) => {
    const r = run('kernels', '--csv', csv, '--hardware', 'a100-sxm4-80gb', ...extra);
    assert.equal(r.status, 0, r.stderr);
    return Number(r.stdout.trim().split('\n')[1].split(',').at(-1));
  };
  const scales = doc.devices['a100-sxm4-80gb'].scales;
  const ratio = time('--calibration', cal) / time();
  assert.ok(Math.abs(ratio - scales.gemm * scales['matmul.tf32']) < 1e-4, `${ratio}`);
});

test('a CSV row names its model and trace files relative to itself', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-calibrate-'));
  writeFileSync(join(dir, 'model.json'), readFileSync(join(root, 'examples/tiny-transformer.json')));
  const events = [];
  for (const step of [1, 2]) {
    events.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${step}`, ts: 0, dur: 1 });
    events.push({ ph: 'X', cat: 'kernel', name: 'ampere_sgemm_128x64_tn', ts: 0, dur: 900 });
    events.push({ ph: 'X', cat: 'kernel', name: 'vectorized_layer_norm_kernel', ts: 0, dur: 40 });
  }
  writeFileSync(join(dir, 'trace.json'), JSON.stringify({ traceEvents: events }));
  writeFileSync(join(dir, 'm.csv'), 'model,hardware,batch,measured_ms,measures,trace\n' +
    'model.json,rtx-4090,8,12.5,step,\nmodel.json,rtx-4090,8,,,trace.json\n');
  const reply = json('calibrate', '--measurements', join(dir, 'm.csv'));
  assert.deepEqual(reply.rows.map((r) => r.measures), ['step', 'kernels:gemm', 'kernels:norm']);
  assert.equal(reply.rows[1].measured_ms, 0.9);  // 1800 us over two profiled steps
  assert.equal(reply.calibration.devices['rtx-4090'].rows, 3);
});

test('a trace recorded with shapes is compared shape by shape, as prenet kernels times those shapes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-calibrate-'));
  writeFileSync(join(dir, 'k.csv'), 'op,m,n,k,precision\ngemm,2048,8192,4096,bf16\n');
  const timed = (...extra) => {
    const r = run('kernels', '--csv', join(dir, 'k.csv'), '--hardware', 'h100-sxm5-80gb', ...extra);
    assert.equal(r.status, 0, r.stderr);
    return Number(r.stdout.trim().split('\n')[1].split(',').pop());
  };
  const ms = timed();
  // Two profiled steps of four such GEMM calls each, every call 1.5x what prenet kernels says.
  const events = [];
  let id = 0;
  for (const step of [1, 2]) {
    events.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${step}`, ts: 0, dur: 1 });
    for (let c = 0; c < 4; c++) {
      id++;
      events.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', ts: 0, dur: 3,
        args: { 'External id': id, 'Input Dims': [[2048, 4096], [4096, 8192]], 'Input type': ['c10::BFloat16', 'c10::BFloat16'], 'Concrete Inputs': ['', ''] } });
      events.push({ ph: 'X', cat: 'kernel', name: 'sm90_xmma_gemm_bf16bf16_bf16f32', ts: 0, dur: 1.5e3 * ms, args: { 'External id': id } });
    }
  }
  writeFileSync(join(dir, 'trace.json'), JSON.stringify({ traceEvents: events }));
  writeFileSync(join(dir, 'm.csv'), 'model,hardware,batch,seq,precision,trace\ngpt2,h100-sxm5-80gb,4,512,bf16,trace.json\n');
  const out = join(dir, 'cal.json');
  const table = run('calibrate', '--measurements', join(dir, 'm.csv'), '--out', out);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /kernels:gemm \(shape\)/);
  const reply = json('calibrate', '--measurements', join(dir, 'm.csv'));
  const gemm = reply.rows.find((r) => r.measures === 'kernels:gemm');
  assert.equal(gemm.matched_by, 'shape');
  assert.ok(Math.abs(gemm.predicted_ms_before / (4 * ms) - 1) < 1e-4, `${gemm.predicted_ms_before} vs 4 x ${ms}`);
  assert.ok(Math.abs(gemm.measured_ms / (6 * ms) - 1) < 1e-9);
  assert.ok(gemm.ape_after_pct < 5, `after ${gemm.ape_after_pct} %`);
  // The same shape through prenet kernels with the calibration: the row's after, per call.
  const after = timed('--calibration', out);
  assert.ok(Math.abs(after / (gemm.predicted_ms_after / 4) - 1) < 1e-4, `${after} vs ${gemm.predicted_ms_after} / 4`);
});

test('calibrate --calibration adds to a calibration: the devices not measured again are kept', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-calibrate-'));
  writeFileSync(join(dir, 'h100.csv'), 'model,hardware,batch,seq,precision,measured_ms,measures\ngpt2,h100-sxm5-80gb,8,1024,bf16,90,step\n');
  const out = join(dir, 'both.json');
  const r = run('calibrate', '--measurements', join(dir, 'h100.csv'), '--calibration', join(root, 'examples/calibration-a100.json'), '--out', out);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Kept from --calibration \(not measured here\): a100-sxm4-80gb/);
  const doc = JSON.parse(readFileSync(out, 'utf8'));
  const a100 = JSON.parse(readFileSync(join(root, 'examples/calibration-a100.json'), 'utf8')).devices['a100-sxm4-80gb'];
  assert.deepEqual(Object.keys(doc.devices).sort(), ['a100-sxm4-80gb', 'h100-sxm5-80gb']);
  assert.deepEqual(doc.devices['a100-sxm4-80gb'], a100);
  assert.equal(doc.devices['h100-sxm5-80gb'].rows, 1);
});

test('bad measurement files are errors naming the row and the column', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-calibrate-'));
  const bad = (text) => {
    writeFileSync(join(dir, 'bad.csv'), text);
    const r = run('calibrate', '--measurements', join(dir, 'bad.csv'), '--out', join(dir, 'never.json'));
    assert.equal(r.status, 2, r.stdout);
    assert.ok(!existsSync(join(dir, 'never.json')));
    return r.stderr;
  };
  assert.match(bad('model,hardware,tempo,measured_ms,measures\ngpt2,t4,1,5,step\n'), /unknown column 'tempo'/);
  assert.match(bad('model,hardware,measured_ms,measures\ngpt2,t4,0,step\n'), /row 1: measured_ms must be a positive/);
  assert.match(bad('model,hardware,measured_ms,measures\ngpt2,no-such-gpu,5,step\n'), /row 1, column 'hardware'/);
  assert.match(bad('model,hardware,measured_ms,measures\nmissing.json,t4,5,step\n'), /cannot read model file/);
  assert.match(bad('model,hardware,measured_ms,measures\ngpt2,t4,5,step\ngpt2,t4,50,step\n'), /rows 1 and 2 have the same settings/);
  assert.match(run('calibrate').stderr, /missing --measurements/);
  assert.match(run('predict', '--model', 'gpt2', '--hardware', 't4', '--calibration', join(root, 'examples/tiny-transformer.json')).stderr,
    /calibration: 'format' must be "prenet-calibration"/);
});
