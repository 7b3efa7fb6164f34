// What would make a row fit, from its memory advice, in the page's words, and the buttons that apply it.
import { planText } from '../cluster.js';
import * as F from '../format.js';

const { esc, isNum } = F;

/**
 * The changes that make a row fit, from its memory advice, in the page's words (names, not ids; no
 * command-line flags): [{text, patch, key}], `patch` being the state change a button applies.
 * `nameOf(id)`: an accelerator's name. The advice names only accelerators the request asked about (the API's
 * rule), so no change adds one to the list.
 */
export function fixes(row, { nameOf = (id) => id } = {}) {
  const a = row?.advice;
  if (!a || typeof a !== 'object' || row.fits) return [];
  const out = [];
  const add = (text, patch, fitsOn = row.name, cost = null) => out.push({ text, patch, key: JSON.stringify(patch), fitsOn, cost });
  // The ranked changes (the cheapest, by the step-time increase, first), each applied as its option values.
  const ranked = Array.isArray(a.changes) ? a.changes.filter((c) => c?.options && typeof c.options === 'object') : null;
  for (const c of ranked ?? []) add(changeText(c), c.options, row.name, c.step_increase);
  const mb = a.micro_batch;
  // The ranked list covers the micro-batch and checkpointing changes by the same model.
  if (!ranked && mb?.batch != null) add(`micro-batch ${F.integer(mb.batch)} with ${F.integer(mb.grad_accum)}× gradient accumulation (the same samples per step)`, { batch: mb.batch, grad_accum: mb.grad_accum });
  const ck = ranked ? null : a.checkpointing;
  if (ck?.fits) add('activation checkpointing', { checkpointing: true });
  else if (ck?.micro_batch?.batch != null)
    add(`activation checkpointing with micro-batch ${F.integer(ck.micro_batch.batch)} × ${F.integer(ck.micro_batch.grad_accum)} accumulation`, { checkpointing: true, batch: ck.micro_batch.batch, grad_accum: ck.micro_batch.grad_accum });
  if (isNum(a.fsdp_devices) && a.fsdp_devices > 1) add(`${F.integer(a.fsdp_devices)} devices with fully sharded data parallelism (ZeRO 3)`, { gpus: a.fsdp_devices, zero: 3 });
  const on = a.fits_on;
  if (on?.gpus) add(`${F.integer(on.gpus)} devices (for example ${planText(on)})`, { gpus: on.gpus });
  // Fine-tuning: the lightest LoRA / QLoRA change that fits here, or the smallest accelerator it fits on.
  const ft = a.finetune;
  if (ft?.options && typeof ft.options === 'object') {
    if (ft.fits) add(`${ft.setting} (${F.gib(ft.peak_bytes)})`, ft.options);
    else if (ft.hardware) add(`${ft.setting} on ${nameOf(ft.hardware)} (${F.gib(ft.peak_bytes)})`, ft.options, nameOf(ft.hardware));
  }
  const sh = a.smallest_hardware;
  if (sh?.id && sh.id !== row.id) {
    const settings = [];
    const patch = {};
    if (sh.batch != null && sh.grad_accum != null) {
      settings.push(`micro-batch ${F.integer(sh.batch)} × ${F.integer(sh.grad_accum)} accumulation`);
      Object.assign(patch, { batch: sh.batch, grad_accum: sh.grad_accum });
    }
    if (sh.checkpointing) {
      settings.push('activation checkpointing');
      patch.checkpointing = true;
    }
    add(`${nameOf(sh.id)} (${F.gib(sh.capacity_bytes)})${settings.length ? ` with ${settings.join(' and ')}` : ''}`, patch, nameOf(sh.id));
  }
  return out;
}

const CHECKPOINTING_WORDS = {
  'attention-core': 'attention-core recomputation (Megatron selective)',
  'op-selective': 'per-op selective checkpointing',
  full: 'full activation checkpointing',
  offload: 'activations offloaded to host memory',
};

/** A ranked change in the page's words, with its reserved peak and what it costs in step time. */
export function changeText(c) {
  const o = c.options;
  const parts = [];
  if (o.loss === 'chunked') parts.push('chunked cross-entropy loss');
  if (o.checkpointing != null) parts.push(CHECKPOINTING_WORDS[o.checkpointing] ?? `${o.checkpointing} checkpointing`);
  if (o.batch != null) parts.push(`micro-batch ${F.integer(o.batch)}${o.grad_accum != null ? ` × ${F.integer(o.grad_accum)} accumulation` : ''}`);
  if (o.zero != null) parts.push(`ZeRO ${o.zero}`);
  const layout = ['dp', 'tp', 'pp', 'cp'].filter((k) => o[k] != null).map((k) => `${k} ${o[k]}`);
  if (layout.length) parts.push(layout.join(' · '));
  const cost = isNum(c.step_increase) ? `, step ${c.step_increase >= 0 ? '+' : '−'}${Math.abs(Math.round(c.step_increase * 100))}%` : '';
  const peak = isNum(c.peak_reserved_bytes) ? `${F.gib(c.peak_reserved_bytes)} reserved` : '';
  // A micro-batch below the largest that fits: the largest that divides the global batch (which the change keeps).
  const divisor =
    isNum(c.largest_fitting_batch) && isNum(o.batch) && isNum(o.grad_accum)
      ? `; ${F.integer(o.batch)} is the largest micro-batch that divides the global batch of ${F.integer(o.batch * o.grad_accum)}, up to ${F.integer(c.largest_fitting_batch)} fit`
      : '';
  return `${parts.join(' and ')}${peak || cost || divisor ? ` (${peak}${cost}${divisor})` : ''}`;
}

/**
 * What would make these rows fit, each change once, with the accelerators it makes fit (the most first):
 * [{text, patch, names}].
 */
export function fitSuggestions(rows, options = {}) {
  const byKey = new Map();
  for (const r of rows)
    for (const f of fixes(r, options)) {
      if (!byKey.has(f.key)) byKey.set(f.key, { ...f, names: [] });
      const entry = byKey.get(f.key);
      if (isNum(f.cost) && (!isNum(entry.cost) || f.cost < entry.cost)) entry.cost = f.cost;
      if (!entry.names.includes(f.fitsOn)) entry.names.push(f.fitsOn);
    }
  // The most accelerators first; among equals, the cheaper ranked change (its step-time increase), then the rest.
  const cost = (f) => (isNum(f.cost) ? f.cost : Infinity);
  const cheaper = (x, y) => (cost(x) === cost(y) ? 0 : cost(x) < cost(y) ? -1 : 1);
  return [...byKey.values()].sort((x, y) => y.names.length - x.names.length || cheaper(x, y));
}

/** The words before a list of changes: each of them alone makes it fit. */
export const changesLead = (list, max = 4) => (Math.min(list.length, max) === 1 ? 'One change makes it fit:' : 'Any of these changes makes it fit:');

/** Buttons that apply changes (data-apply holds the patch as JSON; the results panel applies it). */
export function suggestionButtons(list, max = 4) {
  return `<ul class="fixes">${list
    .slice(0, max)
    .map((f) => {
      const where = f.names?.length ? ` <span class="hint">fits on ${f.names.length > 3 ? `${f.names.slice(0, 3).map(esc).join(', ')} and ${f.names.length - 3} more` : f.names.map(esc).join(', ')}</span>` : '';
      return `<li><button type="button" class="small" data-apply="${esc(JSON.stringify(f.patch))}">Use ${esc(f.text)}</button>${where}</li>`;
    })
    .join('')}</ul>`;
}
