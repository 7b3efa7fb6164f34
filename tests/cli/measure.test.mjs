// The GPU measurement harness (tools/measure/), without a GPU: its plans are what prenet reads (every kernel
// row through `prenet kernels`, every step recipe through `prenet predict`), and the importer refuses a plan
// without measurements and merges real ones into data/measured/ without duplicates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../../tools/compare_published.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prenet = process.env.PRENET || join(root, 'build', 'prenet');
const tools = join(root, 'tools', 'measure');
const sh = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8', timeout: 300000 });
const table = (path) => parseCsv(readFileSync(path, 'utf8'));  // rows as objects keyed by the header
const toCsv = (rows) => {
  const header = Object.keys(rows[0]);
  const quote = (v) => (/[",]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return [header.join(','), ...rows.map((r) => header.map((h) => quote(r[h] ?? '')).join(','))].join('\n') + '\n';
};

function dryRun() {
  const out = mkdtempSync(join(tmpdir(), 'prenet-measure-'));
  const r = sh('python3', [join(tools, 'measure_kernels.py'), '--out', out, '--dry-run', '--device-id', 'h200-sxm-141gb']);
  assert.equal(r.status, 0, r.stderr);
  const s = sh('python3', [join(tools, 'measure_steps.py'), '--out', out, '--dry-run', '--device-id', 'h200-sxm-141gb']);
  assert.equal(s.status, 0, s.stderr);
  return out;
}

test('every planned kernel row is one prenet kernels reads and predicts', () => {
  const out = dryRun();
  const files = readdirSync(join(out, 'ops'));
  assert.deepEqual(files.sort(), ['add.csv', 'bmm.csv', 'conv2d.csv', 'conv2d_grad_input.csv', 'conv2d_grad_weight.csv',
    'gelu.csv', 'gemm.csv', 'ln.csv', 'mul.csv', 'relu.csv', 'softmax.csv']);
  let rows = 0;
  const precisions = new Set();
  for (const f of files) {
    const r = sh(prenet, ['kernels', '--csv', join(out, 'ops', f), '--hardware', 'h200-sxm-141gb']);
    assert.equal(r.status, 0, `${f}: ${r.stderr}`);
    const predicted = parseCsv(r.stdout);
    assert.ok(predicted.length > 0, f);
    for (const row of predicted) assert.ok(Number(row.predicted_ms) > 0, `${f}: ${JSON.stringify(row)}`);
    rows += predicted.length;
    for (const row of table(join(out, 'ops', f))) precisions.add(row.precision);
  }
  assert.ok(rows > 500, `only ${rows} planned rows`);
  assert.deepEqual([...precisions].sort(), ['bf16', 'fp16', 'fp32', 'tf32']);
  // The precisions the fitting data lacks come first, so that a cut budget keeps them.
  assert.equal(table(join(out, 'ops', 'gemm.csv'))[0].precision, 'bf16');
});

test('every planned training step is a recipe prenet predict takes', () => {
  const out = dryRun();
  const steps = table(join(out, 'steps.csv'));
  assert.ok(steps.length >= 6);
  for (const s of steps) {
    const args = ['predict', '--model', s.model, '--hardware', s.hardware, '--batch', s.batch, '--precision', s.precision,
      '--optimizer', s.optimizer, '--attention', 'eager', '--json'];
    if (s.seq) args.push('--seq', s.seq);
    const r = sh(prenet, args);
    assert.equal(r.status, 0, `${s.model} ${s.precision}: ${r.stderr}`);
    assert.ok(JSON.parse(r.stdout).results[0].throughput.samples_per_s > 0);
  }
});

test('the importer refuses a plan without measurements and merges measured rows once', () => {
  const out = dryRun();
  const data = mkdtempSync(join(tmpdir(), 'prenet-data-'));
  const refused = sh('python3', [join(tools, 'import_measurements.py'), out, '--data', data]);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /no latency_ms/);
  assert.equal(existsSync(join(data, 'measured')), false);

  // Pretend the plan was measured: a latency for each gemm row, a rate for each step.
  const gemm = table(join(out, 'ops', 'gemm.csv')).map((r) => ({ ...r, latency_ms: '0.5' }));
  const measured = mkdtempSync(join(tmpdir(), 'prenet-measured-'));
  sh('mkdir', ['-p', join(measured, 'ops')]);
  writeFileSync(join(measured, 'ops', 'gemm.csv'), toCsv(gemm));
  const steps = table(join(out, 'steps.csv')).map((r) => ({ ...r, samples_per_s: '100' }));
  writeFileSync(join(measured, 'steps.csv'), toCsv(steps));
  for (let i = 0; i < 2; i++) {
    const r = sh('python3', [join(tools, 'import_measurements.py'), measured, '--data', data]);
    assert.equal(r.status, 0, r.stderr);
  }
  assert.equal(table(join(data, 'measured', 'ops', 'gemm.csv')).length, gemm.length);  // replaced, not doubled
  assert.equal(table(join(data, 'measured', 'steps.csv')).length, steps.length);
  // What was imported is what the fit and the kernels command read.
  const r = sh(prenet, ['kernels', '--csv', join(data, 'measured', 'ops', 'gemm.csv'), '--hardware', 'h200-sxm-141gb']);
  assert.equal(r.status, 0, r.stderr);
});

test('the device script packs both stages into one archive', () => {
  const out = mkdtempSync(join(tmpdir(), 'prenet-device-'));
  const r = sh('bash', [join(tools, 'run_on_device.sh'), out, '--dry-run']);
  assert.equal(r.status, 0, r.stderr);
  const list = sh('tar', ['tzf', join(out, 'measurements.tar.gz')]).stdout;
  for (const f of ['./ops/gemm.csv', './ops/conv2d_grad_weight.csv', './steps.csv', './provenance.json'])
    assert.ok(list.includes(f), `${f} missing from ${list}`);
  assert.equal(sh('bash', [join(tools, 'run_on_device.sh'), out, '--bogus']).status, 2);
});

test('measured steps are compared on throughput and on peak memory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-steps-'));
  const csv = join(dir, 'steps.csv');
  // rtx-4090: a chip no kernel model was fitted on, so no held-out fit is needed.
  writeFileSync(csv, toCsv([{ model: 'resnet50', hardware: 'rtx-4090', precision: 'bf16', batch: '128', seq: '',
    image: '224', optimizer: 'sgd', grad_accum: '', samples_per_s: '1500', framework: 'PyTorch 2.11 eager (CUDA 13.0)',
    source_url: 'tools/measure/measure_steps.py', source_note: 'test row', role: 'validate',
    peak_allocated_bytes: '14000000000', peak_reserved_bytes: '16000000000' }]));
  const out = join(dir, 'steps.md');
  const r = sh('node', [join(root, 'tools', 'compare_published.mjs'), '--csv', csv, '--out', out, '--prenet', prenet]);
  assert.equal(r.status, 0, r.stderr);
  const md = readFileSync(out, 'utf8');
  assert.match(md, /^# Predicted vs measured single-GPU training throughput/);
  const p = JSON.parse(sh(prenet, ['predict', '--model', 'resnet50', '--hardware', 'rtx-4090', '--batch', '128',
    '--precision', 'bf16', '--optimizer', 'sgd', '--image', '224', '--attention', 'eager', '--json']).stdout);
  const reserved = p.results[0].memory.peak_reserved_bytes;
  const row = md.split('\n').find((l) => l.startsWith('| resnet50 | rtx-4090 | bf16 | 128 |') && l.includes(' 14.90 '));  // 16e9 B
  assert.ok(row, md);
  assert.ok(row.includes(` ${(reserved / 2 ** 30).toFixed(2)} `), `${row} vs ${reserved}`);
  const err = (reserved - 16e9) / 16e9 * 100;
  assert.ok(row.includes(`${err >= 0 ? '+' : ''}${err.toFixed(1)} |`), row);
});
