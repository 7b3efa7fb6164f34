// The step harness (tools/measure/measure_steps.py --model: a measurements CSV for `prenet calibrate`, issue #28).
// 1. Its Python tests (tests/python/test_measure_harness.py) pass: without torch they test everything but the
//    timing itself, and a tiny Llama is measured on the CPU when torch is installed (skipped, with a message,
//    otherwise).
// 2. The rows it writes are prenet's: every column but measured_ms and measures is an option of `prenet predict`,
//    the harness's choices are predict's, and each row's settings as flags are a prediction prenet makes.
// 3. Once `prenet calibrate` exists: it takes the harness's rows (with made-up times) and writes a calibration.
// Needs python3 (skipped without) and the native prenet (PRENET, default build/prenet; skipped without).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../../tools/compare_published.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const prenet = resolve(root, process.env.PRENET ?? 'build/prenet');
const script = join(root, 'tools', 'measure', 'measure_steps.py');
const run = (cmd, args, env = {}) =>
  spawnSync(cmd, args, { encoding: 'utf8', timeout: 600000, cwd: root, env: { ...process.env, ...env } });
const python = run('python3', ['--version']).status === 0;
const noPython = 'python3 not found: the harness (tools/measure) is Python';
const noPrenet = `${prenet} not found; build it with: bash scripts/build.sh native`;

// What the harness is asked in the README and the issue, and a spread of its other settings.
const cases = [
  ['--model', 'llama3-8b', '--batch', '1', '--seq', '4096', '--precision', 'bf16', '--steps', '20'],
  ['--model', 'resnet50', '--batch', '64', '--precision', 'fp16', '--optimizer', 'sgd'],
  ['--model', 'gpt2', '--seq', '1024', '--attention', 'eager', '--grad-accum', '4', '--forward-backward'],
  ['--model', 'bert-large-pretraining', '--batch', '8', '--seq', '128', '--precision', 'tf32'],
  ['--model', 'vit-b16', '--batch', '32', '--precision', 'bf16', '--optimizer', 'adam'],
  ['--config', 'tests/fixtures/measure/tiny-llama.json', '--batch', '2', '--seq', '32'],
];
const dryRows = (hardware) => cases.flatMap((args) => {
  const r = run('python3', [script, ...args, '--dry-run', '--hardware', hardware]);
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  return parseCsv(r.stdout).map((row) => ({ row, args }));
});
const options = () => JSON.parse(run(prenet, ['options', '--json']).stdout).options;
const flagsOf = (row, byName) => Object.entries(row)
  .filter(([k, v]) => k !== 'measured_ms' && k !== 'measures' && v !== '')
  .flatMap(([k, v]) => [byName.get(k).flag, v]);

test('the harness Python tests pass (the CPU measurement runs when torch is installed)', (t) => {
  if (!python) { t.skip(noPython); return; }
  const r = run('python3', ['-m', 'unittest', 'discover', '-s', 'tests/python', '-p', 'test_measure_harness.py', '-v'],
    { PRENET: prenet });
  for (const line of r.stderr.split('\n').filter((l) => l.includes('skipped'))) t.diagnostic(line.trim());
  assert.equal(r.status, 0, r.stderr.slice(-6000));
  assert.match(r.stderr, /\nOK/);
});

test('every column of a harness row is an option of prenet predict, every choice one predict has', (t) => {
  if (!python) { t.skip(noPython); return; }
  if (!existsSync(prenet)) { t.skip(noPrenet); return; }
  const byName = new Map(options().map((o) => [o.name, o]));
  const rows = dryRows('h200-sxm-141gb');
  assert.ok(rows.length >= cases.length + 1);
  for (const { row, args } of rows) {
    for (const [k, v] of Object.entries(row)) {
      if (k === 'measured_ms') { assert.equal(v, '', 'a dry run leaves the time empty'); continue; }
      if (k === 'measures') { assert.ok(['step', 'forward_backward'].includes(v), v); continue; }
      const o = byName.get(k);
      assert.ok(o && o.commands.includes('predict'), `${args.join(' ')}: column ${k} is not a predict option`);
      if (o.choices && v !== '') {
        const choices = o.choices.map((c) => (typeof c === 'string' ? c : c.value ?? c.name));
        assert.ok(choices.includes(v), `${k}=${v} is not one of predict's ${choices.join(', ')}`);
      }
    }
  }
  const step = rows.find(({ args }) => args.includes('llama3-8b')).row;
  assert.deepEqual(step, {
    model: 'llama3-8b', hardware: 'h200-sxm-141gb', batch: '1', seq: '4096', precision: 'bf16', mixed: 'autocast',
    attention: 'flash', optimizer: 'adamw', optimizer_impl: 'fused', grad_accum: '1', measured_ms: '', measures: 'step',
  });
});

test("each harness row's settings, as flags, are a prediction prenet makes", (t) => {
  if (!python) { t.skip(noPython); return; }
  if (!existsSync(prenet)) { t.skip(noPrenet); return; }
  const byName = new Map(options().map((o) => [o.name, o]));
  for (const { row, args } of dryRows('t4')) {
    const r = run(prenet, ['predict', ...flagsOf(row, byName), '--json']);
    assert.equal(r.status, 0, `${args.join(' ')} -> prenet predict ${flagsOf(row, byName).join(' ')}: ${r.stderr}`);
    const result = JSON.parse(r.stdout).results[0];
    assert.ok(result.step.total_ms > 0, args.join(' '));
  }
});

test('prenet calibrate takes the rows the harness writes', (t) => {
  if (!python) { t.skip(noPython); return; }
  if (!existsSync(prenet)) { t.skip(noPrenet); return; }
  if (run(prenet, ['calibrate', '--help']).status !== 0) { t.skip('prenet has no calibrate command yet'); return; }
  const dir = mkdtempSync(join(tmpdir(), 'prenet-harness-'));
  const csv = join(dir, 'my.csv');
  // Made-up runs on one device, appended as measure_steps.py runs would.
  const runs = [
    [cases[0], 900],
    [['--model', 'llama3-8b', '--batch', '2', '--seq', '2048', '--precision', 'bf16'], 950],
    [['--model', 'gpt2', '--batch', '8', '--seq', '1024', '--precision', 'bf16'], 120],
    [['--model', 'resnet50', '--batch', '128', '--precision', 'bf16'], 180],  // widens the header to image
  ];
  for (const [args, ms] of runs) {
    const r = run('python3', [script, ...args, '--dry-run', '--hardware', 'h200-sxm-141gb', '--append', csv]);
    assert.equal(r.status, 0, r.stderr);
    const text = readFileSync(csv, 'utf8').trimEnd().split('\n');
    text[text.length - 1] = text[text.length - 1].replace(/,,step$/, `,${ms},step`);
    writeFileSync(csv, text.join('\n') + '\n');
  }
  const out = join(dir, 'calibration.json');
  const r = run(prenet, ['calibrate', '--measurements', csv, '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const doc = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(doc.format, 'prenet-calibration');
  assert.equal(doc.devices['h200-sxm-141gb'].rows, 4);
  const p = run(prenet, ['predict', '--model', 'llama3-8b', '--hardware', 'h200-sxm-141gb', '--seq', '4096',
    '--precision', 'bf16', '--calibration', out, '--json']);
  assert.equal(p.status, 0, p.stderr);
  assert.equal(JSON.parse(p.stdout).results[0].calibrated, true);
});
