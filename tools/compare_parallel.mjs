#!/usr/bin/env node
// Compares prenet's multi-GPU predictions (issue #17's CLI contract: --gpus, --dp/--tp/--pp, --zero, ...) with
// three measured sets and writes docs/parallel-accuracy.md:
//   - NeuSight's GPT-2 Large 4-GPU iterations (data/neusight/e2e.csv, layouts dp4 / tp4 / pp4_1; no optimizer),
//   - llm-foundry's MPT FSDP runs on A100 (data/published/llm_foundry_mpt_a100.csv; tokens/s per GPU, MFU),
//   - data-parallel runs on 2-8 GPUs (data/published/data_parallel.csv and NeuSight's dp4; samples/s),
//   - BigScience's Megatron-DeepSpeed steps (data/published/bigscience_megatron_deepspeed_a100.csv),
//   - Megatron-LM's functional tests on DGX A100, H100 and GB200 (data/published/megatron_functional_tests.csv; step time),
//   - published whole pre-training runs (data/published/large_runs.csv; GPU-hours, tokens/s per GPU, TFLOP/s).
// and, for the framework overhead (models/overhead.json, fitted on these by tools/fit_overhead.mjs), every allowed
// whole run with and without it, per source and per framework, with the fit's leave-one-source-out errors.
// The kernel models are fitted on none of them. Node 20, no dependencies.
// Usage: node tools/compare_parallel.mjs [--prenet PATH] [--out FILE] [--only neusight|foundry|dp|bigscience|megatron|large|overhead]
// Until prenet knows --gpus the tool stops with a message instead of printing numbers it did not get.
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { resolve, dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseCsv } from './compare_published.mjs';
import { wholeRuns, runPrenet } from './fit_overhead.mjs';
import { publishedRowArgs } from './published_rows.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// llm-foundry's gpu column -> hardware/ ids (its tables are DGX-style SXM4 nodes).
export const FOUNDRY_HARDWARE = { a100_40gb: 'a100-sxm4-40gb', a100_80gb: 'a100-sxm4-80gb' };
// Both llm-foundry A100 tables say "1600 Gbps node-node interconnect (RoCE)": 1600 Gb/s per 8-GPU node.
export const FOUNDRY_NETWORK = 'roce-1600g';
// FSDP sharding strategies as ZeRO stages (issue #17: FULL_SHARD = --zero 3, SHARD_GRAD_OP = --zero 2).
export const SHARDING_ZERO = { FULL_SHARD: 3, SHARD_GRAD_OP: 2, NO_SHARD: 0 };

// llm-foundry's precision and FSDP mixed-precision mode -> prenet's --precision and --mixed. Composer's
// get_mixed_precision (composer/trainer/mosaic_fsdp_utils.py) gives FSDP param_dtype = bf16 under both DEFAULT and
// PURE: the blocks are gathered and computed in bf16 beside FSDP's fp32 sharded master, and MPT's
// low_precision_layernorm keeps the norms in bf16 under autocast too. That is prenet's half recipe, not autocast's
// fp32 weights with casts, fp32 norms and an fp32 residual stream. DEFAULT reduces the gradients in fp32
// (reduce_dtype = float32), PURE in bf16.
export function foundryPrecision(precision, mpMode) {
  if ((precision === 'amp_bf16' && mpMode === 'DEFAULT') || (precision === 'bf16' && mpMode === 'PURE'))
    return ['--precision', 'bf16', '--mixed', 'half'];
  throw new Error(`no prenet precision for llm-foundry precision '${precision}' with mixed precision '${mpMode}'`);
}

// The prenet arguments of one llm-foundry run; `model` is the path of its config (max_seq_len = seq).
export function foundryArgs(r, model) {
  const gpus = Number(r.gpus);
  const hw = FOUNDRY_HARDWARE[r.gpu];
  if (!hw) throw new Error(`unknown llm-foundry gpu '${r.gpu}'`);
  if (!(r.sharding in SHARDING_ZERO)) throw new Error(`unknown FSDP sharding '${r.sharding}'`);
  if (r.cpu_offload === 'True') throw new Error('CPU offload is not modelled');
  const a = ['predict', '--model', model, '--hardware', hw, '--gpus', String(gpus), '--gpus-per-node', '8',
    '--network', FOUNDRY_NETWORK, '--dp', String(gpus), '--tp', '1', '--pp', '1', '--cp', '1',
    '--zero', String(SHARDING_ZERO[r.sharding]), '--batch', r.micro_batch, '--global-batch', r.global_batch,
    '--seq', r.seq, ...foundryPrecision(r.precision, r.mp_mode), '--framework', 'fsdp',
    // The attention kernels are first-generation FlashAttention (--attention flash1): attn_impl triton is
    // llm-foundry's flash_attn_triton.py, Tri Dao's Triton FlashAttention of 2022, and attn_impl flash (13b) is
    // flash-attn 1.0.9, the version llm-foundry's `gpu` extra installed (setup.py; FlashAttention-2 was the
    // separate `gpu-flash2` extra). Decoupled AdamW is AdamW's work. The loss is llm-foundry's default loss_fn,
    // fused_crossentropy (flash-attn's CrossEntropyLoss; llmfoundry/models/mpt/modeling_mpt.py); it changes
    // memory only.
    '--attention', 'flash1', '--optimizer', 'adamw', '--loss', 'fused'];
  // The run's activation checkpointing, pinned either way: left open, the plan search turns it on wherever prenet's
  // memory estimate says the run does not fit, and times a run that never recomputed as if it did.
  a.push('--checkpointing', r.checkpointing === 'True' ? 'full' : 'none');
  a.push('--json');
  return a;
}

// The benchmark sets max_seq_len to the run's sequence length (submit_benchmarks.py): one config per (size, seq),
// written into `dir` once; its path.
export function foundryConfig(dir, r) {
  const path = join(dir, `mpt-${r.model}-${r.seq}.json`);
  if (!existsSync(path)) {
    const c = JSON.parse(readFileSync(resolve(root, `data/published/mpt/mpt-${r.model}.json`), 'utf8'));
    c.max_seq_len = Number(r.seq);
    writeFileSync(path, JSON.stringify(c));
  }
  return path;
}

// llm-foundry's published MFU, as its scripts/train/benchmarking/collect_results.py computes it (README "MFU and
// HFU"): flops_per_seq = 2 x n_params x seq, attn_flops_per_seq = n_layers x 2 x 2 x d_model x seq^2, and
// mfu = (3 x flops_per_seq + 3 x attn_flops_per_seq) x seq_per_sec / (gpus x GPU_AVAILABLE_FLOPS), with composer's
// SpeedMonitor peak for the A100 (312e12 for bf16 and amp_bf16). So per token: 6 x every parameter (the embedding
// and the learned position table included, although a lookup does no multiply-accumulate), attention unmasked
// (12 x layers x d_model x seq, not halved for the causal mask), backward = 2 x forward, no recompute (activation
// checkpointing's and FlashAttention's are in its HFU, not here). prenet's throughput.mfu counts its own kernels'
// FLOPs instead (docs/parallel.md), so the two are compared like with like by applying this formula to prenet's
// tokens/s.
export const FOUNDRY_PEAK_FLOPS = { a100_40gb: 312e12, a100_80gb: 312e12 };
export function foundryMfuPercent(r, config, tokensPerSecondPerGpu) {
  const peak = FOUNDRY_PEAK_FLOPS[r.gpu];
  if (!peak) throw new Error(`no llm-foundry peak for gpu '${r.gpu}'`);
  const seq = Number(r.seq);
  const flopsPerToken = 6 * Number(r.params) + 12 * config.n_layers * config.d_model * seq;
  return flopsPerToken * tokensPerSecondPerGpu / peak * 100;
}

// NeuSight's 4-GPU layouts (data README: `<batch>` is the global batch): dp4 splits it over 4 replicas (DDP),
// tp4 is 4-way Megatron tensor parallel, pp4_1 a 4-stage pipeline fed one micro-batch (the whole batch).
// FP32 PyTorch without TF32 (the single-GPU rows' settings in src/fit/fit_models.cpp: fp32, eager attention, SGD).
export function neusightArgs(r) {
  const batch = Number(r.batch);
  const layouts = {
    dp4: { dp: 4, tp: 1, pp: 1, micro: batch / 4 },
    tp4: { dp: 1, tp: 4, pp: 1, micro: batch },
    pp4_1: { dp: 1, tp: 1, pp: 4, micro: batch },
  };
  const l = layouts[r.layout];
  if (!l) throw new Error(`unknown NeuSight layout '${r.layout}'`);
  if (!Number.isInteger(l.micro)) throw new Error(`batch ${batch} does not split over dp ${l.dp}`);
  return ['predict', '--model', `data/neusight/model_configs/${r.model}.json`, '--hardware', r.device,
    '--gpus', '4', '--gpus-per-node', '4', '--dp', String(l.dp), '--tp', String(l.tp), '--pp', String(l.pp),
    '--cp', '1', '--zero', '0', '--batch', String(l.micro), '--global-batch', String(batch),
    ...(l.pp > 1 ? ['--schedule', '1f1b'] : []),
    '--seq', r.seq, '--precision', 'fp32', '--attention', 'eager', '--optimizer', 'sgd', '--json'];
}

// A published data-parallel run on 2-8 GPUs of one host (data/published/data_parallel.csv): `batch` per GPU,
// `samples_per_s` over all GPUs. TensorFlow's f16 convolutions run channels-last (as the single-GPU rows of the
// same posts, tools/compare_published.mjs).
export function dataParallelArgs(r) {
  const gpus = Number(r.gpus);
  const a = ['predict', '--model', r.model, '--hardware', r.hardware, '--gpus', r.gpus, '--gpus-per-node', r.gpus,
    '--dp', r.gpus, '--tp', '1', '--pp', '1', '--zero', '0', '--batch', r.batch,
    '--global-batch', String(Number(r.batch) * gpus), '--precision', r.precision, '--optimizer', r.optimizer,
    '--attention', 'eager'];
  if (r.image) a.push('--image', r.image);
  if (r.framework.startsWith('TensorFlow') || /\bNHWC\b/.test(r.framework)) a.push('--channels-last');
  a.push('--checkpointing', 'none');  // tf_cnn_benchmarks recomputes nothing (see foundryArgs)
  a.push('--json');
  return a;
}

// A published run: its layout where published (empty fields are left to prenet's plan search), its tokens as
// --tokens so that run.gpu_hours covers the whole run.
export function largeRunArgs(r) {
  const a = ['predict', '--model', r.model, '--hardware', r.hardware, '--gpus', r.gpus];
  for (const k of ['dp', 'tp', 'pp', 'zero']) if (r[k] !== '') a.push(`--${k}`, r[k]);
  // What else a run's own script publishes (BLOOM's): its micro-batch, recompute, framework, stage split, network.
  const pinned = { micro_batch: 'batch', checkpointing: 'checkpointing', framework: 'framework', sequence_parallel: 'sequence-parallel',
    first_stage_blocks: 'first-stage-blocks', last_stage_blocks: 'last-stage-blocks', network: 'network' };
  for (const [column, flag] of Object.entries(pinned)) if ((r[column] ?? '') !== '') a.push(`--${flag}`, r[column]);
  a.push('--seq', r.seq);
  if (r.global_batch_tokens !== '') a.push('--global-batch-tokens', r.global_batch_tokens);
  a.push('--tokens', r.tokens, '--precision', r.precision);
  // Megatron/metaseq/DeepSpeed keep a half-precision model beside fp32 master weights; llm-foundry autocasts.
  if (r.precision === 'fp16' || (r.precision === 'bf16' && r.id === 'bloom-176b')) a.push('--mixed', 'half');
  // MPT-7B ran llm-foundry's Triton FlashAttention of 2022 (its config's attn_impl triton): flash1.
  const attention = r.id === 'mpt-7b' ? 'flash1' : r.id.startsWith('llama') ? 'flash' : 'eager';
  a.push('--attention', attention,
    '--optimizer', r.id === 'mpt-7b' ? 'lion' : 'adamw', '--json');
  return a;
}

// A published run's TFLOP/s as model FLOPs: Megatron(-DeepSpeed)'s throughput counts a fully recomputed forward
// ("the 4*2 co-efficient, instead of the 3*2", bigscience tr11 README), so its model share is 3/4 of it.
export const modelTflops = (r) => Number(r.published_tflops_per_gpu) * (r.tflops_count_recompute === 'yes' ? 3 / 4 : 1);

// BigScience's Megatron-DeepSpeed steps on 32-384 A100 80GB (data/published/bigscience_megatron_deepspeed_a100.csv):
// GPT-style models of its tr11 search (BLOOM's architecture: ALiBi, embedding LayerNorm, GELU, tied 250,880-token
// vocabulary, Megatron's dropout 0.1 defaults), one config per (hidden, layers, heads), written into `dir` once.
export function bigscienceConfig(dir, r) {
  const path = join(dir, `bigscience-${r.hidden}h-${r.layers}l-${r.heads}a.json`);
  if (!existsSync(path))
    writeFileSync(path, JSON.stringify({ model_type: 'bloom', hidden_size: Number(r.hidden), n_layer: Number(r.layers),
      n_head: Number(r.heads), vocab_size: Number(r.vocab), hidden_dropout: 0.1, attention_dropout: 0.1 }));
  return path;
}

// The prenet arguments of one BigScience step, as its scripts ran it (tr11-176B-ml.slurm and the prequel's notes):
// Megatron tensor parallelism without sequence parallelism (that fork has none) inside DeepSpeed's pipeline engine
// and ZeRO-1 (--framework deepspeed: no overlap of its collectives, ZeRO-1 exposed), full activation checkpointing
// (--checkpoint-activations), Megatron's fused-softmax attention (eager), fp16 with a half-precision model until the
// BF16 optimizer of 2022-02-28 (bf16, gradients accumulated in fp32), Jean Zay's 8-GPU nodes with 4 Omni-Path links.
// The embedding counts as a stage's block from the day `--pp-partition-method 'type:transformer|embedding'` came in.
export function bigscienceArgs(r, model) {
  const a = ['predict', '--model', model, '--hardware', 'a100-sxm4-80gb', '--gpus', r.gpus, '--gpus-per-node', '8',
    '--network', BIGSCIENCE_NETWORK, '--dp', r.dp, '--tp', r.tp, '--pp', r.pp, '--cp', '1', '--zero', '1',
    '--batch', r.mbs, '--global-batch', r.global_batch, '--seq', r.seq, '--precision', r.precision, '--mixed', 'half',
    '--attention', 'eager', '--optimizer', 'adamw', '--checkpointing', 'full', '--framework', 'deepspeed'];
  if (Number(r.tp) > 1) a.push('--sequence-parallel', 'off');
  if (r.first_stage_blocks !== '') a.push('--first-stage-blocks', r.first_stage_blocks, '--last-stage-blocks', r.last_stage_blocks);
  a.push('--json');
  return a;
}
// "8 GPUs per node Using NVLink 4 inter-gpu connects, 4 OmniPath links" (tr11 README, Hardware): 4 x 100 Gb/s.
export const BIGSCIENCE_NETWORK = '4x100g-ib';

export const ape = (predicted, measured) => Math.abs(predicted - measured) / measured * 100;
// The factor by which a prediction is off, >= 1 whichever side it errs on.
export const offBy = (predicted, measured) => Math.max(predicted / measured, measured / predicted);
export const median = (xs) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
// prenet's MFU as a percentage whether it reports a fraction or a percentage (the contract does not say).
export const percent = (mfu) => (mfu <= 1 ? mfu * 100 : mfu);

// The multi-GPU options the rows need, as `prenet options --json` lists them.
export const NEEDED_OPTIONS = ['gpus', 'gpus-per-node', 'network', 'dp', 'tp', 'pp', 'cp', 'zero', 'global-batch',
  'global-batch-tokens', 'schedule'];
export function missingOptions(optionsJson) {
  const flags = new Set((optionsJson.options ?? []).map((o) => String(o.flag ?? '').replace(/^--/, '')));
  return NEEDED_OPTIONS.filter((f) => !flags.has(f));
}

// The attention model against aiconfigurator's A100 forward timings at their longest sequence: median APE.
function longAttentionCheck(prenet, dir) {
  const rows = parseCsv(readFileSync(resolve(root, 'data/aiconfigurator/ops/flash_attention.csv'), 'utf8'))
    .filter((r) => r.device === 'a100-sxm4-80gb');
  const seq = Math.max(...rows.map((r) => Number(r.seq)));
  const longest = rows.filter((r) => Number(r.seq) === seq);
  const cols = Object.keys(longest[0]);
  const path = join(dir, 'attention.csv');
  writeFileSync(path, [cols.join(','), ...longest.map((r) => cols.map((c) => r[c]).join(','))].join('\n') + '\n');
  const out = parseCsv(execFileSync(prenet, ['kernels', '--csv', path, '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  return { n: out.length, seq, median: median(out.map((r) => ape(Number(r.predicted_ms), Number(r.latency_ms)))) };
}

function run(prenet, args) {
  try {
    return JSON.parse(execFileSync(prenet, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] }));
  } catch (e) {
    return { error: (e.stderr || e.message || '').toString().trim().split('\n').slice(-1)[0] };
  }
}
const cmd = (args) => `prenet ${args.map((x) => (/[\s,]/.test(x) ? `'${x}'` : x)).join(' ')}`;

// The framework overhead: its fitted parameters, the fit's leave-one-source-out errors (models/overhead.json), and
// every allowed whole run answered by the CLI with `--overhead none` and with the fitted overhead, per source and
// per framework. The CLI's answers are the truth here: where it searches a layout, the overhead may change it.
function overheadSection(prenet, lines, summary, fmt) {
  const model = JSON.parse(readFileSync(resolve(root, 'models/overhead.json'), 'utf8'));
  const p = model.parameters;
  lines.push('## Framework overhead (fitted, leave one source out)', '',
    `\`models/overhead.json\` (fitted ${model.date} by \`${model.command}\` on ${Object.entries(model.fitted_on).map(([k, n]) => `${k} (${n})`).join(', ')}): ` +
    `${p.launch_gap_ms.value} ${p.launch_gap_ms.unit}, ${p.step_fixed_ms.value} ${p.step_fixed_ms.unit}, ${p.overlap_loss.value} as ${p.overlap_loss.unit} ` +
    '(src/run/overhead.hpp; docs/training-model.md "Framework overhead"). Objective: ' + `${model.objective}.`, '',
    '### Leave one source out', '',
    'Each source predicted with the parameters fitted on the other sources only (the fit\'s own arithmetic on the kernel-only answers: exact where the layout is pinned).', '',
    '| source left out | parameters fitted on the others (gap ms, fixed ms, loss) | rows | median APE without overhead % | held out % | worst off by, without / held out | > 1.5x, without / held out |',
    '|---|---|---:|---:|---:|---|---|');
  for (const [source, r] of Object.entries(model.leave_one_source_out)) {
    const q = r.parameters;
    lines.push(`| ${source} | ${q.launch_gap_ms}, ${q.step_fixed_ms}, ${q.overlap_loss} | ${r.held_out.rows} | ${r.without_overhead.median_ape_percent} | ${r.held_out.median_ape_percent} | ${r.without_overhead.worst_off_by}x / ${r.held_out.worst_off_by}x | ${r.without_overhead.over_1_5x} / ${r.held_out.over_1_5x} |`);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'prenet-overhead-'));
  const runs = wholeRuns(tmp).map((run) => {
    const answer = (extra) => {
      const res = runPrenet(prenet, [...run.args, ...extra]);
      const r0 = res.results?.[0];
      return res.error || !r0 || r0.error ? NaN : run.value(r0);
    };
    return { ...run, none: answer(['--overhead', 'none']), fitted: answer([]) };
  });
  rmSync(tmp, { recursive: true, force: true });
  const stats = (rs, key) => {
    const ok = rs.filter((r) => Number.isFinite(r[key]) && r[key] > 0);
    const f = ok.map((r) => offBy(r[key], r.published));
    return { n: ok.length, median: median(ok.map((r) => ape(r[key], r.published))), worst: Math.max(...f), over: f.filter((x) => x > 1.5).length };
  };
  const table = (title, key) => {
    const groups = new Map();
    for (const r of runs) { const k = key(r); if (!groups.has(k)) groups.set(k, []); groups.get(k).push(r); }
    lines.push('', `### ${title}`, '', 'The CLI\'s answers: `--overhead none` (kernels only) and the default (fitted overhead).', '',
      '| group | rows | median APE, kernels only % | with overhead % | worst off by, kernels only / with | > 1.5x, kernels only / with |', '|---|---:|---:|---:|---|---|');
    for (const [k, rs] of groups) {
      const a = stats(rs, 'none'); const b = stats(rs, 'fitted');
      lines.push(`| ${k} | ${b.n} | ${fmt(a.median)} | ${fmt(b.median)} | ${fmt(a.worst, 2)}x / ${fmt(b.worst, 2)}x | ${a.over} / ${b.over} |`);
    }
  };
  table('Per source', (r) => r.source);
  table('Per framework', (r) => r.framework);
  const whole = runs.filter((r) => r.source === 'llm-foundry A100');
  const a = stats(whole, 'none'); const b = stats(whole, 'fitted');
  // Which way each source errs with the overhead: it only lengthens steps, so it cannot help a run predicted too slow.
  const fast = (r) => (r.metric === 'rate' ? r.fitted > r.published : r.fitted < r.published);
  const sides = (src) => { const rs = runs.filter((r) => r.source === src && Number.isFinite(r.fitted)); return `${rs.filter(fast).length} of ${rs.length} predicted faster than published`; };
  const hours = runs.filter((r) => r.source === 'large runs' && r.metric === 'time'); const h = stats(hours, 'fitted');
  const within25 = hours.filter((r) => offBy(r.fitted, r.published) <= 1.25).length;
  lines.push('', '### Targets (issue #24)', '',
    `- Published whole runs, tokens/s per GPU median within 10 %, none off by more than 1.5x (llm-foundry A100): kernels only ${fmt(a.median)} %, ${a.over} over 1.5x; with overhead ${fmt(b.median)} %, ${b.over} over 1.5x: ${b.median <= 10 && b.over === 0 ? 'met' : 'missed'} (${sides('llm-foundry A100')}). MFU within 5 points: see the llm-foundry section's summary line.`,
    `- Published GPU-hours within 25 %, none off by more than 2x (large runs): ${within25} of ${hours.length} within 25 %, worst ${fmt(h.worst, 2)}x: ${within25 === hours.length && h.worst <= 2 ? 'met' : 'missed'} (${sides('large runs')}).`,
    ...['NeuSight e2e', 'published single-GPU'].map((src) => {
      const rs = runs.filter((r) => r.source === src); const x = stats(rs, 'none'); const y = stats(rs, 'fitted');
      return `- ${src}: median APE ${fmt(x.median)} % kernels only, ${fmt(y.median)} % with overhead; worst ${fmt(x.worst, 2)}x / ${fmt(y.worst, 2)}x (${sides(src)}).`;
    }),
    '', 'Why they are missed: the overhead only adds time, and the sources err both ways (the counts above): it helps the ' +
    'runs predicted too fast (Llama 2 7B and 13B, OPT, the shorter llm-foundry runs) and hurts those predicted too slow (half ' +
    'the single-GPU rows), so the fit keeps it small. llm-foundry\'s runs are answered with their activation ' +
    'checkpointing pinned as published (`--checkpointing none` where the run had none): left open, the plan search turned ' +
    'it on for most runs without it, wherever prenet\'s memory estimate said they would not fit, and timed recompute ' +
    'that never ran, which hid how fast those runs are predicted. `models/overhead.json` records the answers it was ' +
    'fitted on (`node tools/fit_overhead.mjs` refits it on the current ones). The sources do not pin its three parameters down: the ' +
    'leave-one-source-out table shows how far they move when one source is left out. The largest remaining error is ' +
    'not overhead: MPT-7B\'s 440-GPU run (1.3x too fast; its own benchmark throughput implies 1.31x fewer GPU-hours than it ' +
    'published: the large-runs section). BLOOM was 1.7x too fast while its layout was searched; on the layout its script ' +
    'publishes (micro-batch 2, full recomputation, no sequence parallelism) it is 1.15x, and its own logged step implies ' +
    'that the published hours are 1.11x its steps. The BigScience steps (Megatron-DeepSpeed, no overlap of its ' +
    'collectives) leave the three parameters where the other sources put them.', '');
  summary.push(`framework overhead: llm-foundry median APE ${fmt(a.median)} % -> ${fmt(b.median)} % with the fitted overhead; leave-one-source-out in the section above`);
}

function main() {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
  const prenet = resolve(root, opt('--prenet', process.env.PRENET ?? 'build/prenet'));
  const outPath = resolve(root, opt('--out', 'docs/parallel-accuracy.md'));
  const only = opt('--only', '');
  if (!existsSync(prenet)) { console.error(`${prenet} not found; build it first`); process.exit(2); }
  const missing = missingOptions(JSON.parse(execFileSync(prenet, ['options', '--json'], { encoding: 'utf8' })));
  if (missing.length) {
    console.error(`prenet does not know --${missing[0]} yet (missing: ${missing.map((m) => '--' + m).join(', ')}): ` +
      'the multi-GPU contract of issue #17 is not in this build, so nothing was compared and ' +
      `${outPath} was left as it is.`);
    process.exit(3);
  }
  const version = execFileSync(prenet, ['--version'], { encoding: 'utf8' }).trim();
  const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  const lines = ['# Multi-GPU predictions against measurements', '',
    `Generated by \`node tools/compare_parallel.mjs\` with \`${version}\` on ${new Date().toISOString().slice(0, 10)}. ` +
    'Sources and settings: `data/published/README.md`, `data/README.md`. APE = |predicted - measured| / measured; ' +
    '"off by" = the larger of predicted/measured and measured/predicted. Rows prenet refused are listed with its error.', ''];
  const summary = [];
  const failed = (res) => res.error || !res.results?.[0];

  if (!only || only === 'neusight') {
    const rows = parseCsv(readFileSync(resolve(root, 'data/neusight/e2e.csv'), 'utf8')).filter((r) => r.layout !== 'single');
    lines.push('## NeuSight GPT-2 Large, 4 GPUs (forward + backward, no optimizer)', '',
      'Measured: `total_ms` of `data/neusight/e2e.csv` (A100 SXM4 40GB, FP32). Predicted: `step.total_ms - step.optimizer_ms`. Target: median APE <= 10 %.', '',
      '| layout | batch | measured ms | predicted ms | APE % | command |', '|---|---:|---:|---:|---:|---|');
    const errs = [];
    for (const r of rows) {
      const a = neusightArgs(r); const res = run(prenet, a);
      if (failed(res)) { lines.push(`| ${r.layout} | ${r.batch} | ${r.total_ms} | error: ${res.error ?? 'no result'} | | \`${cmd(a)}\` |`); continue; }
      const s = res.results[0].step; const p = s.total_ms - (s.optimizer_ms ?? 0); const e = ape(p, Number(r.total_ms));
      errs.push(e);
      lines.push(`| ${r.layout} | ${r.batch} | ${r.total_ms} | ${fmt(p)} | ${fmt(e)} | \`${cmd(a)}\` |`);
    }
    lines.push('', `Median APE ${fmt(median(errs))} % over ${errs.length} of ${rows.length} rows.`, '');
    summary.push(`NeuSight 4-GPU: median APE ${fmt(median(errs))} % (n = ${errs.length}/${rows.length}; target <= 10 %)`);
  }

  if (!only || only === 'foundry') {
    const rows = parseCsv(readFileSync(resolve(root, 'data/published/llm_foundry_mpt_a100.csv'), 'utf8'));
    const dir = mkdtempSync(join(tmpdir(), 'prenet-mpt-'));
    const config = (r) => foundryConfig(dir, r);
    lines.push('## llm-foundry MPT, FSDP on 8-64 A100', '',
      'Measured: `tokens_per_s_per_gpu` and `mfu` of `data/published/llm_foundry_mpt_a100.csv`. Predicted: `throughput.tokens_per_s_per_device`. Targets (issue #24): median APE <= 10 %, none off by more than 1.5x; MFU within 5 points. (`$TMP/mpt-<size>-<seq>.json` is `data/published/mpt/mpt-<size>.json` with `max_seq_len` set to the run\'s sequence, as the benchmark sets it.)', '',
      'MFU, like with like: llm-foundry\'s MFU column is its own formula (`scripts/train/benchmarking/collect_results.py`): (6 x params + 12 x layers x d_model x seq) FLOPs per token x tokens/s per GPU / 312 TFLOP/s, where params includes the embedding and the learned position table (`max_seq_len` x d_model, 50 M parameters for the 760M model at 32k tokens), attention is counted unmasked and backward as 2 x forward with no recompute. *predicted MFU* applies that same formula to prenet\'s tokens/s (so its gap is the throughput error, scaled); *prenet MFU* is `throughput.mfu`, prenet\'s own count of its kernels\' FLOPs (docs/parallel.md), which leaves out the position table and the embedding lookup that llm-foundry counts and adds norms and activations; shown for reference.', '',
      '| model | seq | gpus | gpu | mb x ga | precision | ckpt | measured tok/s/GPU | predicted | APE % | measured MFU % | predicted MFU % | prenet MFU % |',
      '|---|---:|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|');
    const errs = []; const factors = []; const mfuDiff = []; const ownMfuDiff = []; const longSeq = []; let reproduced = 0; let worst = null;
    for (const r of rows) {
      const a = foundryArgs(r, config(r)); const res = run(prenet, a);
      const shape = JSON.parse(readFileSync(resolve(root, `data/published/mpt/mpt-${r.model}.json`), 'utf8'));
      // The formula reproduces the published column from the published tokens/s (to its integer rounding).
      if (Math.abs(foundryMfuPercent(r, shape, Number(r.tokens_per_s_per_gpu)) / Number(r.mfu) - 1) < 0.005) reproduced++;
      const head = `| ${r.model} | ${r.seq} | ${r.gpus} | ${r.gpu} | ${r.micro_batch} x ${r.grad_accum} | ${r.precision} | ${r.checkpointing === 'True' ? 'yes' : 'no'} | ${r.tokens_per_s_per_gpu}`;
      if (failed(res)) { lines.push(`${head} | error: ${res.error ?? 'no result'} | | ${r.mfu} | | |`); continue; }
      const t = res.results[0].throughput; const m = Number(r.tokens_per_s_per_gpu);
      const p = t.tokens_per_s_per_device; const e = ape(p, m); const f = offBy(p, m);
      const pm = foundryMfuPercent(r, shape, p); mfuDiff.push(Math.abs(pm - Number(r.mfu)));
      const own = percent(t.mfu); ownMfuDiff.push(Math.abs(own - Number(r.mfu)));
      // Long sequences: the attention's share of the predicted step, and how much slower attention alone would
      // have to run for the measured step if everything else were exact (the step scales as 1 / tokens/s).
      const st = res.results[0].step; const attention = st.by_family_ms?.attention ?? 0;
      if (Number(r.seq) >= 16384 && attention > 0)
        longSeq.push({ share: attention / st.total_ms, slower: (attention + st.total_ms * (p / m - 1)) / attention });
      errs.push(e); factors.push(f);
      if (!worst || f > worst.f) worst = { f, r, a };
      lines.push(`${head} | ${fmt(p, 0)} | ${fmt(e)} | ${r.mfu} | ${fmt(pm)} | ${fmt(own)} |`);
    }
    const attentionCheck = longAttentionCheck(prenet, dir);
    rmSync(dir, { recursive: true, force: true });
    const over = factors.filter((f) => f > 1.5).length;
    lines.push('', `Median APE ${fmt(median(errs))} % over ${errs.length} of ${rows.length} runs; ${over} off by more than 1.5x; ` +
      `worst off by ${fmt(worst?.f, 2)}x (${worst ? `${worst.r.model} seq ${worst.r.seq} on ${worst.r.gpus} x ${worst.r.gpu}: \`${cmd(worst.a).replace(dir, '$TMP')}\`` : 'none'}). ` +
      `MFU (llm-foundry's formula on both sides; it reproduces ${reproduced} of ${rows.length} published values from their tokens/s within 0.5 %): ` +
      `median |difference| ${fmt(median(mfuDiff))} points, ${mfuDiff.filter((d) => d <= 5).length} of ${mfuDiff.length} within 5 points: ${median(mfuDiff) <= 5 ? 'met' : 'missed'}. ` +
      `prenet's own \`throughput.mfu\` against the published column (unlike conventions): median ${fmt(median(ownMfuDiff))} points.`, '',
      `Long sequences (16k-65k tokens, ${longSeq.length} runs): attention is a median ${fmt(100 * median(longSeq.map((x) => x.share)), 0)} % of the predicted step; ` +
      `for the measured steps, attention alone would have to take a median ${fmt(median(longSeq.map((x) => x.slower)), 2)}x its predicted time ` +
      `(${fmt(Math.min(...longSeq.map((x) => x.slower)), 2)}-${fmt(Math.max(...longSeq.map((x) => x.slower)), 2)}x) if everything else were exact. ` +
      `The FlashAttention model is fitted on aiconfigurator's context-attention forward kernels (FlashAttention-2 class); on its ${attentionCheck.n} A100 rows at ${attentionCheck.seq} tokens (its longest) it is off by a median ${fmt(attentionCheck.median)} % (prenet kernels); ` +
      'no backward timing is in `data/`, so the backward (2.5 x the forward\'s FLOPs, FlashAttention-2\'s count with the recompute) is timed at the forward\'s efficiency. ' +
      'These runs did not use FlashAttention-2: the benchmark\'s `submit_benchmarks.py` sets `attn_impl` from `--attn_impl`, default `triton`, ' +
      'llm-foundry\'s `flash_attn_triton.py` (Tri Dao\'s Triton FlashAttention of 2022, whose header says "Triton forward is generally faster than CUDA forward, while Triton backward is generally slower than CUDA backward. Overall Triton forward + backward is slightly slower than CUDA forward + backward", CUDA being FlashAttention 1), ' +
      'and the 13b runs\' `flash` was flash-attn 1.0.9 (llm-foundry\'s `gpu` extra; FlashAttention-2 was the separate `gpu-flash2`). ' +
      'So they are answered with `--attention flash1`: the FlashAttention-2 model\'s time times 230/124, FlashAttention-2\'s "up to 230 TFLOPs/s" against FlashAttention\'s "up to 124 TFLOPs/s on A100" as their author published them (Dao 2023, blog post and arXiv:2307.08691; ops/attention.cpp). ' +
      'That ratio is published, not fitted: no factor is tuned on these rows. Against it, the long sequences ask for a little less (the median above), the ratio of two peaks rather than of these kernels at these shapes; the shorter sequences, where attention is a small share, show what the rest of the step model does.', '');
    summary.push(`llm-foundry tokens/s/GPU: median APE ${fmt(median(errs))} %, ${over} off by > 1.5x, worst ${fmt(worst?.f, 2)}x; MFU (llm-foundry's formula on prenet's tokens/s) median ${fmt(median(mfuDiff))} points apart (n = ${errs.length}/${rows.length}; targets <= 10 %, none > 1.5x, MFU within 5 points)`);
  }

  if (!only || only === 'dp') {
    // Issue #24's target "data-parallel CNN/transformer runs on 2-8 GPUs: median within 12 %": the allowed rows are
    // server-gear's tf_cnn_benchmarks ResNet-50 on 2-8 RTX 3090 / 2-4 RTX 4090 and NeuSight's GPT-2 Large dp4.
    const rows = parseCsv(readFileSync(resolve(root, 'data/published/data_parallel.csv'), 'utf8'));
    const neusight = parseCsv(readFileSync(resolve(root, 'data/neusight/e2e.csv'), 'utf8')).filter((r) => r.layout === 'dp4');
    lines.push('## Data-parallel runs on 2-8 GPUs', '',
      'Measured: `samples_per_s` of `data/published/data_parallel.csv` (server-gear.com\'s tf_cnn_benchmarks ResNet-50 v1, FP16, synthetic data, batch per GPU; 2, 4, 8 x RTX 3090 and 2, 4 x RTX 4090; sources in `data/published/README.md`) and NeuSight\'s GPT-2 Large dp4 iteration (`total_ms` of `data/neusight/e2e.csv`). Predicted: `throughput.samples_per_s` (`step.total_ms - step.optimizer_ms` for NeuSight, which times no optimizer). No kernel timing of either GeForce part is in the fit. Target (issue #24): median APE <= 12 %.', '',
      '| model | hardware | gpus | batch per GPU | measured | predicted | APE % | data-parallel ms (exposed / total) | command |', '|---|---|---:|---:|---:|---:|---:|---|---|');
    const errs = []; const factors = [];
    const add = (r, a, measured, predicted, unit, comm) => {
      const e = ape(predicted, measured); errs.push(e); factors.push(offBy(predicted, measured));
      lines.push(`| ${r.model} | ${r.hardware ?? r.device} | ${r.gpus ?? 4} | ${r.batch_per_gpu ?? r.batch} | ${measured} ${unit} | ${fmt(predicted, 1)} | ${fmt(e)} | ${comm} | \`${cmd(a)}\` |`);
    };
    const dpMs = (res0) => { const c = res0.step?.communication?.['data parallel']; return c ? `${fmt(c.exposed_ms)} / ${fmt(c.total_ms)}` : 'n/a'; };
    for (const r of rows) {
      const a = dataParallelArgs(r); const res = run(prenet, a);
      if (failed(res)) { lines.push(`| ${r.model} | ${r.hardware} | ${r.gpus} | ${r.batch} | ${r.samples_per_s} img/s | error: ${res.error ?? 'no result'} | | | \`${cmd(a)}\` |`); continue; }
      add(r, a, Number(r.samples_per_s), res.results[0].throughput.samples_per_s, 'img/s', dpMs(res.results[0]));
    }
    for (const r of neusight) {
      const a = neusightArgs(r); const res = run(prenet, a);
      if (failed(res)) continue;
      const s = res.results[0].step;
      add({ ...r, batch_per_gpu: Number(r.batch) / 4 }, a, Number(r.total_ms), s.total_ms - (s.optimizer_ms ?? 0), 'ms', dpMs(res.results[0]));
    }
    const n = rows.length + neusight.length; const m = median(errs); const over = factors.filter((f) => f > 1.5).length;
    lines.push('', `Median APE ${fmt(m)} % over ${errs.length} of ${n} runs (target <= 12 %: ${m <= 12 ? 'met' : 'missed'}); worst off by ${fmt(Math.max(...factors), 2)}x; ${over} off by more than 1.5x.`, '');
    summary.push(`data-parallel 2-8 GPUs: median APE ${fmt(m)} %, worst ${fmt(Math.max(...factors), 2)}x (n = ${errs.length}/${n}; target <= 12 %)`);
  }

  if (!only || only === 'bigscience') {
    // Issue #24's whole-run target on tensor x pipeline x data parallelism at 32-384 GPUs: BigScience's layout search
    // for BLOOM (chronicles-prequel.md), each step timed at iteration 2 of a pinned layout, and BLOOM's own step.
    const rows = parseCsv(readFileSync(resolve(root, 'data/published/bigscience_megatron_deepspeed_a100.csv'), 'utf8'));
    const dir = mkdtempSync(join(tmpdir(), 'prenet-bigscience-'));
    lines.push('## BigScience Megatron-DeepSpeed, TP x PP x DP on 32-384 A100 80GB', '',
      'Measured: `sec_per_iteration` of `data/published/bigscience_megatron_deepspeed_a100.csv`: the layout search that chose BLOOM-176B\'s (the 2nd iteration\'s "elapsed time per iteration" of each pinned layout, February 2022, GPT models of 70-106 layers, 12288-14336 hidden, 2048 tokens, 250k vocabulary, global batch 512-2048) and one step of BLOOM\'s training (iteration 85,376). Predicted: `step.total_ms`. ' +
      'Settings as the scripts ran them (`bigscienceArgs`): Megatron tensor parallelism without sequence parallelism in DeepSpeed\'s pipeline engine with ZeRO-1 (`--framework deepspeed --sequence-parallel off`), full recomputation, eager attention (Megatron\'s fused softmax), 8-GPU nodes with 4 Omni-Path links. ' +
      'Targets (issue #24): median APE <= 10 %, none off by more than 1.5x.', '',
      '| date | hidden x layers, heads | gpus | dp x tp x pp | mb | global batch | precision | measured s | predicted s | APE % | bubble s | exposed comm s (tp / pp / dp) | nvidia-smi GB / predicted device GiB | command |',
      '|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|---|---|---|');
    const errs = []; const factors = []; const byTp = new Map(); const oom = []; const memory = { fp16: [], bf16: [] };
    let worst = null;
    for (const r of rows) {
      const a = bigscienceArgs(r, bigscienceConfig(dir, r)); const res = run(prenet, a);
      const shown = cmd(a).replace(dir, '$TMP');
      const head = `| ${r.date} | ${r.hidden} x ${r.layers}, ${r.heads} | ${r.gpus} | ${r.dp} x ${r.tp} x ${r.pp} | ${r.mbs} | ${r.global_batch} | ${r.precision}`;
      if (failed(res)) { lines.push(`${head} | ${r.sec_per_iteration || r.memory_gb} | error: ${res.error ?? 'no result'} | | | | \`${shown}\` |`); continue; }
      const res0 = res.results[0]; const st = res0.step;
      if (r.sec_per_iteration === '') { oom.push({ r, fits: res0.memory?.fits, gib: res0.memory?.peak_reserved_bytes / 2 ** 30 }); continue; }
      const measured = Number(r.sec_per_iteration); const predicted = st.total_ms / 1000;
      const e = ape(predicted, measured); const f = offBy(predicted, measured);
      errs.push(e); factors.push(f);
      if (!byTp.has(r.tp)) byTp.set(r.tp, []);
      byTp.get(r.tp).push(predicted / measured);
      if (!worst || f > worst.f) worst = { f, r, shown };
      const c = (k) => fmt((st.communication?.[k]?.exposed_ms ?? 0) / 1000);
      const device = res0.memory.peak_bytes_per_device / 2 ** 30;
      if (Number(r.memory_gb) > 0) memory[r.precision]?.push(device / Number(r.memory_gb));
      lines.push(`${head} | ${measured} | ${fmt(predicted)} | ${fmt(e)} | ${fmt(st.bubble_ms / 1000)} | ${c('tensor parallel')} / ${c('pipeline parallel')} / ${c('data parallel')} | ${r.memory_gb || 'n/a'} / ${fmt(device)} | \`${shown}\` |`);
    }
    rmSync(dir, { recursive: true, force: true });
    const over = factors.filter((x) => x > 1.5).length; const m = median(errs);
    lines.push('', `Median APE ${fmt(m)} % over ${errs.length} timed steps (target <= 10 %: ${m <= 10 ? 'met' : 'missed'}); ${over} off by more than 1.5x; ` +
      `worst off by ${fmt(worst?.f, 2)}x (${worst ? `${worst.r.hidden} x ${worst.r.layers} with ${worst.r.heads} heads, dp ${worst.r.dp} tp ${worst.r.tp} pp ${worst.r.pp} mb ${worst.r.mbs}` : 'none'}). ` +
      `Predicted / measured by tensor-parallel size (median): ${[...byTp].sort((x, y) => Number(x[0]) - Number(y[0])).map(([tp, v]) => `tp ${tp} ${fmt(median(v), 2)} (${v.length})`).join(', ')}. ` +
      `Memory (the chronicle's nvidia-smi figure of the first or last node, against prenet's device peak, the fullest stage's): predicted / measured median ${fmt(median(memory.fp16), 2)} over the ${memory.fp16.length} fp16 rows, ${fmt(median(memory.bf16), 2)} over the ${memory.bf16.length} bf16 rows, whose BF16 optimizer "accumulate[s] gradients in fp32 ... 4bytes x params and it's not sharded across gpus" (the chronicle; DeepSpeed's BF16_Optimizer, which the deepspeed preset runs for a bf16 model at ZeRO 0 and 1: docs/parallel.md [12]; before it did, 0.70). ` +
      `Layouts the chronicle reports out of memory: ${oom.map((o) => `dp ${o.r.dp} tp ${o.r.tp} pp ${o.r.pp} mb ${o.r.mbs} (${o.r.hidden} x ${o.r.layers}): prenet says ${o.fits ? 'fits' : 'does not fit'} (${fmt(o.gib)} GiB reserved)`).join('; ') || 'none'}.`, '',
      'Most of the rows predicted 20-30 % too fast are head counts the chronicle itself found slow (13824 hidden with 128 heads, 19-27 %; 14336 with 112 at tp 8 and 13312 with 104, 19-21 %): it notes that some head counts break the constraints of Megatron\'s fused softmax kernel ("NHEADS=108 breaks constraints for invoking optimized fused softmax kernel"), which then falls back to an unfused softmax that prenet does not model. The others are the layouts with the most data parallelism (24-way over 2 pipeline stages, 24-26 %) and a 148 s step at micro-batch 1 that the same layout runs in 104 s at micro-batch 2. ' +
      'Before this source was added, the same rows answered with `--framework megatron` (sequence parallelism on, the backward\'s tensor-parallel collectives overlapped) were a median 21 % too fast (25 % at tp 8, 15 % at tp 4): the fork these runs used had neither, and every tensor-parallel rank ran the norms, dropouts and residual adds on all tokens.', '');
    summary.push(`BigScience Megatron-DeepSpeed steps (TP x PP x DP, 32-384 A100): median APE ${fmt(m)} %, ${over} off by > 1.5x, worst ${fmt(worst?.f, 2)}x (n = ${errs.length}; targets <= 10 %, none > 1.5x)`);
  }

  if (!only || only === 'megatron') {
    // Megatron-LM's own functional tests (their golden values' "iteration-time") on DGX H100, A100 and GB200 nodes:
    // the first whole steps of a Megatron-Core stack (Transformer Engine, distributed optimizer, overlapped gradient
    // reduce) on Hopper and Blackwell here. Never fitted on (tools/fit_overhead.mjs leaves the source out).
    const rows = parseCsv(readFileSync(resolve(root, 'data/published/megatron_functional_tests.csv'), 'utf8'));
    const dir = mkdtempSync(join(tmpdir(), 'prenet-megatron-'));
    lines.push('## Megatron-LM functional tests on DGX A100, H100 and GB200', '',
      'Measured: `iteration_s` of `data/published/megatron_functional_tests.csv`, the median "iteration-time" of a Megatron-LM functional test\'s golden values after its first logged steps (each row names its golden file, its `model_config.yaml` and what was assumed; `data/published/README.md`). Predicted: `step.total_ms`, answered with the row\'s layout pinned (`--cluster`) and `--framework megatron`. ' +
      'Never fitted on: the framework overhead (`models/overhead.json`) does not read this source, so every row here is held out. ' +
      'The tests run as a regression suite runs them, not as a tuned training run: deterministic mode (`--deterministic-mode`, `NVTE_ALLOW_NONDETERMINISTIC_ALGO=0`, `NCCL_ALGO=Ring`), no gradient-accumulation fusion, 16 SMs kept from the norm kernels, a parameter norm and a count of zero gradients every step; prenet models none of these. ' +
      '*speed* rows are the suite\'s `*_memory_speed` tests (a 7B GQA model at 8192 tokens); *functional* rows are its 12-layer, 512-wide regression tests (66 M parameters, dense and MoE), whose steps are a few milliseconds of kernels inside a framework\'s fixed per-step work. ' +
      'Targets (issue #24, whole runs): median APE <= 10 %, none off by more than 1.5x, on the speed rows.', '',
      '| test | kind | hardware | gpus | dp x tp x pp (vp) x cp, ep | mb x ga x seq | precision | measured ms | predicted ms, kernels only | predicted ms | predicted / measured | exposed comm ms (tp / pp / dp / ep) | bubble ms | command |',
      '|---|---|---|---:|---|---|---|---:|---:|---:|---:|---|---:|---|');
    const ratios = { speed: new Map(), functional: new Map() };
    for (const r of [...rows].sort((x, y) => (x.test_kind === y.test_kind ? 0 : x.test_kind === 'speed' ? -1 : 1))) {
      const a = publishedRowArgs(dir, r); const res = run(prenet, a); const bare = run(prenet, [...a, '--overhead', 'none']);
      const shown = cmd(a).replace(dir, '$TMP');
      const head = `| ${r.id.replace(/^megatron-test-/, '')} | ${r.test_kind} | ${r.hardware} | ${r.gpus} | ${r.dp} x ${r.tp} x ${r.pp}${r.vp ? ` (${r.vp})` : ''} x ${r.cp}${r.ep ? `, ${r.ep}` : ''} | ${r.batch} x ${r.grad_accum} x ${r.seq} | ${r.precision}`;
      const measured = Number(r.iteration_s) * 1000;
      if (failed(res)) { lines.push(`${head} | ${fmt(measured, 0)} | error: ${res.error ?? 'no result'} | | | | | \`${shown}\` |`); continue; }
      const st = res.results[0].step; const predicted = st.total_ms;
      const byHardware = ratios[r.test_kind];
      if (!byHardware) throw new Error(`${r.id}: test_kind must be speed or functional`);
      if (!byHardware.has(r.hardware)) byHardware.set(r.hardware, []);
      byHardware.get(r.hardware).push({ id: r.id, ratio: predicted / measured, measured, bare: failed(bare) ? NaN : bare.results[0].step.total_ms,
        kernels: st.kernels, layout: `dp ${r.dp} tp ${r.tp} pp ${r.pp}${r.vp ? ` vp ${r.vp}` : ''} cp ${r.cp}` });
      const c = (k) => fmt(st.communication?.[k]?.exposed_ms ?? 0, 0);
      lines.push(`${head} | ${fmt(measured, 0)} | ${failed(bare) ? 'n/a' : fmt(bare.results[0].step.total_ms, 0)} | ${fmt(predicted, 0)} | ${fmt(predicted / measured, 2)} | ${c('tensor parallel')} / ${c('pipeline parallel')} / ${c('data parallel')} / ${c('expert parallel')} | ${fmt(st.bubble_ms ?? 0, 0)} | \`${shown}\` |`);
    }
    rmSync(dir, { recursive: true, force: true });
    const all = (kind) => [...ratios[kind].values()].flat();
    const perHardware = (kind) => [...ratios[kind]].map(([hw, v]) => `${hw} ${fmt(median(v.map((x) => x.ratio)), 2)} (${v.length})`).join(', ');
    const speed = all('speed'); const errs = speed.map((x) => Math.abs(x.ratio - 1) * 100);
    const factors = speed.map((x) => Math.max(x.ratio, 1 / x.ratio)); const m = median(errs);
    const over = factors.filter((f) => f > 1.5).length; const worst = speed[factors.indexOf(Math.max(...factors))];
    lines.push('', `Speed rows: median APE ${fmt(m)} % over ${speed.length} tests (target <= 10 %: ${m <= 10 ? 'met' : 'missed'}); ${over} off by more than 1.5x; ` +
      `worst off by ${fmt(Math.max(...factors), 2)}x (${worst?.id ?? 'none'}). Predicted / measured by hardware (median): ${perHardware('speed')}. ` +
      `Functional rows, predicted / measured by hardware (median): ${perHardware('functional')}.`, '');
    // What the speed rows say when read together: on A100 and H100 the same test is measured = kernels-only / e +
    // F, one harness factor e and one fixed time F per layout (two devices, two unknowns); GB200 is then checked
    // against that harness. The functional rows: measured time per kernel prenet counts (host-bound steps).
    // One test on one device (the -mr re-runs of another code version left out).
    const at = (hw, layout) => ratios.speed.get(hw)?.find((x) => x.layout === layout && !x.id.endsWith('-mr'));
    const layouts = [...new Set(speed.map((x) => x.layout))];
    const harness = [];
    for (const layout of layouts) {
      const a = at('a100-sxm4-80gb', layout); const h = at('h100-sxm5-80gb', layout); const g = at('gb200', layout);
      if (!a || !h) continue;
      const e = (a.bare - h.bare) / (a.measured - h.measured); const F = h.measured - h.bare / e;
      harness.push(`${layout}: e ${fmt(e, 2)}, F ${fmt(F, 0)} ms` + (g ? `, GB200 then ${fmt(g.bare / e + F, 0)} ms against ${fmt(g.measured, 0)} measured (${fmt(g.measured / (g.bare / e + F), 2)}x)` : ''));
    }
    // aiconfigurator's large BF16 GEMMs per device (median TFLOP/s), and the measured speed-up between two devices
    // on the same tests.
    const gemms = parseCsv(readFileSync(resolve(root, 'data/aiconfigurator/ops/gemm.csv'), 'utf8'));
    const gemmMedian = (hw) => fmt(median(gemms.filter((g) => g.device === hw && g.precision === 'bf16' && Math.min(+g.m, +g.n, +g.k) >= 4096)
      .map((g) => 2 * g.m * g.n * g.k / (g.latency_ms * 1e9))), 0);
    const ratioRange = (slow, fast) => {
      const xs = layouts.filter((l) => at(slow, l) && at(fast, l)).map((l) => at(slow, l).measured / at(fast, l).measured);
      return xs.length ? `${fmt(Math.min(...xs), 2)}-${fmt(Math.max(...xs), 2)}` : 'n/a';
    };
    const perKernel = all('functional').map((x) => 1000 * x.measured / x.kernels);
    // Is that pace Megatron's own? A ~2B model at 4096-token micro-batches on 8 H100s, its kernels only: the MFU a
    // host at that pace would leave it, against the 41 % Megatron-LM's README reports for its smallest (2B) GPT.
    const small = ['predict', '--model', 'qwen3-1.7b', '--hardware', 'h100-sxm5-80gb', '--gpus', '8', '--dp', '8', '--tp', '1',
      '--pp', '1', '--cp', '1', '--zero', '1', '--batch', '1', '--seq', '4096', '--global-batch', '64', '--precision', 'bf16',
      '--framework', 'megatron', '--checkpointing', 'none', '--overhead', 'none', '--json'];
    const smallRes = run(prenet, small);
    const cap = failed(smallRes) ? NaN : (() => {
      const x = smallRes.results[0]; const host = x.step.kernels * median(perKernel) / 1000;
      return percent(x.throughput.mfu) * Math.min(1, x.step.total_ms / host);
    })();
    lines.push(`Read together: if a test's harness (deterministic kernels, Ring-only NCCL, the unfused gradient accumulation, the per-step norms) cost the same factor e and fixed time F on A100 and H100, the two devices' rows give, per layout, ${harness.join('; ') || 'no pair'}. ` +
      `So the A100 and H100 gap is what such a harness would add (prenet models neither e nor F), while GB200 stays well short of its prediction under the same harness. Its kernel models are fitted on aiconfigurator's GB200 microbenchmarks (locked clocks, CUDA graphs), whose large BF16 GEMMs (every side >= 4096) run at a median ${gemmMedian('gb200')} TFLOP/s against ${gemmMedian('h100-sxm5-80gb')} on H100 and ${gemmMedian('a100-sxm4-80gb')} on A100; the same tests' measured steps are ${ratioRange('h100-sxm5-80gb', 'gb200')}x faster on GB200 than on H100 and ${ratioRange('a100-sxm4-80gb', 'h100-sxm5-80gb')}x on H100 than on A100. Either a 1,200 W part sustains its locked-clock speed less well through a whole training step than the H100 does, or its harness costs more (a Grace host, two 4-GPU trays); these rows cannot tell which, and no per-device factor is fitted to them. ` +
      `The functional rows take a median ${fmt(median(perKernel), 0)} µs per kernel prenet counts (${fmt(Math.min(...perKernel), 0)}-${fmt(Math.max(...perKernel), 0)}), on A100 and H100 alike: their steps are bound by the host (Megatron's and Transformer Engine's Python per layer and micro-batch, FP8's scaling bookkeeping), which prenet's per-kernel launch gap (\`models/overhead.json\`) does not model; a result whose kernels average under 50 µs now says so in its warnings (docs/training-model.md). ` +
      `At that pace a host would hold a ~2B model at 4096-token micro-batches on 8 H100s (\`${cmd(small)}\`) to ${fmt(cap)} % MFU, where Megatron-LM's README (commit 0010ab74, "Training Speed and Scalability") reports 41 % for its smallest, 2B, GPT at 4096 tokens on H100: the functional tests' host time is not what Megatron's host costs in a tuned run (theirs runs deterministic mode and logs, norms and counts zeros every step). ` +
      'A floor at that pace for the megatron preset was tried (2026-12-05): fitted on these 15 rows (0.229 ms per kernel; each device and each kind held out in turn: 5.8-30 % median error) it also slowed Llama 2 70B at tp 8, pp 4, vp 5 with 4096-token micro-batches by 1.5x and Llama 2 7B at tp 2 by 1.8x, layouts Megatron runs compute-bound, so it was not kept. They are reported, not targeted.', '');
    summary.push(`Megatron-LM functional tests, never fitted: 7B speed tests median APE ${fmt(m)} %, ${over} off by > 1.5x, worst ${fmt(Math.max(...factors), 2)}x, predicted / measured ${perHardware('speed')}; 66M-parameter functional tests ${perHardware('functional')} (targets <= 10 %, none > 1.5x)`);
  }

  if (!only || only === 'large') {
    const rows = parseCsv(readFileSync(resolve(root, 'data/published/large_runs.csv'), 'utf8'));
    const peak = (hw, precision) => JSON.parse(readFileSync(resolve(root, `hardware/${hw}.json`), 'utf8')).peak_tflops[precision].value;
    lines.push('## Published pre-training runs', '',
      'Measured: the published GPU-hours (or 1/(tokens/s per GPU) x tokens), and TFLOP/s per GPU as MFU against the spec sheet\'s dense peak. Predicted: `run.gpu_hours` with `--tokens`, `throughput.mfu`. Targets (issue #24): GPU-hours within 25 %, never off by more than 2x; MFU within 5 points.', '',
      '| run | gpus | published GPU-h | predicted GPU-h | off by | published MFU % | predicted MFU % | plan | command |', '|---|---:|---:|---:|---:|---:|---:|---|---|');
    const factors = []; const mfuDiff = [];
    for (const r of rows) {
      const a = largeRunArgs(r); const res = run(prenet, a);
      let published = Number(r.published_gpu_hours) || NaN;
      if (!Number.isFinite(published) && Number(r.published_tokens_per_s_per_gpu) > 0)
        published = Number(r.tokens) / Number(r.published_tokens_per_s_per_gpu) / 3600;
      const pubMfu = Number(r.published_tflops_per_gpu) > 0 ? modelTflops(r) / peak(r.hardware, r.precision) * 100 : NaN;
      if (failed(res)) { lines.push(`| ${r.id} | ${r.gpus} | ${fmt(published, 0)} | error: ${res.error ?? 'no result'} | | ${fmt(pubMfu)} | | | \`${cmd(a)}\` |`); continue; }
      const res0 = res.results[0]; const p = res0.run?.gpu_hours; const f = offBy(p, published);
      const pm = percent(res0.throughput?.mfu);
      if (Number.isFinite(f)) factors.push(f);
      if (Number.isFinite(pubMfu) && Number.isFinite(pm)) mfuDiff.push(Math.abs(pm - pubMfu));
      const pl = res0.plan ?? {};
      lines.push(`| ${r.id} | ${r.gpus} | ${fmt(published, 0)} | ${fmt(p, 0)} | ${fmt(f, 2)} | ${fmt(pubMfu)} | ${fmt(pm)} | dp ${pl.dp} tp ${pl.tp} pp ${pl.pp} zero ${pl.zero} mb ${pl.micro_batch} ga ${pl.grad_accum} | \`${cmd(a)}\` |`);
    }
    const within = factors.filter((f) => f <= 1.25).length;
    lines.push('', `GPU-hours: ${within} of ${factors.length} within 25 %, worst off by ${fmt(Math.max(...factors), 2)}x. MFU: ${mfuDiff.map((d) => fmt(d)).join(', ') || 'none'} points apart.`, '');
    // Published GPU-hours are wall-clock: restarts, evaluation and checkpoints count too. MPT-7B's own benchmark
    // throughput (llm-foundry's table, the same model, sequence and GPU at its largest measured scale) shows how
    // much of its gap is outside the step.
    const mpt = rows.find((r) => r.id === 'mpt-7b');
    const bench = parseCsv(readFileSync(resolve(root, 'data/published/llm_foundry_mpt_a100.csv'), 'utf8'))
      .filter((r) => r.model === '7b' && r.seq === '2048' && r.gpu === 'a100_40gb')
      .sort((x, y) => Number(y.gpus) - Number(x.gpus))[0];
    if (mpt && bench) {
      const implied = Number(mpt.tokens) / Number(bench.tokens_per_s_per_gpu) / 3600;
      lines.push(`MPT-7B's steps as llm-foundry measured them (${bench.tokens_per_s_per_gpu} tokens/s per GPU, 7b at 2048 tokens on ${bench.gpus} A100 40GB) would train its ${fmt(Number(mpt.tokens) / 1e12, 0)}T tokens in ${fmt(implied, 0)} GPU-hours: the published ${fmt(Number(mpt.published_gpu_hours), 0)} are ${fmt(Number(mpt.published_gpu_hours) / implied, 2)}x that, time outside the measured steps (restarts, evaluation, checkpoints, the 440-GPU scale) that no step model predicts.`, '');
    }
    // BLOOM's own measured step at its full batch (the BigScience table's last row) against its published compute hours.
    const bloom = rows.find((r) => r.id === 'bloom-176b');
    const step = parseCsv(readFileSync(resolve(root, 'data/published/bigscience_megatron_deepspeed_a100.csv'), 'utf8'))
      .find((r) => r.section.startsWith('BLOOM training'));
    if (bloom && step) {
      const steps = Number(bloom.tokens) / (Number(step.global_batch) * Number(step.seq));
      const implied = steps * Number(step.sec_per_iteration) * Number(bloom.gpus) / 3600;
      lines.push(`BLOOM's step as its log prints it (${step.sec_per_iteration} s at the full batch of ${step.global_batch} x ${step.seq} tokens on ${bloom.gpus} GPUs) would train its ${fmt(Number(bloom.tokens) / 1e9, 0)}B tokens in ${fmt(implied, 0)} GPU-hours: the published ${fmt(Number(bloom.published_gpu_hours), 0)} are ${fmt(Number(bloom.published_gpu_hours) / implied, 2)}x that (the batch ramp-up from 192 sequences at lower throughput, evaluation, checkpoints, restarts). Its published 150 TFLOP/s count the recomputed forward (the README: "the 4*2 co-efficient, instead of the 3*2"), so its MFU is taken as 3/4 of it.`, '');
    }
    summary.push(`large runs: ${within}/${factors.length} GPU-hours within 25 %, worst ${fmt(Math.max(...factors), 2)}x; MFU differences ${mfuDiff.map((d) => fmt(d)).join(', ') || 'none'} points`);
  }

  if (!only || only === 'overhead') overheadSection(prenet, lines, summary, fmt);

  lines.push('## Summary', '', ...summary.map((s) => `- ${s}`), '');
  writeFileSync(outPath, lines.join('\n'));
  for (const s of summary) console.log(s);
  console.log(`wrote ${outPath}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
