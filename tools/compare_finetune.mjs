#!/usr/bin/env node
// Compares prenet's fine-tuning predictions (--finetune full|lora|qlora) with published memory figures and
// "fits on GPU X" claims (data/published/finetune_memory.csv), and its trainable-parameter counts with PEFT's
// print_trainable_parameters() printouts, and writes docs/finetune-accuracy.md. None of it is used for fitting.
// Node 20, no dependencies. Usage: node tools/compare_finetune.mjs [--prenet PATH] [--out FILE]
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from './compare_published.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const prenet = resolve(root, opt('--prenet', process.env.PRENET ?? 'build/prenet'));
const outPath = resolve(root, opt('--out', 'docs/finetune-accuracy.md'));
const GiB = 2 ** 30;

const run = (a) => JSON.parse(execFileSync(prenet, a, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 }));

// The prenet arguments of one published row.
export function rowArgs(r) {
  const a = ['predict', '--model', r.model, '--hardware', r.hardware, '--precision', r.precision, '--optimizer',
    r.optimizer, '--optimizer-impl', r.optimizer_impl, '--batch', r.batch, '--seq', r.seq, '--finetune', r.finetune];
  if (r.finetune === 'full' && r.precision !== 'fp32') a.push('--mixed', 'half');
  if (r.lora_rank) a.push('--lora-rank', r.lora_rank);
  if (r.lora_targets) a.push('--lora-targets', r.lora_targets);
  if (r.lora_dropout) a.push('--lora-dropout', r.lora_dropout);
  if (r.checkpointing === 'true') a.push('--checkpointing');
  return [...a, '--json'];
}

// PEFT's own printouts of print_trainable_parameters() ("trainable params: N || all params: M").
const PEFT_COUNTS = [
  { model: 'llama2-7b', rank: 8, targets: 'q,v', trainable: 4194304, all: 6742609920, source: 'the printout issue #15 quotes for Llama-2-7b-hf, r=8 on q_proj, v_proj (not re-read from a PEFT page here)' },
  { model: 'llama2-7b', rank: 16, targets: 'all', trainable: 39976960, all: 6778392576, source: 'Llama-2-7b-hf, r=16 on every linear layer: figure as commonly printed, not re-read here; r x (in + out) from the config gives it' },
  { model: 'mistral-7b', rank: 8, targets: 'q,v', trainable: 3407872, all: 7245139968, source: 'Mistral-7B-v0.1, r=8 on q_proj, v_proj: figure as commonly printed, not re-read here; r x (in + out) from the config gives it' },
  { model: 'qwen2.5-3b', rank: 16, targets: 'q,v', trainable: 3686400, all: 3089625088, source: "PEFT README: Qwen2.5-3B-Instruct, LoraConfig(r=16, lora_alpha=32, task_type=CAUSAL_LM)" },
];

const gb = (x) => (x / 1e9).toFixed(1);
const pct = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;

function memoryRows() {
  const rows = parseCsv(readFileSync(resolve(root, 'data/published/finetune_memory.csv'), 'utf8'));
  const out = [];
  for (const r of rows) {
    const doc = run(rowArgs(r));
    const m = doc.results[0].memory;
    const tensors = m.peak_bytes_per_device - m.framework_reserve_bytes;
    let verdict, predicted, published, error = null;
    if (r.measure === 'fits' || r.measure === 'oom') {
      const want = r.measure === 'fits';
      verdict = m.fits === want ? 'reproduced' : 'MISS';
      predicted = `${gb(m.peak_bytes_per_device)} GB: ${m.fits ? 'fits' : 'does not fit'} ${gb(m.capacity_bytes)} GB`;
      published = want ? `fits ${r.published} GB` : `out of memory on ${r.published} GB`;
    } else if (r.measure === 'above') {
      const ok = tensors > Number(r.published) * 1e9 && !m.fits;
      verdict = ok ? 'reproduced' : 'MISS';
      predicted = `${gb(tensors)} GB of tensors; fits no single accelerator`;
      published = `more than ${r.published} GB`;
    } else {
      const want = Number(r.published) * GiB;
      error = tensors / want - 1;
      const target = r.described === 'yes';
      verdict = target ? (Math.abs(error) <= 0.1 ? 'within 10%' : 'MISS') : 'indicative (setup not fully published)';
      predicted = `${gb(tensors)} GB allocated (peak ${gb(m.peak_bytes_per_device)} GB)`;
      published = `${r.published} GiB allocated`;
    }
    out.push({ r, m, doc, verdict, predicted, published, error });
  }
  return out;
}

function countRows() {
  return PEFT_COUNTS.map((c) => {
    const doc = run(['features', '--model', c.model, '--seq', '64', '--finetune', 'lora', '--lora-rank', String(c.rank),
      '--lora-targets', c.targets, '--json']);
    return { ...c, got: doc.trainable_params, gotAll: doc.params };
  });
}

function markdown(mem, counts) {
  const lines = [
    '# Fine-tuning against published figures',
    '',
    'Written by `node tools/compare_finetune.mjs` from `data/published/finetune_memory.csv` (every row with its source',
    'and the settings read from it). Nothing here is used for fitting. The model and its formulas: `docs/training-model.md`,',
    '"Fine-tuning".',
    '',
    '## Trainable parameters against PEFT\'s `print_trainable_parameters()`',
    '',
    '| model | rank | targets | PEFT trainable | prenet | PEFT all params | prenet | source |',
    '|---|---|---|---|---|---|---|---|',
    ...counts.map((c) => `| ${c.model} | ${c.rank} | ${c.targets} | ${c.trainable.toLocaleString('en')} | ${c.got.toLocaleString('en')}${c.got === c.trainable ? '' : ' MISS'} | ${c.all.toLocaleString('en')} | ${c.gotAll.toLocaleString('en')}${c.gotAll === c.all ? '' : ' MISS'} | ${c.source} |`),
    '',
    'Every zoo Llama, Mistral and Qwen2.5 model at ranks 8, 16 and 64, on q,v and on every projection, is checked',
    'exactly against the count from its config\'s dimensions in `tests/ops-finetune-test.cpp` (and mt0-large\'s',
    'cross-attention against PEFT\'s README printout, 2,359,296 of 1,231,940,608).',
    '',
    '## Memory and "fits on GPU X"',
    '',
    'A measured peak from `torch.cuda.max_memory_allocated` (PEFT\'s table) is compared with prenet\'s tensor peak',
    '(its peak less the framework reserve: the CUDA context and allocator slack are not in that measure); a claim',
    'that a setup fits (or runs out of memory) with prenet\'s `fits` on that accelerator, reserve included.',
    'Capacities are the spec sheets\' `memory_gb` in binary GB (a "24 GB" RTX 4090 has 24 GiB; GDDR parts with',
    'inline ECC keep 15/16 of it: `HardwareSpec::memory_bytes`).',
    '',
    '| row | setting | published | prenet | error | verdict |',
    '|---|---|---|---|---|---|',
    ...mem.map(({ r, predicted, published, error, verdict }) => {
      const setting = `${r.finetune}${r.lora_rank ? ` r${r.lora_rank} ${r.lora_targets}` : ''}, ${r.precision}, batch ${r.batch} x ${r.seq}${r.checkpointing === 'true' ? ', checkpointing' : ''} on ${r.hardware}`;
      return `| ${r.id} | ${setting} | ${published} | ${predicted} | ${error == null ? '' : pct(error)} | ${verdict} |`;
    }),
    '',
    'Sources and settings, row by row:',
    '',
    ...mem.map(({ r }) => `- **${r.id}** (${r.source_url}): ${r.quote}. Settings: ${r.notes}.`),
    '',
    'Commands: each row is `prenet ' + rowArgs(mem[0].r).join(' ') + '` with its own values.',
    '',
    `Misses: ${mem.filter((x) => x.verdict === 'MISS').map((x) => x.r.id).join(', ') || 'none'}.`,
    '',
    'Not compared yet: measured LoRA step times (no public benchmark read so far states its whole setup); the',
    'torchtune QLoRA tutorial\'s peaks (its model-initialisation peak, 9.13 GB for a 4-bit 7B, is the bf16 checkpoint',
    'being quantised on the GPU, not the training step).',
    '',
  ];
  return lines.join('\n');
}

const mem = memoryRows();
const counts = countRows();
writeFileSync(outPath, markdown(mem, counts));
for (const x of mem) console.log(`${x.r.id}: ${x.published} | ${x.predicted} | ${x.error == null ? '' : pct(x.error)} ${x.verdict}`);
for (const c of counts) console.log(`${c.model} r${c.rank} ${c.targets}: ${c.got} (PEFT ${c.trainable}), all ${c.gotAll} (PEFT ${c.all})`);
