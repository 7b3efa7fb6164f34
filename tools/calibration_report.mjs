#!/usr/bin/env node
// How much a few of a user's own measured steps improve every other prediction on that device (issue #28):
//   node tools/calibration_report.mjs [--prenet build/prenet] [--out docs/calibration-accuracy.md] [--draws 10]
// The whole runs in data/ (tools/fit_overhead.mjs's wholeRuns: llm-foundry's FSDP runs, NeuSight's iterations, the
// published single-GPU rows; the large runs are left out, their layouts are searched) are grouped by device. For
// each device with at least 8 rows, k = 1 and k = 3 rows are drawn (deterministically, `--draws` times), given to
// `prenet calibrate` as the user's measurements, and every other row of that device is predicted with
// `--calibration`: the report is the median APE of those held-back rows, against the uncalibrated predictions of the
// same rows. Devices the shipped kernel models were fitted on (every A100 and V100 variant) are predicted by the
// models fitted without that chip (models/held-out/, as docs/published-throughput.md does), and calibrated on those
// models: each device is one the predictor never saw. Reserved sources (DEVELOPERS.md) are not read.
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve, dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chipOf } from './compare_published.mjs';
import { wholeRuns } from './fit_overhead.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const prenet = resolve(root, opt('--prenet', process.env.PRENET ?? 'build/prenet'));
const outPath = resolve(root, opt('--out', 'docs/calibration-accuracy.md'));
const draws = Number(opt('--draws', '10'));
const MIN_ROWS = 8;

function run(argv) {
  return JSON.parse(execFileSync(prenet, argv, { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] }));
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const ape = (p, m) => 100 * Math.abs(p - m) / m;

// The chip-held-out kernel models of a device the shipped models were fitted on (none: the shipped ones).
const fitted = new Set(Object.values(JSON.parse(readFileSync(resolve(root, 'models/kernels.json'), 'utf8')).families)
  .flatMap((f) => f.devices ?? []).map(chipOf));
function heldOut(device) {
  const path = resolve(root, `models/held-out/without-${chipOf(device)}.json`);
  if (!fitted.has(chipOf(device))) return null;
  if (!existsSync(path)) throw new Error(`${path} is missing: run node tools/compare_published.mjs --refit first`);
  return path;
}

// A predict command line as a measurement row: each flag by its option's name, numbers as numbers.
const { options } = run(['options', '--json']);
const byFlag = new Map(options.filter((o) => o.flag).map((o) => [o.flag.replace(/^--/, ''), o]));
function rowOf(argv) {
  const row = {};
  for (let i = 1; i < argv.length; i++) {
    const flag = argv[i].replace(/^--/, '');
    if (flag === 'json') continue;
    const option = byFlag.get(flag);
    if (!option) throw new Error(`no option --${flag}`);
    const next = argv[i + 1];
    if (option.type === 'flag' && (next === undefined || next.startsWith('--'))) { row[option.name] = true; continue; }
    i++;
    row[option.name] = option.type === 'count' || option.type === 'number' ? Number(next) : next;
  }
  if (row.model && existsSync(resolve(root, row.model))) row.model = resolve(root, row.model);
  return row;
}

// What a row's measured time is, from the published figure: a step (rates: the uncalibrated step scaled by the
// predicted / published rate, exact for a pinned layout) or forward + backward (NeuSight's iterations).
function measurement(runInfo, reply) {
  const r0 = reply.results[0];
  if (runInfo.metric === 'ms') return { measures: 'forward_backward', measured_ms: runInfo.published };
  return { measures: 'step', measured_ms: r0.step.total_ms * runInfo.value(r0) / runInfo.published };
}

// The row's prediction, in the measured quantity's terms.
const quantity = (reply, measures) => {
  const s = reply.results[0].step;
  return measures === 'step' ? s.total_ms : s.total_ms - s.optimizer_ms;
};

// k distinct indices of n, the same every run (a linear congruential generator, seeded by the draw).
function choose(n, k, seed) {
  let x = (seed * 2654435761 + 12345) >>> 0;
  const picked = new Set();
  while (picked.size < k) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; picked.add(x % n); }
  return [...picked];
}

function main() {
  if (!existsSync(prenet)) { console.error(`${prenet} not found; build it first`); process.exit(2); }
  const tmp = mkdtempSync(join(tmpdir(), 'prenet-calibration-'));
  try {
    const byDevice = new Map();
    for (const r of wholeRuns(tmp).filter((x) => x.source !== 'large runs')) {
      const argv = r.args;
      const device = argv[argv.indexOf('--hardware') + 1];
      if (!byDevice.has(device)) byDevice.set(device, []);
      byDevice.get(device).push(r);
    }
    const sections = [];
    const summary = [];
    for (const [device, runs] of [...byDevice].sort()) {
      if (runs.length < MIN_ROWS) continue;
      const models = heldOut(device);
      const extra = models ? ['--models', models] : [];
      const rows = [];
      for (const r of runs) {
        let reply;
        try { reply = run([...r.args, ...extra]); } catch { continue; }  // refused rows are the other reports' business
        if (!reply.results?.[0] || reply.results[0].error) continue;
        const m = measurement(r, reply);
        rows.push({ label: r.label, source: r.source, row: { ...rowOf(r.args), ...m }, before: quantity(reply, m.measures), argv: r.args });
      }
      if (rows.length < MIN_ROWS) continue;
      const result = { device, n: rows.length, models: models ? `models/held-out/${models.split('/').pop()}` : 'shipped' };
      result.uncalibrated = median(rows.map((x) => ape(x.before, x.row.measured_ms)));
      for (const k of [1, 3]) {
        const perDraw = [];
        for (let d = 0; d < draws; d++) {
          const train = choose(rows.length, k, d + 1000 * k);
          const file = join(tmp, `rows-${device}-${k}-${d}.json`);
          writeFileSync(file, JSON.stringify(train.map((i) => rows[i].row)));
          const cal = join(tmp, `cal-${device}-${k}-${d}.json`);
          run(['calibrate', '--measurements', file, ...extra, '--out', cal, '--json']);
          const held = rows.map((x, i) => i).filter((i) => !train.includes(i));
          const before = [], after = [];
          for (const i of held) {
            const x = rows[i];
            const reply = run([...x.argv, ...extra, '--calibration', cal]);
            after.push(ape(quantity(reply, x.row.measures), x.row.measured_ms));
            before.push(ape(x.before, x.row.measured_ms));
          }
          perDraw.push({ before: median(before), after: median(after) });
        }
        result[`k${k}`] = {
          median: median(perDraw.map((p) => p.after)),
          worst: Math.max(...perDraw.map((p) => p.after)),
          better: perDraw.filter((p) => p.after < p.before).length,
          before: median(perDraw.map((p) => p.before)),
        };
      }
      summary.push(result);
      console.error(`${device}: ${rows.length} rows, uncalibrated ${result.uncalibrated.toFixed(1)} %, k=1 ${result.k1.median.toFixed(1)} %, k=3 ${result.k3.median.toFixed(1)} %`);
      const sources = [...new Set(rows.map((x) => x.source))].join(', ');
      sections.push(`- ${device}: ${rows.length} rows (${sources}); kernel models: ${result.models}.`);
    }
    const version = execFileSync(prenet, ['--version'], { encoding: 'utf8' }).trim();
    const f = (x) => x.toFixed(1);
    const lines = [
      '# Calibration with your own measurements: how much k measured rows help',
      '',
      `Generated by \`node tools/calibration_report.mjs\` with prenet ${version} on ${new Date().toISOString().slice(0, 10)}. ` +
      'For every device with at least 8 whole-run rows in `data/` (llm-foundry\'s FSDP runs, NeuSight\'s iterations, the published single-GPU rows; ' +
      'the large runs are left out because their layouts are searched), k rows are drawn ' +
      `(${draws} draws, deterministic), given to \`prenet calibrate\`, and every other row of the device is predicted with \`--calibration\`. ` +
      'A row\'s measured time is its published figure as a step time (a rate turned into the time of the row\'s pinned step). ' +
      'Devices the shipped kernel models were fitted on are predicted and calibrated with the models fitted without their chip (`models/held-out/`), ' +
      'so each device is one the predictor never saw: leave one device out, plus k rows of it. How the calibration works: `docs/calibration.md`.',
      '',
      'Targets (issue #28): k = 3, median APE <= 5 % on the device\'s remaining rows, for every device with at least 8 rows; k = 1 better than uncalibrated on every such device.',
      '',
      '| device | rows | uncalibrated median APE % | k = 1: median over draws % | worst draw % | draws better than uncalibrated | k = 3: median over draws % | worst draw % | draws better |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...summary.map((r) => `| ${r.device} | ${r.n} | ${f(r.uncalibrated)} | ${f(r.k1.median)} | ${f(r.k1.worst)} | ${r.k1.better} of ${draws} | ${f(r.k3.median)} | ${f(r.k3.worst)} | ${r.k3.better} of ${draws} |`),
      '',
      'Rows per device:',
      '',
      ...sections,
      '',
      '## Targets',
      '',
      ...summary.map((r) => `- ${r.device}: k = 3 ${f(r.k3.median)} % (${r.k3.median <= 5 ? 'met' : 'missed'}); k = 1 ${f(r.k1.median)} % against ${f(r.uncalibrated)} % uncalibrated (${r.k1.median < r.uncalibrated ? 'better' : 'not better'}).`),
      '',
    ];
    writeFileSync(outPath, lines.join('\n'));
    console.error(`wrote ${outPath}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
