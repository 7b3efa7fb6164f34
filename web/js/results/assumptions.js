// "What this assumes": the reply's settings in plain words, and the page's defaults for an uploaded language
// model. Choice labels are the option table's (`choice_labels`).
import * as F from '../format.js';
import * as S from '../state.js';
import { budgetOf } from './rows.js';

const { esc, isNum } = F;

// A choice as the option table labels it (`choice_labels`), else the choice itself.
const choiceLabel = (table, name, value) => table?.byName.get(name)?.choice_labels?.[value] ?? value;
// The precision and, where there is one, the mixed-precision recipe as the API words it (`mixed_words`: with
// LoRA the frozen base in half precision, not the half recipe's fp32 master weights).
const precisionWords = (s, table) => {
  const base = choiceLabel(table, 'precision', s.precision);
  return s.mixed_words ? `${base}, ${s.mixed_words}` : base;
};
// A setting the sentences do not cover, by its field's label and its choice's words; nothing for a setting at its
// field's own default or at "none" (nothing added), which says nothing about this run.
function extraSetting(table, key, value) {
  const row = table?.byName.get(key);
  if (row && (value === row.default || value === 'none')) return null;
  const words = typeof value === 'object' ? JSON.stringify(value) : String(row?.choice_labels?.[value] ?? value);
  return `${row?.label ?? key.replace(/_/g, ' ')} ${words}`;
}
// Settings the sentences below put into words; anything else the reply carries is listed as it is.
const COVERED = new Set([
  'batch', 'seq', 'image', 'precision', 'optimizer', 'predictor', 'devices', 'flops_convention', 'tokens', 'samples',
  'epochs', 'grad_accum', 'global_batch', 'checkpointing', 'optimizer_impl', 'optimizer_impl_used', 'price_per_hour',
  'price_source', 'input_samples_per_s', 'overhead', 'memory_reserve', 'energy_model', 'mixed',
  'attention', 'breakdown', 'gpus', 'gpus_per_node', 'layout', 'network', 'precision_source', 'mixed_words',
]);
// Where the precision came from, when not from the field (the API names the CLI flag).
const PRECISION_SOURCES = { 'config.json torch_dtype': "the config's torch_dtype" };

/** The page's defaults for an uploaded language model (state.preset 'llm'): each named, with its field. */
export const LLM_DEFAULTS = Object.freeze({ attention: 'flash', seq: 4096, step_tokens: 2 ** 20 });

/**
 * The state patch those defaults make for an uploaded language model whose own sequence length is `seq`:
 * flash attention, at most 4,096 tokens, the preset's micro-batch 1 (S.PRESET_DEFAULTS: the batch field is cleared,
 * so a cluster question leaves it to the plan search) and gradient accumulation up to about a million tokens per
 * optimizer step (the global batch in tokens when the sequence divides it, else in samples).
 */
export function llmDefaults(seq, table) {
  const s = Math.min(seq, LLM_DEFAULTS.seq);
  const patch = { preset: 'llm', batch: null, seq: seq > LLM_DEFAULTS.seq ? s : null };
  if (table.byName.has('attention')) patch.attention = LLM_DEFAULTS.attention;
  if (table.byName.has('global_batch_tokens') && LLM_DEFAULTS.step_tokens % s === 0) patch.global_batch_tokens = LLM_DEFAULTS.step_tokens;
  else if (table.byName.has('global_batch')) patch.global_batch = Math.max(1, Math.round(LLM_DEFAULTS.step_tokens / s));
  return patch;
}

const change = (field, text) => `<button type="button" class="link" data-focus="${esc(field)}" title="Change it">${text}</button>`;

export function assumptionsHtml(reply, rows, { state = null, table = null } = {}) {
  const s = reply.settings ?? {};
  const m = reply.model ?? {};
  const parts = [];
  const devices = s.devices ?? 1;
  const plans = rows.filter((r) => r.plan);
  // What one optimizer step holds. On a cluster each plan sets its global batch (the searched micro-batch x
  // accumulation x data-parallel replicas); the settings' batch is then only the request's micro-batch.
  const globals = new Set(plans.map((r) => r.plan.global_batch));
  const unit = s.seq != null ? 'sequence' : s.image != null ? 'image' : 'sample';
  const shape = s.seq != null ? ` of ${F.plural(s.seq, 'token')}` : s.image != null ? ` of ${F.integer(s.image)} × ${F.integer(s.image)} pixels` : '';
  let what;
  let accum = '';
  if (plans.length && globals.size === 1) {
    const g = plans[0].plan.global_batch;
    what = `a global batch of ${F.plural(g, unit)}${shape}${s.seq != null ? ` (${F.plural(g * s.seq, 'token')})` : ''} per optimizer step, split into micro-batches by each accelerator's plan`;
  } else if (plans.length) what = `the global batch each accelerator's plan sets (under its name)`;
  else {
    what = `a batch of ${F.plural(s.batch, unit)}${shape}${s.seq != null ? ` (${F.plural(s.batch * s.seq, 'token')})` : ''}`;
    if (s.grad_accum > 1) accum = `, accumulating gradients over ${F.integer(s.grad_accum)} such micro-batches (${F.plural(s.global_batch ?? s.batch * s.grad_accum, unit)} per optimizer step)`;
  }
  const impl = s.optimizer_impl_used ?? s.optimizer_impl;
  // Fine-tuning trains a part of the model (LoRA's adapters: a few million of billions), the count PEFT prints.
  const trainable = isNum(m.trainable_params) && m.trainable_params !== m.params ? `, of which ${F.count(m.trainable_params)} trainable` : '';
  const source = PRECISION_SOURCES[s.precision_source] ? ` (${PRECISION_SOURCES[s.precision_source]})` : '';
  let where;
  if (devices === 1 && !plans.length) where = `on one accelerator (no parallelism; ${change('gpus', 'ask for more')})`;
  else {
    const searched = plans.some((r) => r.plan.searched);
    const nodes = s.gpus_per_node ? `, nodes of ${F.plural(s.gpus_per_node, 'device')}` : ', nodes as on each accelerator\'s spec sheet';
    where = `on <strong>${change('gpus', F.plural(devices, 'device'))}</strong> of each accelerator${nodes}, ${searched ? 'each with the fastest layout that fits (its plan is under its name)' : 'with the layout given'}`;
  }
  parts.push(
    `Each step trains <strong>${esc(m.name ?? 'the model')}</strong> (${F.count(m.params)} parameters${trainable}) on ${what}${accum}, in ${esc(precisionWords(s, table))}${source}, with the ${esc(choiceLabel(table, 'optimizer', s.optimizer))} optimizer${impl ? ` (${esc(impl)} kernels)` : ''}, ${where}.`,
  );
  if (state?.preset === 'llm') {
    const named = [];
    if (state.attention === LLM_DEFAULTS.attention) named.push(change('attention', 'flash attention'));
    if (s.seq != null) named.push(change('seq', `${F.integer(s.seq)} tokens per sequence`) + (state.seq != null ? ' (at most 4,096: the model\'s context is longer)' : ' (the model\'s own context)'));
    const batchRow = table?.byName.get('batch');
    const presetBatch = S.PRESET_DEFAULTS.llm.batch;
    if (state.batch == null && batchRow && S.pageDefault(state, batchRow, table) === presetBatch) named.push(change('batch', `micro-batch ${presetBatch}`));
    if (state.global_batch_tokens != null) named.push(`${change('global_batch_tokens', `${F.integer(state.global_batch_tokens)} tokens per optimizer step`)} (gradient accumulation makes up the rest)`);
    else if (state.global_batch != null) named.push(`${change('global_batch', `${F.integer(state.global_batch)} sequences per optimizer step`)} (gradient accumulation makes up the rest)`);
    if (named.length) parts.push(`For an uploaded language model the page picks what a practitioner would: ${named.join(', ')}. Each is a field; click one to change it.`);
  }
  if (s.attention && s.seq != null) parts.push(`Attention runs ${s.attention === 'eager' ? 'eagerly (the scores materialised)' : 'as one fused kernel (flash attention)'} (${change('attention', 'change')}).`);
  if (s.checkpointing === true) parts.push('Activation checkpointing is on: each block keeps only its input and recomputes its forward pass during the backward pass.');
  if (isNum(s.input_samples_per_s)) parts.push(`The input pipeline delivers at most ${F.si(s.input_samples_per_s)} samples/s; a step waits for its data when that is slower.`);
  if (s.overhead === 'none') parts.push(`Step times are the kernels' alone, without a framework's overhead (${change('overhead', 'change')}).`);
  else if (s.overhead) parts.push(`Each step includes a framework's overhead fitted on published runs: a gap per kernel launch, a fixed cost per step and a share of the communication overlap hides (${change('overhead', 'change')}).`);
  const b = budgetOf(reply);
  const steps = rows.find((r) => r.run?.steps)?.run.steps;
  if (b?.tokens != null) parts.push(`Training budget: <strong>${F.count(b.tokens)} tokens</strong>${steps ? ` = ${F.integer(steps)} steps` : ''}.`);
  else if (b?.samples != null) parts.push(`Training budget: <strong>${F.integer(b.samples)} samples × ${F.num(b.epochs)} epoch${b.epochs === 1 ? '' : 's'}</strong>${steps ? ` = ${F.integer(steps)} steps` : ''}.`);
  const reserve = s.memory_reserve;
  if (reserve && typeof reserve === 'object')
    parts.push(`Memory includes a CUDA context of ${F.gib(reserve.cuda_context_bytes)}, ${F.gib(reserve.library_workspace_bytes)} of cuBLAS workspaces, ${F.gib(reserve.nccl_bytes_per_group)} of NCCL buffers per process group and ${F.num((reserve.fragmentation ?? 0) * 100)}% fragmentation of the transient tensors${reserve.assumption ? ` (${esc(F.pageWords(reserve.assumption))})` : ''}.`);
  const extra = Object.entries(s)
    .filter(([k, v]) => !COVERED.has(k) && v != null && v !== false)
    .map(([k, v]) => extraSetting(table, k, v))
    .filter(Boolean);
  if (extra.length) parts.push(`Also: ${extra.map(esc).join('; ')}.`);
  const learned = String(s.predictor ?? '').startsWith('learned');
  parts.push(
    `Step times come from the ${learned ? "learned kernel predictor (each kernel's roofline time times a slowdown learned from measurements; the ranges are its uncertainty)" : `${esc(s.predictor ?? 'roofline')} predictor`}; ${esc(s.flops_convention ?? 'FLOPs = 2 × multiply-accumulates')}.`,
  );
  const priceWords = isNum(s.price_per_hour) ? `${F.usd(s.price_per_hour)} per accelerator-hour for every accelerator (yours)` : 'the lowest cloud price on file for each accelerator';
  if (rows.some((r) => r.run))
    parts.push(`Time to train, GPU-hours, cost and energy come from the calculator: cost at ${priceWords}${s.energy_model ? `; energy = ${esc(s.energy_model)}` : ''}.`);
  if (rows.some((r) => r.priceEdited)) parts.push('Prices marked ✎ were edited on this page.');
  return `<strong class="assumptions-title">What this assumes</strong><ul>${parts.map((p) => `<li>${p}</li>`).join('')}</ul>`;
}
