// The breakdown of one accelerator: the step's parts, kernel families, layers, the cluster's plan, memory,
// the advice and the training run.
import { planText } from '../cluster.js';
import * as F from '../format.js';
import { fixes, suggestionButtons } from './fixes.js';
import { timelineSvg } from './memory-timeline.js';

const { esc, isNum } = F;

const STEP_PARTS = [
  ['forward_ms', 'Forward', 'var(--c-fwd)'],
  ['backward_ms', 'Backward', 'var(--c-bwd)'],
  ['optimizer_ms', 'Optimizer', 'var(--c-opt)'],
  ['communication_ms', 'Exposed communication', 'var(--c-comm)'],
  ['overhead_ms', 'Framework overhead', '#c9a227'],
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

/** The memory timeline of a `breakdown` reply's `memory` (the chart and its legend), or a hint without one. */
export function timelineHtml(memory) {
  return timelineSvg(memory) || '<p class="hint">No memory timeline in this reply.</p>';
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
  if (isNum(mem.peak_reserved_bytes) && isNum(mem.peak_allocated_bytes)) memNotes.push(`reserved peak ${F.gib(mem.peak_reserved_bytes)}, allocated ${F.gib(mem.peak_allocated_bytes)}`);
  if (mem.peak_phase) memNotes.push(`peak during the ${esc(String(mem.peak_phase).replace(/_/g, '/'))} phase`);
  if (mem.checkpointed_blocks > 0) memNotes.push(`${F.integer(mem.checkpointed_blocks)} checkpointed blocks`);
  // A pipeline: every stage's peak (the API's memory.stages), since a framework logs one rank's; the chart below
  // is the fullest stage's.
  if (Array.isArray(mem.stages) && mem.stages.length > 1) {
    const fullest = isNum(row.plan?.fullest_stage) ? `; the fullest, stage ${row.plan.fullest_stage + 1}, is charted below` : '';
    memNotes.push(`each pipeline stage's allocated peak, first to last: ${mem.stages.map((st) => F.gib(st.peak_allocated_bytes)).join(', ')}${fullest}`);
  }
  return `
    <div>
      <h3>Step on ${esc(row.name)}: ${F.ms(total)}${range}</h3>
      ${stackHtml(stepParts, total, F.ms, `Step time split: ${stepParts.map((p) => `${p.label} ${F.ms(p.value)}`).join(', ')}`)}
      ${notes.length ? `<p class="hint">${notes.join('; ')}.</p>` : ''}
      ${(row.warnings ?? []).map((w) => `<p class="hint breakdown-warning">Note: ${esc(F.pageWords(w))}.</p>`).join('')}
      ${planHtml(row)}
      <h3>By kernel family</h3>
      ${barsHtml(families, total)}
      <h3>By layer</h3>
      <div id="layer-breakdown" aria-live="polite"><p class="hint">Timing each layer…</p></div>
    </div>
    <div>
      <h3>Memory${row.devices > 1 ? ' per device' : ''}: ${F.gib(mem.peak_bytes_per_device)} of ${F.gib(mem.capacity_bytes)} ${row.fits ? '<span class="fits">fits</span>' : '<span class="nofit-label">does not fit</span>'}</h3>
      ${stackHtml(memParts, memTotal || 1, F.gib, `Memory split: ${memParts.map((p) => `${p.label} ${F.gib(p.value)}`).join(', ')}`)}
      ${memNotes.length ? `<p class="hint">${memNotes.join('; ')}.</p>` : ''}
      <h3>Memory over one step</h3>
      <div id="memory-timeline" aria-live="polite">${mem.timeline ? timelineHtml(mem) : '<p class="hint">Following the step…</p>'}</div>
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
  // How the scale-up fabric is wired (docs/parallel.md, "Topologies"): a torus's slices, a full mesh's links.
  const up = p.scale_up ?? {};
  const perLink = isNum(up.gbps_per_link) ? `${F.integer(up.links_per_device)} links of ${F.num(up.gbps_per_link)} GB/s each way` : '';
  const fabric =
    up.topology === 'torus' && up.slice
      ? `${up.slices > 1 ? `${F.integer(up.slices)} torus slices` : 'a torus slice'} of ${esc(up.slice.replaceAll('x', ' × '))}${up.slices > 1 ? ' joined by the network' : ''}${perLink ? `, ${perLink}` : ''}; rings ${
          up.closed_rings?.every(Boolean) ? 'closed' : up.closed_rings?.some(Boolean) ? 'closed along some sides' : 'open'
        }`
      : up.topology === 'full_mesh'
        ? `full mesh${perLink ? `: ${perLink}, one set per peer` : ''}`
        : '';
  return `<h3>Plan on ${F.plural(p.gpus, 'device')}${p.searched ? ' (searched: the fastest that fits)' : ''}</h3>
    <p class="plan-line">${esc(planText(p))}</p>
    <ul class="legend run">
      ${p.gpus < p.gpus_per_node ? li('Devices', `${F.integer(p.gpus)} of a node of ${F.integer(p.gpus_per_node)}`) : li('Nodes', `${F.integer(p.nodes)} × ${F.plural(p.gpus_per_node, 'device')}`)}
      ${p.gpus > 1 ? li('Within a node', link(p.scale_up)) : ''}
      ${fabric ? li('Fabric', fabric) : ''}
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
  return `<div class="advice"><strong>Does not fit${isNum(advice.over_bytes) ? ` by ${F.gib(advice.over_bytes)}` : ''}.</strong> ${
    list.length ? `It would fit with:${suggestionButtons(list, 6)}` : 'No single change the calculator knows of makes it fit.'
  }</div>`;
}
