// `prenet kernels` (kernel tables in, predictions appended) and `prenet fit` (on a small slice of data/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prenet = process.env.PRENET || join(root, 'build', 'prenet');
const run = (...args) => spawnSync(prenet, args, { encoding: 'utf8', timeout: 120000 });

function parseCsv(text) {
  const [header, ...rows] = text.trim().split('\n').map((l) => l.split(','));
  return { header, rows };
}

// Fused attention rows: the forward kernel, FlashAttention-2's backward (2.5x the work: slower), a bad phase.
test('kernels times flash_attention rows forward and backward', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-kernels-'));
  const input = join(dir, 'flash.csv');
  writeFileSync(input, [
    'op,phase,b,seq,heads,kv_heads,head_dim,causal,precision',
    'flash_attention,forward,2,4096,32,8,128,1,bf16',
    'flash_attention,backward,2,4096,32,8,128,1,bf16',
  ].join('\n') + '\n');
  const r = run('kernels', '--csv', input, '--hardware', 'b200');
  assert.equal(r.status, 0, r.stderr);
  const { header, rows } = parseCsv(r.stdout);
  assert.equal(header.at(-1), 'predicted_ms');
  const [forward, backward] = rows.map((row) => Number(row.at(-1)));
  assert.ok(Number.isFinite(forward) && forward > 0, `forward ${forward}`);
  assert.ok(backward > forward, `backward ${backward} vs forward ${forward}`);
  writeFileSync(input, 'op,phase,b,seq,heads,kv_heads,head_dim,causal\nflash_attention,sideways,1,16,4,4,64,1\n');
  const bad = run('kernels', '--csv', input, '--hardware', 'b200');
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /row 2: column 'phase': 'sideways' is not forward or backward/);
});

test('kernels appends predicted_ms to every row and keeps the others', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-kernels-'));
  const input = join(dir, 'in.csv');
  writeFileSync(input, [
    'op,latency_ms,b,m,n,k,h,precision',
    'linear,0.1,1,512,1024,1024,,',
    'bmm,0.2,16,128,128,64,,bf16',
    'add,0.03,64,,,,4096,',
    'softmax,0.03,64,,,,512,',
  ].join('\n') + '\n');
  const r = run('kernels', '--csv', input, '--hardware', 'a100-sxm4-80gb');
  assert.equal(r.status, 0, r.stderr);
  const { header, rows } = parseCsv(r.stdout);
  assert.deepEqual(header, ['op', 'latency_ms', 'b', 'm', 'n', 'k', 'h', 'precision', 'matmul_precision_used', 'predicted_ms']);
  // Matrix rows say the precision they were timed at (the table's default fp32, or the row's); vector rows none.
  assert.deepEqual(rows.map((row) => row.at(-2)), ['fp32', 'bf16', '', '']);
  assert.equal(rows.length, 4);
  for (const row of rows) {
    const ms = Number(row.at(-1));
    assert.ok(Number.isFinite(ms) && ms > 0, `predicted ${row.at(-1)}`);
  }
  // A larger GEMM takes longer; --out writes a file instead of stdout.
  const out = join(dir, 'out.csv');
  assert.equal(run('kernels', '--csv', input, '--hardware', 't4', '--out', out).status, 0);
  const t4 = parseCsv(readFileSync(out, 'utf8')).rows;
  assert.ok(Number(t4[0].at(-1)) > Number(rows[0].at(-1)), 'a T4 is slower than an A100');
});

test('kernels reports bad rows with their line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-kernels-'));
  const input = join(dir, 'bad.csv');
  writeFileSync(input, 'op,b,m,n,k\nlinear,1,2,3,4\nfft,1,2,3,4\n');
  const r = run('kernels', '--csv', input, '--hardware', 'a100-sxm4-80gb');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /row 3.*unknown op 'fft'/);
  assert.equal(run('kernels', '--hardware', 't4').status, 2);
  assert.equal(run('kernels', '--csv', input).status, 2);
});

test('kernels predicts collective rows with the shipped collective model', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-kernels-'));
  const input = join(dir, 'coll.csv');
  writeFileSync(input, [
    'op,message_size,gpus,nodes,gpus_per_node,b,m,n,k',
    'all_reduce,1048576,8,,,,,,',
    'all_reduce,268435456,8,,,,,,',
    'all_reduce,268435456,16,2,,,,,',
    'alltoall,1048576,8,1,,,,,',
    'all_gather,268435456,8,,4,,,,',
    'all_gather,268435456,8,,,,,,',
    'send_recv,1048576,2,2,,,,,',
    'linear,,,,,1,512,1024,1024',
  ].join('\n') + '\n');
  const r = run('kernels', '--csv', input, '--hardware', 'h100-sxm5-80gb');
  assert.equal(r.status, 0, r.stderr);
  const { header, rows } = parseCsv(r.stdout);
  assert.equal(header.at(-1), 'predicted_ms');
  const ms = rows.map((row) => Number(row.at(-1)));
  for (const x of ms) assert.ok(Number.isFinite(x) && x > 0, `predicted ${x}`);
  assert.ok(ms[1] > 20 * ms[0], 'a 256 MiB all-reduce takes far longer than a 1 MiB one');
  assert.ok(ms[2] > ms[1], 'two nodes over InfiniBand are slower than one NVLink node');
  assert.ok(ms[4] > ms[5], 'an all-gather over two 4-GPU nodes is slower than inside one 8-GPU node');
  // The same rows on a PCIe card are slower than on NVLink.
  const l40s = parseCsv(run('kernels', '--csv', input, '--hardware', 'l40s').stdout).rows.map((row) => Number(row.at(-1)));
  assert.ok(l40s[1] > ms[1], 'PCIe is slower than NVLink for a large all-reduce');
});

test('kernels reports impossible collective rows with their line and field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-kernels-'));
  const cases = [
    ['op,message_size,gpus,nodes\nall_reduce,1024,8,1\nall_reduce,1024,12,5\n', /row 3.*do not split evenly over 5 nodes/],
    ['op,message_size,gpus\nall_gather,1024,8\nall_gather,,8\n', /row 3.*message_size/],
    ['op,message_size,gpus\nsend_recv,1024,4\n', /row 2.*send_recv is between 2 devices/],
    ['op,message_size,gpus,gpus_per_node\nall_reduce,1024,32,16\n', /row 2.*at most 8/],
  ];
  for (const [text, message] of cases) {
    const input = join(dir, 'bad.csv');
    writeFileSync(input, text);
    const r = run('kernels', '--csv', input, '--hardware', 'h100-sxm5-80gb');
    assert.equal(r.status, 2, text);
    assert.match(r.stderr, message);
  }
});

test('fit on a slice of the data writes loadable models and a report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-fit-'));
  const ops = join(dir, 'data', 'neusight', 'ops');
  mkdirSync(ops, { recursive: true });
  for (const op of ['bmm', 'add']) {
    const lines = readFileSync(join(root, 'data', 'neusight', 'ops', `${op}.csv`), 'utf8').trim().split('\n');
    // Every 60th row keeps all five devices in a small file.
    writeFileSync(join(ops, `${op}.csv`), [lines[0], ...lines.slice(1).filter((_, i) => i % 60 === 0)].join('\n') + '\n');
  }
  const models = join(dir, 'kernels.json');
  const report = join(dir, 'accuracy.md');
  const r = run('fit', '--data', join(dir, 'data'), '--models', models, '--report', report,
    '--plots', join(dir, 'plots'), '--trees', '20');
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(readFileSync(models, 'utf8'));
  assert.deepEqual(Object.keys(doc.families).sort(), ['elementwise', 'gemm']);
  for (const family of Object.values(doc.families)) {
    assert.equal(family.devices.length, 5);
    assert.ok(family.validation.median_ape > 0 && family.validation.median_ape < 10);
  }
  assert.match(readFileSync(report, 'utf8'), /leave one accelerator out/);
  assert.ok(existsSync(join(dir, 'plots', 'gemm.svg')));
  // The fitted file is usable as --models, and predictions come back finite.
  const p = run('predict', '--model', 'gpt2', '--hardware', 'h100-sxm5-80gb', '--models', models, '--json');
  assert.equal(p.status, 0, p.stderr);
  const result = JSON.parse(p.stdout).results[0];
  assert.ok(result.step.total_ms > 0);
  assert.ok(result.uncertainty.low_ms < result.step.total_ms && result.step.total_ms < result.uncertainty.high_ms);
});

test('fit --without holds every variant of a chip out, and kernels --models uses what it wrote', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-fit-'));
  mkdirSync(join(dir, 'data', 'neusight', 'ops'), { recursive: true });
  writeFileSync(join(dir, 'data', 'neusight', 'ops', 'ln.csv'), readFileSync(join(root, 'data', 'neusight', 'ops', 'ln.csv')));
  const models = join(dir, 'kernels.json');
  const r = run('fit', '--data', join(dir, 'data'), '--models', models, '--report', join(dir, 'accuracy.md'),
    '--plots', join(dir, 'plots'), '--rows-per-device', '60', '--trees', '5', '--without', 'v100');
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(readFileSync(models, 'utf8'));
  assert.deepEqual(doc.held_out_chips, ['v100']);
  const devices = doc.families.norm.devices;
  assert.equal(devices.length, 4, devices.join(','));
  assert.ok(devices.every((d) => !d.startsWith('v100')), devices.join(','));
  const input = join(dir, 'ln.csv');
  writeFileSync(input, 'op,b,h\nln,64,1024\n');
  const held = run('kernels', '--csv', input, '--hardware', 'v100-sxm2-16gb', '--models', models);
  const shipped = run('kernels', '--csv', input, '--hardware', 'v100-sxm2-16gb');
  assert.equal(held.status, 0, held.stderr);
  const ms = (out) => Number(parseCsv(out.stdout).rows[0].at(-1));
  assert.ok(ms(held) > 0 && ms(held) < 10, held.stdout);
  assert.notEqual(ms(held), ms(shipped), 'kernels --models must use the given models');
});

test('a matrix row at a precision the device has no units for is timed as its fallback, and says so', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-kernels-'));
  const input = join(dir, 'fp8.csv');
  writeFileSync(input, [
    'op,b,m,n,k,h,precision',
    'linear,1,4096,4096,4096,,fp8',
    'linear,1,4096,4096,4096,,bf16',
    'add,64,,,,4096,fp8',
  ].join('\n') + '\n');
  const a100 = parseCsv(run('kernels', '--csv', input, '--hardware', 'a100-sxm4-80gb').stdout).rows;
  assert.equal(a100[0].at(-2), 'bf16', 'no FP8 units on an A100: the fp8 GEMM runs as bf16');
  assert.equal(Number(a100[0].at(-1)), Number(a100[1].at(-1)), 'exactly the bf16 row: never faster');
  assert.equal(a100[2].at(-2), '', 'a vector row has no matmul precision');
  const h100 = parseCsv(run('kernels', '--csv', input, '--hardware', 'h100-sxm5-80gb').stdout).rows;
  assert.equal(h100[0].at(-2), 'fp8');
  assert.ok(Number(h100[0].at(-1)) < Number(h100[1].at(-1)), 'fp8 units: faster than bf16');
  const v100 = parseCsv(run('kernels', '--csv', input, '--hardware', 'v100-sxm2-16gb').stdout).rows;
  assert.equal(v100[1].at(-2), 'fp32', 'no BF16 units on a V100: bf16 runs as fp32');
});
