#!/usr/bin/env node
// Compares prenet's predicted training throughput with published figures and writes docs/published-throughput.md.
// Node 20, no dependencies. Usage: node tools/compare_published.mjs [--prenet PATH] [--out FILE] [--csv FILE] [--refit]
// (--prenet defaults to $PRENET, then build/prenet). Without --csv it reads data/published/throughput.csv (single GPU,
// NVIDIA; one of the framework overhead's fitting sources, tools/fit_overhead.mjs) and data/published/throughput_vendors.csv
// (Intel Gaudi, Google TPU and a same-recipe A100 check, some on a pinned data-parallel layout of a few devices; read here
// only, never by the overhead fit). None of the figures fits the kernel predictor: they are a validation set.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const prenet = resolve(root, opt('--prenet', process.env.PRENET ?? 'build/prenet'));
const defaultCsv = resolve(root, 'data/published/throughput.csv');
// Published rows that are not the single-GPU NVIDIA set: other vendors, and small pinned layouts (a `gpus` column).
export const VENDORS_CSV = resolve(root, 'data/published/throughput_vendors.csv');
const csvPath = resolve(root, opt('--csv', defaultCsv));
const outPath = resolve(root, opt('--out', 'docs/published-throughput.md'));

// "NVIDIA Volta", "AMD CDNA 3", "Intel Gaudi 2", "Google TPU v3": the vendor and the architecture as
// `prenet hardware --json` lists them, before any die name in brackets. Read from the sheets when no listing is given.
export function deviceFamily(id, listing) {
  const sheet = listing?.get(id) ?? JSON.parse(readFileSync(resolve(root, 'hardware', `${id}.json`), 'utf8'));
  return `${sheet.vendor} ${String(sheet.architecture).split(' (')[0]}`;
}

// id -> { vendor, architecture } from `prenet hardware --json` (the catalogue the binary was built with).
export function hardwareListing(bin) {
  const json = JSON.parse(execFileSync(bin, ['hardware', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const list = Array.isArray(json) ? json : Object.values(json).find(Array.isArray) ?? [];
  return new Map(list.map((h) => [h.id, h]));
}

// RFC 4180-ish CSV parser: quoted fields, doubled quotes, commas inside quotes.
export function parseCsv(text) {
  const rows = []; let row = []; let field = ''; let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') { if (text[i + 1] === '"') { field += '"'; i++; } else quoted = false; }
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field); field = '';
      if (row.length > 1 || row[0] !== '') rows.push(row);
      row = [];
    } else field += c;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  const [header, ...body] = rows;
  return body.map((r) => Object.fromEntries(header.map((h, j) => [h, r[j] ?? ''])));
}

const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q; const lo = Math.floor(pos); const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
};
const ranks = (xs) => {
  const idx = xs.map((v, i) => [v, i]).sort((a, b) => a[0] - b[0]);
  const r = new Array(xs.length);
  for (let i = 0; i < idx.length;) {
    let j = i; while (j + 1 < idx.length && idx[j + 1][0] === idx[i][0]) j++;
    for (let k = i; k <= j; k++) r[idx[k][1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return r;
};
const spearman = (a, b) => {
  const ra = ranks(a); const rb = ranks(b); const n = a.length;
  const ma = ra.reduce((s, v) => s + v, 0) / n; const mb = rb.reduce((s, v) => s + v, 0) / n;
  let num = 0; let da = 0; let db = 0;
  for (let i = 0; i < n; i++) { num += (ra[i] - ma) * (rb[i] - mb); da += (ra[i] - ma) ** 2; db += (rb[i] - mb) ** 2; }
  return da && db ? num / Math.sqrt(da * db) : NaN;
};

// The chip of a catalogue id: its leading token when that names a part (v100-sxm2-16gb -> v100, t4 -> t4),
// else the whole id (rtx-3090). Variants of one chip share the silicon the kernel models learn from.
export const chipOf = (id) => { const head = id.split('-')[0]; return /^[a-z]+\d+[a-z]*$/.test(head) ? head : id; };

// Every device whose kernels the shipped models were fitted on (models/kernels.json, all families).
function fittedChips() {
  const models = JSON.parse(readFileSync(resolve(root, 'models/kernels.json'), 'utf8'));
  return new Set(Object.values(models.families).flatMap((f) => f.devices ?? []).map(chipOf));
}

// Kernel models fitted without any device of `chip` (`prenet fit --without chip`), so that a published row on
// that chip judges a model which never saw it. Fitted once (minutes) and kept in models/held-out/; --refit fits
// each chip again, once per run (not once per published row).
const refitted = new Set();
function heldOutModels(chip) {
  const path = resolve(root, `models/held-out/without-${chip}.json`);
  if (!existsSync(path) || (args.includes('--refit') && !refitted.has(chip))) {
    refitted.add(chip);
    console.error(`fitting kernel models without ${chip} (a few minutes) ...`);
    execFileSync(prenet, ['fit', '--without', chip, '--models', path,
      '--report', resolve(root, `models/held-out/without-${chip}.md`), '--plots', resolve(root, `build/held-out/plots-${chip}`)],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return path;
}

// The prenet arguments that predict a published row (tools/fit_overhead.mjs predicts the same rows with them).
export function throughputArgs(r) {
  const a = ['predict', '--model', r.model, '--hardware', r.hardware, '--batch', r.batch,
    '--precision', r.precision, '--optimizer', r.optimizer, '--attention', 'eager', '--json'];
  if (r.seq) a.push('--seq', r.seq);
  if (r.image) a.push('--image', r.image);
  if (r.grad_accum) a.push('--grad-accum', r.grad_accum);
  // Convolutions run channels-last where the recipe says "NHWC" in its framework column, and in TensorFlow, whose
  // graph layout assignment puts f16 convolutions in NHWC on tensor-core GPUs (data/published/README.md).
  if (/\bNHWC\b/.test(r.framework) || r.framework.startsWith('TensorFlow')) a.push('--channels-last');
  // throughput_vendors.csv only: activation checkpointing as published, and a data-parallel layout pinned over `gpus`
  // devices (batch per device, one replica each, no sharding, nothing left to the plan search).
  const gpus = Number(r.gpus) || 1;
  if (gpus > 1) {
    a.push('--gpus', String(gpus), '--dp', String(gpus), '--tp', '1', '--pp', '1', '--cp', '1', '--zero', '0');
    a.push('--checkpointing', r.checkpointing || 'none');
  } else if (r.checkpointing && r.checkpointing !== 'none') a.push('--checkpointing', r.checkpointing);
  return a;
}

function predict(r, models) {
  const a = throughputArgs(r);
  if (models) a.push('--models', models);
  const out = JSON.parse(execFileSync(prenet, a, { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const res = out.results[0];
  // What PyTorch's allocator would hold at the peak (max_memory_reserved: no CUDA context, no NCCL buffers).
  const reserved = res.memory.peak_reserved_bytes;
  return { samples: res.throughput.samples_per_s, fits: res.memory?.fits, reserved, cmd: `prenet ${a.join(' ')}` };
}

// Rows measured with tools/measure/measure_steps.py carry PyTorch's peak reserved memory
// (torch.cuda.max_memory_reserved: the caching allocator's hold, without the CUDA context); prenet's
// memory.peak_reserved_bytes is the comparable figure. Memory does not depend on the kernel models.
function memorySection(results, fmt, signed) {
  const rows = results.filter((r) => Number(r.peak_reserved_bytes) > 0);
  if (!rows.length) return [];
  const gib = (b) => fmt(b / 2 ** 30, 2);
  const lines = ['## Peak memory', '',
    'Measured: `torch.cuda.max_memory_reserved()` over the timed steps. Predicted: `memory.peak_reserved_bytes` (the allocator\'s hold: without the CUDA context and NCCL\'s buffers).', '',
    '| model | hardware | precision | batch | seq | measured reserved (GiB) | predicted (GiB) | error % |', '|---|---|---|---:|---:|---:|---:|---:|'];
  const errs = [];
  for (const r of rows) {
    const predicted = r.reserved;
    const err = (predicted - Number(r.peak_reserved_bytes)) / Number(r.peak_reserved_bytes) * 100;
    errs.push(Math.abs(err));
    lines.push(`| ${r.model} | ${r.hardware} | ${r.precision} | ${r.batch} | ${r.seq || '–'} | ${gib(Number(r.peak_reserved_bytes))} | ${gib(predicted)} | ${signed(err)} |`);
  }
  lines.push('', `Median |error| ${fmt(quantile(errs, 0.5))} %, largest ${fmt(Math.max(...errs))} %, n = ${errs.length}.`, '');
  return lines;
}

// throughput_vendors.csv: accelerators other than the single-GPU NVIDIA set, each row predicted on its own chip's
// sheet, on `gpus` devices where the published run was a pinned data-parallel layout (samples/s over all of them).
function vendorSection(results, fmt, signed, stats) {
  const short = (m) => m.replace(/^data\/published\/configs\//, 'configs/');
  const lines = ['## Other vendors and pinned layouts', '',
    `Published figures: \`data/published/throughput_vendors.csv\` (sources, licences and the exact table rows in \`data/published/README.md\`). ` +
    'These rows are read by this report only: they are not among the framework overhead\'s fitting sources (`tools/fit_overhead.mjs` reads ' +
    '`throughput.csv`), and nothing was tuned on them. A row on *n* devices is predicted with its layout pinned: ' +
    '`--gpus n --dp n --tp 1 --pp 1 --cp 1 --zero 0 --batch <per device> --checkpointing none` (published and predicted samples/s are over all *n* devices). ' +
    'Columns and the chip-held-out rule as above; Gaudi and TPU chips are not in the kernel fit, so their rows use the shipped models.', '',
    '| model | hardware | devices | precision | batch / device | seq or image | published (samples/s) | predicted, chip held out | error % | shipped models | error % | fits |',
    '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|'];
  for (const r of results) {
    lines.push(`| ${short(r.model)} | ${r.hardware} | ${Number(r.gpus) || 1} | ${r.precision} | ${r.batch}${r.checkpointing && r.checkpointing !== 'none' ? ` (${r.checkpointing} checkpointing)` : ''} | ${r.seq || (r.image ? `${r.image} px` : '–')} | ${r.published} | ${fmt(r.predicted)} | ${signed(r.err)} | ${r.seen ? fmt(r.shipped) : 'same'} | ${r.seen ? signed(r.shippedErr) : ''} | ${r.fits === false ? 'no' : 'yes'} |`);
  }
  lines.push('', `Overall: ${stats(results.map((r) => r.ape))}; mean signed error ${fmt(results.reduce((a, r) => a + r.err, 0) / results.length)} %.`, '');
  return lines;
}

// Issue #29's target: whole-step error per vendor x generation (the sheet's vendor and architecture, as listed by
// `prenet hardware --json`), over every scored row of both published sets. "Worst" is the row furthest off (signed);
// "too fast" counts the rows whose predicted throughput is above the published one.
function familyTable(results, fmt, signed, withVendors, listing) {
  const byFamily = new Map();
  for (const r of results) { if (!byFamily.has(r.family)) byFamily.set(r.family, []); byFamily.get(r.family).push(r); }
  const order = [...byFamily.keys()].sort((a, b) => a.localeCompare(b));
  const lines = ['## Per vendor x generation', '',
    `Every scored row${withVendors ? ' of `throughput.csv` and `throughput_vendors.csv`' : ''}, grouped by the vendor and architecture of its ` +
    'hardware sheet (`prenet hardware --json`), with the chip held out where the kernel fit saw it. Worst: the row with the largest |error| ' +
    '(signed; predicted / published in brackets). Too fast: rows predicted above the published throughput.', '',
    '| vendor x generation | chips | rows | median APE % | worst error % (row) | too fast |', '|---|---|---:|---:|---|---:|'];
  for (const f of order) {
    const rs = byFamily.get(f);
    const worst = rs.reduce((w, r) => (r.ape > w.ape ? r : w));
    const label = `${worst.model.replace(/^data\/published\/configs\//, '').replace(/\.json$/, '')} ${worst.hardware}${Number(worst.gpus) > 1 ? ` x${worst.gpus}` : ''} b${worst.batch}`;
    lines.push(`| ${f} | ${[...new Set(rs.map((r) => r.hardware))].join(', ')} | ${rs.length} | ${fmt(quantile(rs.map((r) => r.ape), 0.5))} | ` +
      `${signed(worst.err)} (${label}; x${(worst.predicted / worst.published).toFixed(2)}) | ${rs.filter((r) => r.predicted > r.published).length} of ${rs.length} |`);
  }
  const all = results.map((r) => r.ape);
  lines.push(`| all | ${new Set(results.map((r) => r.hardware)).size} chips | ${results.length} | ${fmt(quantile(all, 0.5))} | | ${results.filter((r) => r.predicted > r.published).length} of ${results.length} |`, '');
  if (listing) {
    const missing = new Map();
    for (const id of listing.keys()) {
      const f = deviceFamily(id, listing);
      if (byFamily.has(f)) continue;
      if (!missing.has(f)) missing.set(f, []);
      missing.get(f).push(id);
    }
    if (missing.size) lines.push(`No scored row yet (catalogue families without a published whole-step figure here): ` +
      [...missing.keys()].sort((a, b) => a.localeCompare(b)).map((f) => `${f} (${missing.get(f).join(', ')})`).join('; ') + '.', '');
  }
  return lines;
}

// docs/accuracy.md is written by `prenet fit`; its "Whole training steps against published throughput" section gets the
// per-vendor table between these markers from here (inserted after the section's pointer paragraph when absent, e.g.
// after a refit), so that rerunning this tool restores it.
const ACCURACY_BEGIN = '<!-- per-vendor x generation: node tools/compare_published.mjs -->';
const ACCURACY_END = '<!-- end per-vendor x generation -->';
export function withFamilyBlock(doc, block) {
  const wrapped = `${ACCURACY_BEGIN}\n${block.trim()}\n${ACCURACY_END}`;
  const a = doc.indexOf(ACCURACY_BEGIN); const b = doc.indexOf(ACCURACY_END);
  if (a >= 0 && b > a) return doc.slice(0, a) + wrapped + doc.slice(b + ACCURACY_END.length);
  const heading = doc.indexOf('## Whole training steps against published throughput');
  if (heading < 0) return doc;
  const next = doc.indexOf('\n## ', heading + 1);
  const at = next < 0 ? doc.length : next + 1;
  return `${doc.slice(0, at).replace(/\n*$/, '\n\n')}${wrapped}\n\n${doc.slice(at)}`;
}

function accuracyBlock(results, vendorResults, table) {
  const vendorsSeen = [...new Set(vendorResults.map((r) => r.family))].join(', ');
  return [`Per vendor x generation (issue #29): all ${results.length + vendorResults.length} scored rows, the ${results.length} ` +
    `single-GPU NVIDIA rows of \`data/published/throughput.csv\` and the ${vendorResults.length} of ` +
    `\`data/published/throughput_vendors.csv\` (${vendorsSeen}: optimum-habana's single-card CI baselines, the Hugging Face ` +
    'blog\'s BERT-base pre-training on 8 Gaudi 2 and 8 A100, Flax\'s ResNet-50 on a TPU v3-8; pinned data-parallel layouts ' +
    'predicted on that many devices), grouped by the hardware sheet\'s vendor and architecture. Leave one accelerator out where ' +
    'data exists: a V100 or A100 row is predicted by kernel models fitted without that chip, and no Gaudi or TPU kernel is in ' +
    'the fit at all. Nothing was tuned on these rows (the other vendors\' rows are not among the framework overhead\'s fitting ' +
    'sources either). Each row runs under its accelerator\'s usual framework (`--framework auto`: XLA on the TPU, the graph ' +
    'compiler\'s fused element-wise chains on Gaudi; before that default, under generic PyTorch eager: TPU v3 57.0 %, Gaudi 2 ' +
    '37.4 %, Gaudi 3 29.5 %, ViT worse with fusion, as it was already too fast). Every row, its command and source, and what ' +
    'the misses are made of: `docs/published-throughput.md`.', '',
    ...table.slice(4)].join('\n');
}

function main() {
  if (!existsSync(prenet)) { console.error(`${prenet} not found; build it first (bash scripts/build.sh native)`); process.exit(2); }
  const all = parseCsv(readFileSync(csvPath, 'utf8'));
  // Rows whose published workload is not what the row's settings describe stay listed but are not scored.
  const rows = all.filter((r) => r.role === 'validate');
  const excluded = all.filter((r) => r.role === 'excluded');
  // The other vendors' rows (and small pinned layouts) are read only with the default published set.
  const vendorRows = csvPath === defaultCsv && existsSync(VENDORS_CSV)
    ? parseCsv(readFileSync(VENDORS_CSV, 'utf8')).filter((r) => r.role === 'validate') : [];
  const version = 'prenet ' + execFileSync(prenet, ['--version'], { encoding: 'utf8' }).trim();
  const listing = hardwareListing(prenet);
  const fitted = fittedChips();
  const score = (r) => {
    const published = Number(r.samples_per_s);
    const shipped = predict(r);
    const seen = fitted.has(chipOf(r.hardware));
    const p = seen ? predict(r, heldOutModels(chipOf(r.hardware))) : shipped;
    const err = (p.samples - published) / published * 100;
    const shippedErr = (shipped.samples - published) / published * 100;
    return { ...r, published, predicted: p.samples, fits: p.fits, err, ape: Math.abs(err), seen,
      shipped: shipped.samples, shippedErr, shippedApe: Math.abs(shippedErr), reserved: shipped.reserved,
      family: deviceFamily(r.hardware, listing) };
  };
  const results = rows.map(score);
  const vendorResults = vendorRows.map(score);
  const fmt = (x, d = 1) => Number.isFinite(x) ? x.toFixed(d) : 'n/a';
  const stats = (xs) => `median APE ${fmt(quantile(xs, 0.5))} %, p90 APE ${fmt(quantile(xs, 0.9))} %, n = ${xs.length}`;
  const lines = [];
  const published = csvPath === resolve(root, 'data/published/throughput.csv');
  lines.push(`# Predicted vs ${published ? 'published' : 'measured'} single-GPU training throughput`, '');
  lines.push(`Generated by \`node tools/compare_published.mjs\` with \`${version}\` on ${new Date().toISOString().slice(0, 10)}.`,
    published ? 'Published figures: `data/published/throughput.csv` (sources and exact table rows there and in `data/published/README.md`).'
      : `Figures: \`${relative(root, csvPath)}\` (how each was measured in its \`source_note\` and \`framework\` columns).`,
    'Every row has role `validate`: none of them fits the kernel predictor, which is fitted on kernel timings only. They are one of the four ' +
    'sources of the framework overhead\'s three parameters (`models/overhead.json`, `tools/fit_overhead.mjs`); with this source left out of ' +
    'that fit its median APE is given in `docs/parallel-accuracy.md` ("Framework overhead").',
    'Each prediction is `prenet predict --model M --hardware H --batch B [--seq S] [--image I] [--grad-accum N] --precision P --optimizer O --attention eager --json [--models held-out.json]`, `results[0].throughput.samples_per_s`.',
    'Error % = (predicted − published) / published; APE = |error %|.', '',
    '**Chip held out.** The target is accuracy on accelerators outside the fitting data. Where a row\'s chip is among the devices the shipped kernel models were fitted on (every V100 or A100 variant, T4, ...), the *predicted* column uses kernel models fitted with every variant of that chip left out (`prenet fit --without <chip>`, kept in `models/held-out/`; its own accuracy report beside it); *shipped* is what `prenet predict` prints with the built-in models. Rows on chips the fit never saw use the shipped models for both. All statistics below are on the *predicted* (chip held out) column unless named *shipped*.', '');
  lines.push('## Rows', '');
  lines.push('| model | hardware | precision | batch | seq | published (samples/s) | predicted, chip held out | error % | shipped models | error % | fits |');
  lines.push('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  const signed = (x) => `${x >= 0 ? '+' : ''}${fmt(x)}`;
  for (const r of results) {
    lines.push(`| ${r.model} | ${r.hardware} | ${r.precision} | ${r.batch} | ${r.seq || '–'} | ${r.published} | ${fmt(r.predicted)} | ${signed(r.err)} | ${r.seen ? fmt(r.shipped) : 'same'} | ${r.seen ? signed(r.shippedErr) : ''} | ${r.fits === false ? 'no' : 'yes'} |`);
  }
  if (excluded.length) {
    lines.push('', `Listed in \`throughput.csv\` but not scored (${excluded.length}; the published workload differs from the row's settings, reason in each \`source_note\`): ` +
      excluded.map((r) => `${r.model} ${r.hardware} ${r.precision} b${r.batch}${r.seq ? ` s${r.seq}` : ''} (${r.samples_per_s}/s, predicted ${fmt(predict(r).samples)})`).join('; ') + '.');
  }
  lines.push('', '## Summary', '');
  lines.push(`- Overall, chip held out: ${stats(results.map((r) => r.ape))}; mean signed error ${fmt(results.reduce((s, r) => s + r.err, 0) / results.length)} %.`);
  lines.push(`- Overall, shipped models: ${stats(results.map((r) => r.shippedApe))}.`);
  const unseen = results.filter((r) => !r.seen);
  if (unseen.length) lines.push(`- Chips the fit never saw (${[...new Set(unseen.map((r) => r.hardware))].join(', ')}): ${stats(unseen.map((r) => r.ape))}.`);
  const groups = (key) => { const g = new Map(); for (const r of results) { const k = key(r); if (!g.has(k)) g.set(k, []); g.get(k).push(r); } return g; };
  for (const [m, rs] of groups((r) => r.model)) lines.push(`- ${m}: ${stats(rs.map((r) => r.ape))}.`);
  for (const [h, rs] of groups((r) => r.hardware)) lines.push(`- on ${h}: ${stats(rs.map((r) => r.ape))}.`);
  // Issue #12's target: no device family (vendor x generation, from the sheet's architecture) above 20% median.
  for (const [f, rs] of groups((r) => r.family)) {
    const median = quantile(rs.map((r) => r.ape), 0.5);
    lines.push(`- device family ${f}: ${stats(rs.map((r) => r.ape))}; ${median <= 20 ? 'within' : 'above'} the 20% family target.`);
  }
  for (const [f, rs] of groups((r) => r.framework.split(/[ (]/)[0])) lines.push(`- ${f}: ${stats(rs.map((r) => r.ape))}.`);
  for (const [k, rs] of groups((r) => `${r.model} ${r.precision === 'fp16' || r.precision === 'bf16' ? 'mixed precision' : 'fp32/tf32'}`)) lines.push(`- ${k}: ${stats(rs.map((r) => r.ape))}.`);

  // Ranking: within one model + precision (+ seq, since tables differ in sequence length), order the accelerators.
  lines.push('', '## Ranking check', '',
    'Within each group of rows with the same model, precision (fp32 and tf32 together: each chip\'s default full-precision math) and sequence length, every pair of rows on two different chips is ordered by published and by predicted throughput; a pair "flips" when the two orderings disagree (rows on the same chip, e.g. V100 16 GB and 32 GB or two batch sizes, are not paired: the ranking is of accelerators). Spearman ρ is over all the group\'s rows. Groups with one row are omitted.', '');
  lines.push('| group | rows | Spearman ρ | flipped pairs / ties |', '|---|---:|---:|---|');
  let pairs = 0; let flips = 0; let ties = 0;
  // fp32 and tf32 are one class: each chip's default full-precision math (TF32 on an A100, FP32 on a V100).
  const precisionClass = (p) => (p === 'fp32' || p === 'tf32' ? 'fp32/tf32' : p);
  for (const [k, rs] of groups((r) => `${r.model} ${precisionClass(r.precision)}${r.seq ? ` seq ${r.seq}` : ''}`)) {
    if (rs.length < 2) continue;
    const flipped = [];
    for (let i = 0; i < rs.length; i++) for (let j = i + 1; j < rs.length; j++) {
      const a = rs[i]; const b = rs[j];
      if (chipOf(a.hardware) === chipOf(b.hardware)) continue;  // the ranking is of accelerators, not batch sizes
      if (Math.abs(a.predicted - b.predicted) <= 0.005 * Math.max(a.predicted, b.predicted)) {
        ties++; flipped.push(`tie: ${a.hardware} b${a.batch} vs ${b.hardware} b${b.batch} predicted equal (published ${a.published} vs ${b.published})`);
        continue;
      }
      pairs++;
      if (Math.sign(a.published - b.published) !== Math.sign(a.predicted - b.predicted)) {
        flips++; flipped.push(`${a.hardware} b${a.batch} vs ${b.hardware} b${b.batch} (published ${a.published} vs ${b.published}, predicted ${fmt(a.predicted)} vs ${fmt(b.predicted)})`);
      }
    }
    lines.push(`| ${k} | ${rs.length} | ${fmt(spearman(rs.map((r) => r.published), rs.map((r) => r.predicted)), 2)} | ${flipped.length ? flipped.join('; ') : 'none'} |`);
  }
  lines.push('', `Pairs with distinct predictions: ${pairs}; flipped: ${flips}. Pairs predicted equal (same silicon and batch, e.g. V100 16 GB vs 32 GB, which differ only in memory size in the catalogue): ${ties}.`, '');
  lines.push(...memorySection(results, fmt, signed));
  if (vendorResults.length) lines.push(...vendorSection(vendorResults, fmt, signed, stats));
  const table = familyTable([...results, ...vendorResults], fmt, signed, vendorResults.length > 0, csvPath === defaultCsv ? listing : null);
  lines.push(...table);
  const accuracyPath = resolve(root, 'docs/accuracy.md');
  if (vendorResults.length && outPath === resolve(root, 'docs/published-throughput.md') && existsSync(accuracyPath))
    writeFileSync(accuracyPath, withFamilyBlock(readFileSync(accuracyPath, 'utf8'), accuracyBlock(results, vendorResults, table)));
  lines.push('<!-- discussion -->');
  const existing = existsSync(outPath) ? readFileSync(outPath, 'utf8') : '';
  const marker = existing.indexOf('<!-- discussion -->');
  const discussion = marker >= 0 ? existing.slice(marker + '<!-- discussion -->'.length) : '\n\n## Discussion\n\n(to be written)\n';
  writeFileSync(outPath, lines.join('\n') + discussion);
  for (const r of [...results, ...vendorResults]) console.log(`${r.model.replace(/^data\/published\/configs\//, '').padEnd(10)} ${r.hardware.padEnd(15)} ${(Number(r.gpus) > 1 ? `x${r.gpus}` : '').padEnd(3)} ${r.precision.padEnd(5)} b${String(r.batch).padEnd(4)} s${(r.seq || '-').padEnd(4)} published ${String(r.published).padStart(7)} predicted ${fmt(r.predicted).padStart(8)} err ${fmt(r.err).padStart(7)} %`);
  console.log(`overall: ${stats(results.map((r) => r.ape))}`);
  if (vendorResults.length) console.log(`other vendors and pinned layouts: ${stats(vendorResults.map((r) => r.ape))}`);
  console.log(`ranking: ${flips} of ${pairs} pairs flipped (${ties} predicted ties); wrote ${outPath}`);
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('compare_published.mjs')) main();
