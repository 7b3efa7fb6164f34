// Turns a `predict` reply into table rows (with the page's price edits and, where the reply has no `run`,
// a time-to-train estimate from the step time), picks the best choice, and renders the table, the verdict,
// the plain-words assumptions and the breakdown of one accelerator.
import { achievedTflops, planText } from './cluster.js';
import * as F from './format.js';

const { esc, isNum } = F;

/** Short label for charts: the marketing name without the vendor. */
export const shortName = (name) =>
  String(name)
    .replace(/^(NVIDIA|AMD|Intel|Google Cloud|Google)\s+/, '')
    .replace(/\s*\(per chip\)/, '')
    .replace(/^(Tesla|GeForce|Instinct)\s+/, '');

/**
 * The run's budget: the one the API used (echoed in `settings`, the other null), else the request's, read
 * by the model's kind (tokens for a model with tokens).
 */
export function budgetOf(reply, request) {
  const s = reply?.settings ?? {};
  if (s.tokens != null) return { tokens: s.tokens };
  if (s.samples != null) return { samples: s.samples, epochs: s.epochs ?? 1 };
  if (request?.tokens != null && reply?.model?.tokens_per_sample > 0) return { tokens: request.tokens };
  if (request?.samples != null) return { samples: request.samples, epochs: request.epochs ?? 1 };
  return null;
}

/**
 * Rows for the table. `hardware`: id -> catalogue entry (for TDP and vendor); `customs`: the custom sheets
 * sent; `prices`: the page's edits (id -> USD/hour); `request`: the request that produced the reply.
 */
export function buildRows(reply, { hardware, customs = [], prices = {}, request }) {
  const settings = reply.settings ?? {};
  const model = reply.model ?? {};
  const tokensPerSample = model.tokens_per_sample || 0;
  const batch = settings.batch ?? request?.batch ?? 1;
  const devices = settings.devices ?? 1;
  const plan = budgetOf(reply, request);
  const customById = new Map(customs.map((c) => [c.id, c]));
  return (reply.results ?? []).filter((r) => !r.error).map((r) => {
    const entry = hardware.get(r.hardware);
    const custom = customById.get(r.hardware);
    const tdp = entry?.tdp_w || custom?.power?.tdp_w || null;
    const global = settings.price_per_hour ?? request?.price_per_hour;
    const apiPrice = isNum(r.run?.price_per_hour_used) ? r.run.price_per_hour_used : isNum(global) ? global : r.price_per_hour > 0 ? r.price_per_hour : null;
    const edited = Object.hasOwn(prices, r.hardware) ? prices[r.hardware] : null;
    const price = edited ?? apiPrice;
    let run = null;
    if (r.run && typeof r.run === 'object') {
      run = { ...r.run, estimated: false };
      if (edited != null && isNum(run.gpu_hours)) run.cost_usd = run.gpu_hours * edited;
      else if (!isNum(run.cost_usd) && price != null && isNum(run.gpu_hours)) run.cost_usd = run.gpu_hours * price;
    } else if (plan && isNum(r.step?.total_ms)) {
      let samples = null;
      if (plan.tokens != null && tokensPerSample > 0) samples = plan.tokens / tokensPerSample;
      else if (plan.samples != null) samples = plan.samples * plan.epochs;
      if (samples != null) {
        const steps = Math.ceil(samples / batch);
        const hours = (steps * r.step.total_ms) / 3.6e6;
        const n = r.plan?.gpus ?? devices;
        run = {
          steps,
          hours,
          gpu_hours: hours * n,
          cost_usd: price != null ? hours * n * price : null,
          energy_kwh: tdp ? (hours * n * tdp) / 1000 : null,
          estimated: true,
        };
      }
    }
    return {
      id: r.hardware,
      name: r.name ?? r.hardware,
      vendor: entry?.vendor ?? custom?.vendor ?? '',
      custom: Boolean(custom) && !entry,
      result: r,
      step: r.step?.total_ms,
      low: r.uncertainty?.low_ms,
      high: r.uncertainty?.high_ms,
      samplesPerS: r.throughput?.samples_per_s,
      tokensPerS: r.throughput?.tokens_per_s,
      run,
      hours: run?.hours,
      gpuHours: run?.gpu_hours,
      cost: run?.cost_usd ?? null,
      energy: run?.energy_kwh ?? null,
      price,
      priceEdited: edited != null,
      peak: r.memory?.peak_bytes_per_device,
      capacity: r.memory?.capacity_bytes,
      fits: r.memory?.fits !== false,
      advice: r.memory?.advice,
      // The precision matmuls run at on this device; `fallback` is set where it has no units for the one asked
      // (the API predicted the whole step at `used`).
      precisionUsed: r.matmul_precision_used ?? null,
      fallback: r.precision_fallback && typeof r.precision_fallback === 'object' ? r.precision_fallback : null,
      // A cluster's answer: the plan (layout) and how well it uses the devices.
      devices: r.plan?.gpus ?? devices,
      plan: r.plan ?? null,
      mfu: isNum(r.throughput?.mfu) ? r.throughput.mfu : null,
      tflops: achievedTflops(r.throughput?.mfu, entry?.peak_tflops ?? custom?.peak_tflops, r.matmul_precision_used),
    };
  });
}

/** The accelerators a reply could not answer for (a sheet that cannot form the cluster): {id, name, message}. */
export function refusedRows(reply) {
  return (reply?.results ?? [])
    .filter((r) => r.error)
    .map((r) => {
      const name = r.name ?? r.hardware;
      const message = String(r.error.message ?? r.error);
      return { id: r.hardware, name, message: message.startsWith(`${name}: `) ? message.slice(name.length + 2) : message };
    });
}

// The table's columns, memory next to the name; `when` hides a column that would say nothing (MFU without a
// cluster's answer). GPU-hours are the time to train's second line on a cluster (on one device they are the
// same number, so not repeated).
export const COLUMNS = [
  { key: 'name', label: 'Accelerator', value: (r) => r.name.toLowerCase(), dir: 1 },
  { key: 'memory', label: 'Memory', unit: 'peak / capacity', value: (r) => (r.capacity ? r.peak / r.capacity : null), dir: 1 },
  { key: 'step', label: 'Step time', unit: 'per step', value: (r) => r.step, dir: 1 },
  { key: 'throughput', label: 'Throughput', value: (r) => r.samplesPerS, dir: -1 },
  { key: 'mfu', label: 'MFU', unit: 'TFLOP/s each', value: (r) => r.mfu, dir: -1, when: (rows) => rows.some((r) => isNum(r.mfu)) },
  { key: 'hours', label: 'Time to train', value: (r) => r.hours, dir: 1 },
  { key: 'cost', label: 'Cost', unit: 'at price / hour', value: (r) => r.cost, dir: 1 },
  { key: 'energy', label: 'Energy', unit: 'to train', value: (r) => r.energy, dir: 1 },
];

/** The columns shown for these rows. */
export const columnsFor = (rows) => COLUMNS.filter((c) => !c.when || c.when(rows));

export function sortRows(rows, key, dir) {
  const col = COLUMNS.find((c) => c.key === key) ?? COLUMNS[1];
  return [...rows].sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    const xm = x == null || (typeof x === 'number' && !Number.isFinite(x));
    const ym = y == null || (typeof y === 'number' && !Number.isFinite(y));
    if (xm || ym) return xm === ym ? 0 : xm ? 1 : -1; // missing values last, whatever the direction
    if (x < y) return -dir;
    if (x > y) return dir;
    return 0;
  });
}

/** Best choice: the cheapest accelerator that fits; without prices, the fastest that fits. */
export function pickBest(rows) {
  const fitting = rows.filter((r) => r.fits && isNum(r.step));
  const by = (f) => fitting.filter((r) => isNum(f(r))).sort((a, b) => f(a) - f(b))[0] ?? null;
  const fastest = by((r) => r.step);
  const cheapest = by((r) => r.cost);
  return { best: cheapest ?? fastest, fastest, cheapest, fitting: fitting.length };
}

/** The marker of a row predicted at a fallback precision ('' otherwise): "as bf16", the reason in its tooltip. */
export function precisionBadge(row) {
  const f = row.fallback;
  if (!f) return '';
  const text = `${row.id}: no ${String(f.requested).toUpperCase()} units, predicted as ${f.used}${f.reason ? ` (${f.reason})` : ''}`;
  return `<span class="badge fallback" title="${esc(text)}" aria-label="${esc(text)}">as ${esc(f.used)}</span>`;
}

/**
 * Bar widths and colours are data-width / data-color attributes in the HTML strings, set here through the
 * CSSOM once the HTML is on the page: the Content-Security-Policy (style-src 'self') blocks inline style attributes.
 */
export function applyStyles(root) {
  if (typeof root?.querySelectorAll !== 'function') return;
  for (const el of root.querySelectorAll('[data-width], [data-color]')) {
    if (el.dataset.width && /^\d+(\.\d+)?%$/.test(el.dataset.width)) el.style.width = el.dataset.width;
    if (el.dataset.color) el.style.background = el.dataset.color;
  }
}

export function renderTable(table, rows, { sort, dir, selected, best, fastest, language }) {
  const columns = columnsFor(rows);
  const head = columns.map((c) => {
    const label = c.key === 'throughput' ? `Throughput<span class="unit">${language ? 'tokens/s' : 'samples/s'}</span>` : `${c.label}${c.unit ? `<span class="unit">${c.unit}</span>` : ''}`;
    const aria = c.key === sort ? `aria-sort="${dir > 0 ? 'ascending' : 'descending'}"` : '';
    return `<th scope="col" data-col="${c.key}" ${aria}><button type="button" class="sort" data-sort="${c.key}">${label}</button></th>`;
  }).join('');
  const cells = {
    memory: (r) => {
      const share = r.capacity ? Math.min(1, r.peak / r.capacity) : 0;
      const advice = r.fits ? '' : fixes(r).map((f) => f.text).join('; ');
      return `<td data-col="memory" data-label="Memory">${F.num(r.peak / 1e9)} / ${F.gb(r.capacity)}<span class="range">${r.devices > 1 ? 'each, ' : ''}${r.fits ? '<span class="fits">✓ fits</span>' : `<span class="nofit-label"${advice ? ` title="${esc(`Would fit with: ${advice}`)}"` : ''}>✗ does not fit</span>`}</span>
        <span class="membar ${r.fits ? '' : 'over'}" aria-hidden="true"><span data-width="${(share * 100).toFixed(1)}%"></span></span></td>`;
    },
    step: (r) => `<td data-col="step" data-label="Step time" data-value="${r.step}">${F.ms(r.step)}${isNum(r.low) && isNum(r.high) ? `<span class="range">${F.ms(r.low)} – ${F.ms(r.high)}</span>` : ''}</td>`,
    throughput: (r) => `<td data-col="throughput" data-label="Throughput">${language && isNum(r.tokensPerS) ? F.si(r.tokensPerS) : F.si(r.samplesPerS)}<span class="range">${language ? 'tokens/s' : 'samples/s'}</span></td>`,
    mfu: (r) => `<td data-col="mfu" data-label="MFU" data-value="${r.mfu ?? ''}">${isNum(r.mfu) ? `${(r.mfu * 100).toFixed(1)}%` : '—'}${isNum(r.tflops) ? `<span class="range">${F.num(r.tflops)} TFLOP/s</span>` : ''}</td>`,
    hours: (r) =>
      `<td data-col="hours" data-label="Time to train"${r.run?.estimated ? ' title="estimated in the page from the step time"' : ''}>${F.hours(r.hours)}${r.devices > 1 && isNum(r.gpuHours) ? `<span class="range" data-col="gpu_hours">${F.num(r.gpuHours)} GPU-hours</span>` : ''}</td>`,
    cost: (r) =>
      `<td data-col="cost" data-label="Cost">${F.usd(r.cost)}<span class="range">${r.price != null ? `at ${F.usd(r.price)}/h` : '<span title="no public price; set one in the accelerator list">no price</span>'}${r.priceEdited ? ' <span class="edited-mark" title="price edited on this page">✎ edited</span>' : ''}</span></td>`,
    energy: (r) => `<td data-col="energy" data-label="Energy">${F.kwh(r.energy)}</td>`,
  };
  const body = rows
    .map((r) => {
      const classes = [r.id === best?.id ? 'best' : '', r.fits ? '' : 'nofit', r.id === selected ? 'selected' : ''].filter(Boolean).join(' ');
      const badges = [
        r.id === best?.id ? '<span class="badge best">best choice</span>' : '',
        r.id === fastest?.id && fastest?.id !== best?.id ? '<span class="badge fast">fastest</span>' : '',
        r.custom ? '<span class="badge custom">custom</span>' : '',
        precisionBadge(r),
      ].join('');
      const plan = r.plan
        ? `<span class="plan"><span class="plan-text">${r.devices} × · ${esc(planText(r.plan))}</span>${r.plan.searched ? ` <button type="button" class="small link" data-pin-layout="${esc(r.id)}" title="Fix this layout in the cluster fields (then it is no longer searched)">Pin this layout</button>` : ''}</span>`
        : '';
      return `<tr class="${classes}" data-id="${esc(r.id)}">
        <th scope="row"><span class="vendor">${esc(r.vendor)}</span><button type="button" class="hw-pick" data-pick="${esc(r.id)}" aria-pressed="${r.id === selected}" title="${esc(r.name)}">${esc(r.vendor === 'custom' ? r.name : shortName(r.name))}</button>${badges}${plan}</th>
        ${columns.slice(1).map((c) => cells[c.key](r)).join('')}
      </tr>`;
    })
    .join('');
  table.innerHTML = `<caption class="visually-hidden">Predicted training memory, step time, throughput, time to train, cost and energy per accelerator</caption>
    <thead><tr>${head}</tr></thead><tbody>${body}</tbody>`;
  applyStyles(table);
}

// ---- what would make it fit ---------------------------------------------------------------------------

/**
 * The changes that make a row fit, from its memory advice, in the page's words (names, not ids; no
 * command-line flags): [{text, patch, key}], `patch` being the state change a button applies.
 * `nameOf(id)`: an accelerator's name; `hw`: the state's accelerator list (null: all).
 */
export function fixes(row, { nameOf = (id) => id, hw = null } = {}) {
  const a = row?.advice;
  if (!a || typeof a !== 'object' || row.fits) return [];
  const out = [];
  const add = (text, patch, fitsOn = row.name) => out.push({ text, patch, key: JSON.stringify(patch), fitsOn });
  const mb = a.micro_batch;
  if (mb?.batch != null) add(`micro-batch ${F.integer(mb.batch)} with ${F.integer(mb.grad_accum)}× gradient accumulation (the same samples per step)`, { batch: mb.batch, grad_accum: mb.grad_accum });
  const ck = a.checkpointing;
  if (ck?.fits) add('activation checkpointing', { checkpointing: true });
  else if (ck?.micro_batch?.batch != null)
    add(`activation checkpointing with micro-batch ${F.integer(ck.micro_batch.batch)} × ${F.integer(ck.micro_batch.grad_accum)} accumulation`, { checkpointing: true, batch: ck.micro_batch.batch, grad_accum: ck.micro_batch.grad_accum });
  if (isNum(a.fsdp_devices) && a.fsdp_devices > 1) add(`${F.integer(a.fsdp_devices)} devices with fully sharded data parallelism (ZeRO 3)`, { gpus: a.fsdp_devices, zero: 3 });
  const on = a.fits_on;
  if (on?.gpus) add(`${F.integer(on.gpus)} devices (for example ${planText(on)})`, { gpus: on.gpus });
  // Fine-tuning: the lightest LoRA / QLoRA change that fits here, or the smallest accelerator it fits on.
  const ft = a.finetune;
  if (ft?.options && typeof ft.options === 'object') {
    if (ft.fits) add(`${ft.setting} (${F.gb(ft.peak_bytes)})`, ft.options);
    else if (ft.hardware) add(`${ft.setting} on ${nameOf(ft.hardware)} (${F.gb(ft.peak_bytes)})`, { ...ft.options, ...(hw && !hw.includes(ft.hardware) ? { hw: [...hw, ft.hardware] } : {}) }, nameOf(ft.hardware));
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
    if (hw && !hw.includes(sh.id)) patch.hw = [...hw, sh.id];
    add(`${nameOf(sh.id)} (${F.gb(sh.capacity_bytes)})${settings.length ? ` with ${settings.join(' and ')}` : ''}`, patch, nameOf(sh.id));
  }
  return out;
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
      if (!entry.names.includes(f.fitsOn)) entry.names.push(f.fitsOn);
    }
  return [...byKey.values()].sort((x, y) => y.names.length - x.names.length);
}

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

export function verdictHtml(rows, pick, options = {}) {
  if (!rows.length) return '';
  const nofit = rows.length - pick.fitting;
  const tail = nofit ? ` ${nofit} of ${rows.length} cannot hold this training step in memory.` : '';
  if (!pick.best) {
    const list = fitSuggestions(rows, options);
    const what = rows.length === 1 ? `${esc(rows[0].name)} cannot` : `None of the ${rows.length} accelerators can`;
    return `<strong>Nothing fits with these settings.</strong> ${what} hold this training step in memory. ${
      list.length ? `One change makes it fit:${suggestionButtons(list)}` : 'Try a smaller micro-batch, activation checkpointing, more devices or a lower precision.'
    }`;
  }
  const b = pick.best;
  const time = isNum(b.hours) ? `trains in <strong>${F.hours(b.hours)}</strong>` : `runs a step in <strong>${F.ms(b.step)}</strong>`;
  const cost = isNum(b.cost) ? ` for <strong>${F.usd(b.cost)}</strong>` : '';
  const why = pick.cheapest ? 'the cheapest that fits' : 'the fastest that fits (no prices known)';
  const fast =
    pick.fastest && pick.fastest.id !== b.id
      ? ` Fastest: <strong>${esc(pick.fastest.name)}</strong>${isNum(pick.fastest.hours) ? `, ${F.hours(pick.fastest.hours)}` : ''}${isNum(pick.fastest.cost) ? ` for ${F.usd(pick.fastest.cost)}` : ''}.`
      : '';
  const on = b.devices > 1 ? ` on ${F.integer(b.devices)} devices` : '';
  return `Best choice: <strong>${esc(b.name)}</strong>${on} ${time}${cost} (${why}).${fast}${tail}`;
}

const PRECISION_WORDS = {
  fp32: 'fp32 (full precision)',
  tf32: 'tf32 matrix maths with fp32 storage',
  fp16: 'fp16 mixed precision',
  bf16: 'bf16 mixed precision',
  fp8: 'fp8 matrix maths (a bf16 model with fp32 master weights)',
};
const MIXED_WORDS = {
  autocast: 'PyTorch autocast: fp32 weights and gradients, norms and softmax in fp32',
  half: 'a half-precision model beside fp32 master weights',
};
const precisionWords = (s) => {
  const base = PRECISION_WORDS[s.precision] ?? s.precision;
  return s.mixed && s.precision !== 'fp8' ? `${base} (${MIXED_WORDS[s.mixed] ?? s.mixed})` : base;
};
const OPTIMIZER_WORDS = { adamw: 'AdamW', adam: 'Adam', sgd: 'SGD with momentum' };
// Settings the sentences below put into words; anything else the reply carries is listed as it is.
const COVERED = new Set([
  'batch', 'seq', 'image', 'precision', 'optimizer', 'predictor', 'devices', 'flops_convention', 'tokens', 'samples',
  'epochs', 'grad_accum', 'global_batch', 'checkpointing', 'optimizer_impl', 'optimizer_impl_used', 'price_per_hour',
  'price_source', 'input_samples_per_s', 'kernel_overhead_ms', 'memory_reserve', 'energy_model', 'mixed',
  'attention', 'breakdown', 'gpus', 'gpus_per_node', 'layout', 'network',
]);

/** The page's defaults for an uploaded language model (state.preset 'llm'): each named, with its field. */
export const LLM_DEFAULTS = Object.freeze({ batch: 1, attention: 'flash', seq: 4096, step_tokens: 2 ** 20 });

/**
 * The state patch those defaults make for an uploaded language model whose own sequence length is `seq`:
 * flash attention, at most 4,096 tokens, micro-batch 1 and gradient accumulation up to about a million
 * tokens per optimizer step (the global batch in tokens when the sequence divides it, else in samples).
 */
export function llmDefaults(seq, table) {
  const s = Math.min(seq, LLM_DEFAULTS.seq);
  const patch = { preset: 'llm', batch: LLM_DEFAULTS.batch, seq: seq > LLM_DEFAULTS.seq ? s : null };
  if (table.byName.has('attention')) patch.attention = LLM_DEFAULTS.attention;
  if (table.byName.has('global_batch_tokens') && LLM_DEFAULTS.step_tokens % s === 0) patch.global_batch_tokens = LLM_DEFAULTS.step_tokens;
  else if (table.byName.has('global_batch')) patch.global_batch = Math.max(1, Math.round(LLM_DEFAULTS.step_tokens / s));
  return patch;
}

const change = (field, text) => `<button type="button" class="link" data-focus="${esc(field)}" title="Change it">${text}</button>`;

export function assumptionsHtml(reply, request, rows, { state = null, table = null } = {}) {
  const s = reply.settings ?? {};
  const m = reply.model ?? {};
  const parts = [];
  const batch = F.integer(s.batch);
  let what;
  if (s.seq != null) what = `a batch of ${batch} sequences of ${F.integer(s.seq)} tokens (${F.integer(s.batch * s.seq)} tokens)`;
  else if (s.image != null) what = `a batch of ${batch} images of ${F.integer(s.image)} × ${F.integer(s.image)} pixels`;
  else what = `a batch of ${batch} samples`;
  const devices = s.devices ?? 1;
  const accum = s.grad_accum > 1 ? `, accumulating gradients over ${F.integer(s.grad_accum)} such micro-batches (${F.integer(s.global_batch ?? s.batch * s.grad_accum)} samples per optimizer step)` : '';
  const impl = s.optimizer_impl_used ?? s.optimizer_impl;
  const plans = rows.filter((r) => r.plan);
  let where;
  if (devices === 1 && !plans.length) where = `on one accelerator (no parallelism; ${change('gpus', 'ask for more')})`;
  else {
    const searched = plans.some((r) => r.plan.searched);
    const nodes = s.gpus_per_node ? `, nodes of ${F.integer(s.gpus_per_node)}` : ', nodes as on each accelerator\'s spec sheet';
    where = `on <strong>${change('gpus', `${F.integer(devices)} devices`)}</strong> of each accelerator${nodes}, ${searched ? 'each with the fastest layout that fits (its plan is under its name)' : 'with the layout given'}`;
  }
  parts.push(
    `Each step trains <strong>${esc(m.name ?? 'the model')}</strong> (${F.count(m.params)} parameters) on ${what}${accum}, in ${esc(precisionWords(s))}, with the ${esc(OPTIMIZER_WORDS[s.optimizer] ?? s.optimizer)} optimizer${impl ? ` (${esc(impl)} kernels)` : ''}, ${where}.`,
  );
  if (state?.preset === 'llm') {
    const named = [];
    if (state.attention === LLM_DEFAULTS.attention) named.push(change('attention', 'flash attention'));
    if (s.seq != null) named.push(change('seq', `${F.integer(s.seq)} tokens per sequence`) + (state.seq != null ? ' (at most 4,096: the model\'s context is longer)' : ' (the model\'s own context)'));
    if (state.batch === LLM_DEFAULTS.batch) named.push(change('batch', 'micro-batch 1'));
    if (state.global_batch_tokens != null) named.push(`${change('global_batch_tokens', `${F.integer(state.global_batch_tokens)} tokens per optimizer step`)} (gradient accumulation makes up the rest)`);
    else if (state.global_batch != null) named.push(`${change('global_batch', `${F.integer(state.global_batch)} sequences per optimizer step`)} (gradient accumulation makes up the rest)`);
    if (named.length) parts.push(`For an uploaded language model the page picks what a practitioner would: ${named.join(', ')}. Each is a field; click one to change it.`);
  }
  if (s.attention && s.seq != null) parts.push(`Attention runs ${s.attention === 'eager' ? 'eagerly (the scores materialised)' : 'as one fused kernel (flash attention)'} (${change('attention', 'change')}).`);
  if (s.checkpointing === true) parts.push('Activation checkpointing is on: each block keeps only its input and recomputes its forward pass during the backward pass.');
  if (isNum(s.input_samples_per_s)) parts.push(`The input pipeline delivers at most ${F.si(s.input_samples_per_s)} samples/s; a step waits for its data when that is slower.`);
  if (isNum(s.kernel_overhead_ms) && s.kernel_overhead_ms > 0) parts.push(`Each kernel launch costs ${F.ms(s.kernel_overhead_ms)} of framework overhead.`);
  const b = budgetOf(reply, request);
  const steps = rows.find((r) => r.run?.steps)?.run.steps;
  if (b?.tokens != null) parts.push(`Training budget: <strong>${F.count(b.tokens)} tokens</strong>${steps ? ` = ${F.integer(steps)} steps` : ''}.`);
  else if (b?.samples != null) parts.push(`Training budget: <strong>${F.integer(b.samples)} samples × ${F.num(b.epochs)} epoch${b.epochs === 1 ? '' : 's'}</strong>${steps ? ` = ${F.integer(steps)} steps` : ''}.`);
  const reserve = s.memory_reserve;
  if (reserve && typeof reserve === 'object')
    parts.push(`Memory includes a framework reserve of ${F.gb(reserve.context_bytes)} plus ${F.num((reserve.fraction ?? 0) * 100)}% of the tensor peak${reserve.assumption ? ` (${esc(reserve.assumption)})` : ''}.`);
  const extra = Object.entries(s).filter(([k, v]) => !COVERED.has(k) && v != null && v !== false);
  if (extra.length)
    parts.push(`Also: ${extra.map(([k, v]) => `${esc(k.replace(/_/g, ' '))} ${esc(typeof v === 'object' ? JSON.stringify(v) : v)}`).join(', ')}.`);
  const learned = String(s.predictor ?? '').startsWith('learned');
  parts.push(
    `Step times come from the ${learned ? "learned kernel predictor (each kernel's roofline time times a slowdown learned from measurements; the ranges are its uncertainty)" : `${esc(s.predictor ?? 'roofline')} predictor`}; ${esc(s.flops_convention ?? 'FLOPs = 2 × multiply-accumulates')}.`,
  );
  const estimated = rows.some((r) => r.run?.estimated);
  const priceWords = isNum(s.price_per_hour) ? `${F.usd(s.price_per_hour)} per accelerator-hour for every accelerator (yours)` : 'the lowest cloud price on file for each accelerator';
  if (estimated)
    parts.push(`Time to train = steps × step time; cost = GPU-hours × ${priceWords}; energy = hours × board power (TDP). These three are worked out in the page from the step time.`);
  else
    parts.push(`Time to train, GPU-hours, cost and energy come from the calculator: cost at ${priceWords}${s.energy_model ? `; energy = ${esc(s.energy_model)}` : ''}.`);
  if (rows.some((r) => r.priceEdited)) parts.push('Prices marked ✎ were edited on this page.');
  return `<strong class="assumptions-title">What this assumes</strong><ul>${parts.map((p) => `<li>${p}</li>`).join('')}</ul>`;
}

const STEP_PARTS = [
  ['forward_ms', 'Forward', 'var(--c-fwd)'],
  ['backward_ms', 'Backward', 'var(--c-bwd)'],
  ['optimizer_ms', 'Optimizer', 'var(--c-opt)'],
  ['communication_ms', 'Exposed communication', 'var(--c-comm)'],
  ['bubble_ms', 'Pipeline bubble', '#b07cc6'],
  ['input_stall_ms', 'Waiting for input', '#8a94a6'],
];
// The parts that add up to the peak (weights + gradients + states + activations + temporary + reserve).
const MEMORY_PARTS = [
  ['weights_bytes', 'Weights', 'var(--c-fwd)'],
  ['gradients_bytes', 'Gradients', 'var(--c-bwd)'],
  ['optimizer_state_bytes', 'Optimizer states', 'var(--c-opt)'],
  ['activation_bytes', 'Activations', 'var(--c-comm)'],
  ['temporary_bytes', 'Temporary buffers', '#8a94a6'],
  ['framework_reserve_bytes', 'Framework reserve', '#c2a060'],
];

function stackHtml(parts, total, fmt, label) {
  const segs = parts.filter((p) => p.value > 0);
  return `<div class="stack" role="img" aria-label="${esc(label)}">${segs
    .map((p) => `<span data-width="${((p.value / total) * 100).toFixed(2)}%" data-color="${p.color}" title="${esc(p.label)}: ${esc(fmt(p.value))}"></span>`)
    .join('')}</div>
    <ul class="legend">${parts
      .map((p) => `<li><span class="sw" data-color="${p.color}"></span><span>${esc(p.label)}</span><span>${fmt(p.value)}</span><span class="pct">${total > 0 ? `${((p.value / total) * 100).toFixed(1)}%` : ''}</span></li>`)
      .join('')}</ul>`;
}

// Horizontal bars for [label, ms] pairs, longest first, each with its share of the step.
function barsHtml(entries, total) {
  const max = entries[0]?.[1] || 1;
  return `<ul class="bars">${entries
    .map(
      ([name, ms]) =>
        `<li><span>${esc(name)}</span><span class="bar" aria-hidden="true"><span data-width="${((ms / max) * 100).toFixed(1)}%"></span></span><span class="val">${F.ms(ms)} <small>${total ? ((ms / total) * 100).toFixed(0) : 0}%</small></span></li>`,
    )
    .join('')}</ul>`;
}

/** The longest layers of one accelerator's step (`step.layers` of a `breakdown` reply), the rest summed. */
export function layersHtml(step, shown = 10) {
  const layers = [...(step?.layers ?? [])].sort((a, b) => b.total_ms - a.total_ms);
  if (!layers.length) return '<p class="hint">No per-layer times in this reply.</p>';
  // The kind only where the name does not already say it ("loss (cross_entropy)", not "mlp (mlp)").
  const label = (l) => `${l.name}${l.repeat > 1 ? ` ×${l.repeat}` : ''}${l.name.includes(l.kind) ? '' : ` (${l.kind})`}`;
  const entries = layers.slice(0, shown).map((l) => [label(l), l.total_ms]);
  const rest = layers.slice(shown).reduce((s, l) => s + l.total_ms, 0);
  if (rest > 0) entries.push([`${layers.length - shown} more layers`, rest]);
  return `${barsHtml(entries, step.total_ms)}<p class="hint">Forward and backward of each layer over every repeat and micro-batch; the optimizer (${F.ms(step.optimizer_ms)}) and gradient accumulation are no layer's.</p>`;
}

export function breakdownHtml(row, options = {}) {
  if (!row) return '<p class="hint">No accelerator selected.</p>';
  const r = row.result;
  const step = r.step ?? {};
  const total = step.total_ms ?? 0;
  const stepParts = STEP_PARTS.filter(([k]) => k in step && ((k !== 'input_stall_ms' && k !== 'bubble_ms') || step[k] > 0 || (k === 'bubble_ms' && r.plan?.pp > 1))).map(([k, label, color]) => ({ label, color, value: step[k] ?? 0 }));
  const families = Object.entries(step.by_family_ms ?? {}).sort((a, b) => b[1] - a[1]);
  const mem = r.memory ?? {};
  const memParts = MEMORY_PARTS.filter(([k]) => k in mem && (mem[k] > 0 || k !== 'framework_reserve_bytes')).map(([k, label, color]) => ({ label, color, value: mem[k] ?? 0 }));
  const memTotal = Math.max(mem.peak_bytes_per_device ?? 0, memParts.reduce((s, p) => s + p.value, 0));
  const range = isNum(row.low) && isNum(row.high) ? ` (likely ${F.ms(row.low)} – ${F.ms(row.high)})` : '';
  const adviceHtml = adviceBlock(row, options);
  const notes = [];
  if (step.recompute_ms > 0) notes.push(`backward includes ${F.ms(step.recompute_ms)} of checkpointing recompute`);
  if (step.grad_accumulation_ms > 0) notes.push(`and ${F.ms(step.grad_accumulation_ms)} of gradient accumulation`);
  if (step.grad_accum > 1 && isNum(step.micro_batch_ms)) notes.push(`${F.integer(step.grad_accum)} micro-batches of ${F.ms(step.micro_batch_ms)}`);
  if (step.input_bound) notes.push('the input pipeline limits this step');
  if (isNum(step.kernels)) notes.push(`${F.integer(step.kernels)} kernel launches`);
  const memNotes = [];
  if (mem.peak_phase) memNotes.push(`peak during the ${esc(String(mem.peak_phase).replace(/_/g, '/'))} phase`);
  if (mem.checkpointed_blocks > 0) memNotes.push(`${F.integer(mem.checkpointed_blocks)} checkpointed blocks`);
  return `
    <div>
      <h3>Step on ${esc(row.name)}: ${F.ms(total)}${range}</h3>
      ${stackHtml(stepParts, total, F.ms, `Step time split: ${stepParts.map((p) => `${p.label} ${F.ms(p.value)}`).join(', ')}`)}
      ${notes.length ? `<p class="hint">${notes.join('; ')}.</p>` : ''}
      ${planHtml(row)}
      <h3>By kernel family</h3>
      ${barsHtml(families, total)}
      <h3>By layer</h3>
      <div id="layer-breakdown" aria-live="polite"><p class="hint">Timing each layer…</p></div>
    </div>
    <div>
      <h3>Memory${row.devices > 1 ? ' per device' : ''}: ${F.gb(mem.peak_bytes_per_device)} of ${F.gb(mem.capacity_bytes)} ${row.fits ? '<span class="fits">fits</span>' : '<span class="nofit-label">does not fit</span>'}</h3>
      ${stackHtml(memParts, memTotal || 1, F.gb, `Memory split: ${memParts.map((p) => `${p.label} ${F.gb(p.value)}`).join(', ')}`)}
      ${memNotes.length ? `<p class="hint">${memNotes.join('; ')}.</p>` : ''}
      ${adviceHtml}
      ${row.run ? `<h3>Training run</h3><ul class="legend run">
        ${isNum(row.run.steps) ? `<li><span></span><span>Steps</span><span>${F.integer(row.run.steps)}</span><span></span></li>` : ''}
        <li><span></span><span>Time to train</span><span>${F.hours(row.hours)}</span><span></span></li>
        <li><span></span><span>GPU-hours</span><span>${F.num(row.gpuHours)}</span><span></span></li>
        <li><span></span><span>Cost</span><span>${F.usd(row.cost)}</span><span></span></li>
        <li><span></span><span>Energy</span><span>${F.kwh(row.energy)}</span><span></span></li></ul>` : ''}
    </div>`;
}

// A cluster's plan: the layout, where the devices sit, communication by kind (total and exposed), the bubble,
// the stages and the runners-up with why each loses.
function planHtml(row) {
  const p = row.plan;
  if (!p) return '';
  const step = row.result.step ?? {};
  const li = (label, value) => `<li><span></span><span>${label}</span><span>${value}</span><span></span></li>`;
  const comm = Object.entries(step.communication ?? {}).filter(([, c]) => c.total_ms > 0);
  const link = (l) => (l ? `${esc(l.name ?? l.kind)}${isNum(l.gbps_per_device) ? `, ${F.num(l.gbps_per_device)} GB/s per device` : isNum(l.gbps_per_node) ? `, ${F.num(l.gbps_per_node)} GB/s per node` : ''}` : '—');
  const alternatives = (p.alternatives ?? []).slice(0, 3);
  return `<h3>Plan on ${F.integer(p.gpus)} devices${p.searched ? ' (searched: the fastest that fits)' : ''}</h3>
    <p class="plan-line">${esc(planText(p))}</p>
    <ul class="legend run">
      ${li('Nodes', `${F.integer(p.nodes)} × ${F.integer(p.gpus_per_node)} devices`)}
      ${li('Within a node', link(p.scale_up))}
      ${p.nodes > 1 ? li('Between nodes', link(p.scale_out)) : ''}
      ${comm.map(([kind, c]) => li(`${esc(kind[0].toUpperCase() + kind.slice(1))} communication`, `${F.ms(c.exposed_ms)} exposed of ${F.ms(c.total_ms)}`)).join('')}
      ${isNum(step.bubble_ms) && p.pp > 1 ? li('Pipeline bubble', F.ms(step.bubble_ms)) : ''}
      ${p.pp > 1 && p.stage_ms ? li('Stage times', p.stage_ms.map((t) => F.ms(t)).join(', ')) : ''}
      ${isNum(p.layouts_searched) ? li('Layouts', `${F.integer(p.layouts_searched)} considered, ${F.integer(p.layouts_timed)} timed`) : ''}
    </ul>
    ${alternatives.length ? `<p class="hint">Runners-up: ${alternatives.map((x) => `${esc(planText(x))}: ${esc(x.why ?? x.loses_on ?? '')}`).join('; ')}.</p>` : ''}`;
}

function adviceBlock(row, options) {
  const advice = row.result.memory?.advice;
  if (!advice || row.fits) return '';
  if (typeof advice !== 'object' || Array.isArray(advice)) return `<div class="advice"><strong>Does not fit.</strong></div>`;
  const list = fixes(row, options).map((f) => ({ ...f, names: [] }));
  return `<div class="advice"><strong>Does not fit${isNum(advice.over_bytes) ? ` by ${F.gb(advice.over_bytes)}` : ''}.</strong> ${
    list.length ? `It would fit with:${suggestionButtons(list, 6)}` : 'No single change the calculator knows of makes it fit.'
  }</div>`;
}

/** CSV of the table (one row per accelerator, raw numbers). */
export function toCsv(rows, reply) {
  const s = reply.settings ?? {};
  const header = [
    'hardware', 'name', 'model', 'batch', 'seq', 'image', 'precision', 'optimizer', 'step_ms', 'low_ms', 'high_ms',
    'forward_ms', 'backward_ms', 'optimizer_ms', 'communication_ms', 'samples_per_s', 'tokens_per_s', 'steps', 'hours',
    'gpu_hours', 'price_per_hour', 'cost_usd', 'energy_kwh', 'peak_bytes', 'capacity_bytes', 'fits',
    'matmul_precision_used',
  ];
  const lines = rows.map((r) =>
    [
      r.id, r.name, reply.model?.name, s.batch, s.seq, s.image, s.precision, s.optimizer, r.step, r.low, r.high,
      r.result.step?.forward_ms, r.result.step?.backward_ms, r.result.step?.optimizer_ms, r.result.step?.communication_ms,
      r.samplesPerS, r.tokensPerS, r.run?.steps, r.hours, r.gpuHours, r.price, r.cost, r.energy, r.peak, r.capacity, r.fits,
      r.precisionUsed,
    ]
      .map(csvCell)
      .join(','),
  );
  return `${header.join(',')}\n${lines.join('\n')}\n`;
}

/**
 * One CSV cell. Text that a spreadsheet would read as a formula (it starts with = + - @, a tab or a carriage
 * return: a model or custom accelerator name is the user's own text, and a shared link is a stranger's) gets
 * a leading apostrophe and quotes (OWASP, "CSV Injection"); numbers stay numbers, negative ones included.
 */
export function csvCell(v) {
  if (v == null) return '';
  if (typeof v === 'number') return String(v);
  let t = String(v);
  const formula = FORMULA.test(t);
  if (formula) t = `'${t}`;
  return formula || /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/** Text a spreadsheet would run as a formula: it starts with = + - @, a tab or a carriage return. */
export const FORMULA = /^[=+\-@\t\r]/;

/**
 * A copy of a JSON value for export with every such string given a leading apostrophe (OWASP, "CSV
 * Injection": a JSON export is opened in spreadsheets too); numbers, keys and other text stay as they are.
 */
export function neutralised(value) {
  if (typeof value === 'string') return FORMULA.test(value) ? `'${value}` : value;
  if (Array.isArray(value)) return value.map(neutralised);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, neutralised(v)]));
  return value;
}
