// Memory over one step (`memory.timeline` of a `breakdown` reply) as an SVG chart: a column per point in time
// order with its parts stacked, the peak marked, the device's capacity as a horizontal line, GiB on the axis
// (GiB, as the rest of the page: format.js). Pure functions (no DOM): the page inserts the string, the tests read it.
import * as F from '../format.js';

const { esc } = F;

// The stacked parts, bottom to top, with the breakdown's colours (app.css .mt-*): the reply's nine parts, the
// workspaces, the allocator's slack and what sits beside the allocator shown together as the framework reserve.
export const TIMELINE_PARTS = [
  ['weights', 'Weights', ['weights']],
  ['gradients', 'Gradients', ['gradients']],
  ['states', 'Optimizer states', ['optimizer_states']],
  ['activations', 'Activations', ['activations']],
  ['logits', 'Logits and loss', ['logits']],
  ['buffers', 'Temporary buffers', ['buffers']],
  ['reserve', 'Framework reserve', ['workspace', 'allocator', 'outside']],
];

const PHASES = { start: 'Start', warmup: 'Warm-up', forward: 'Forward', backward: 'Backward', cooldown: 'Cool-down', optimizer: 'Optimizer' };

/** Each point's parts stacked: [{phase, label, total, segments: [{key, label, from, to}]}] (bytes), and the peak's index. */
export function stackTimeline(timeline) {
  const points = (timeline?.points ?? []).map((p) => {
    let at = 0;
    const segments = TIMELINE_PARTS.map(([key, label, parts]) => {
      const value = parts.reduce((s, k) => s + Math.max(0, p.parts?.[k] ?? 0), 0);
      const seg = { key, label, from: at, to: at + value };
      at += value;
      return seg;
    });
    return { phase: p.phase, label: p.label, total: p.device_bytes ?? at, allocated: p.allocated_bytes, reserved: p.reserved_bytes, segments };
  });
  return { points, peak: Math.min(points.length - 1, Math.max(0, timeline?.peak_point ?? 0)) };
}

/** Axis ticks from 0 to at least `max` (GiB): 1, 2 or 5 times a power of ten apart, about `count` of them. */
export function niceTicks(max, count = 5) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v < max + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  if (ticks[ticks.length - 1] < max) ticks.push(+(ticks[ticks.length - 1] + step).toPrecision(12));
  return ticks;
}

const phaseLabel = (p) => `${PHASES[p.phase] ?? p.phase}: ${p.label}`;

/**
 * The chart for a reply's `memory` ({timeline, capacity_bytes, peak_bytes_per_device, ...}); '' without a timeline.
 * `width` and `height` set the viewBox (the SVG scales to its box).
 */
export function timelineSvg(memory, { width = 480, height = 220, id = 'mt' } = {}) {
  const { points, peak } = stackTimeline(memory?.timeline);
  if (!points.length) return '';
  const capacity = memory.capacity_bytes ?? 0;
  const peakBytes = points[peak].total;
  const ticks = niceTicks(Math.max(peakBytes, capacity) / F.BYTES_PER_GIB);
  const top = ticks[ticks.length - 1] * F.BYTES_PER_GIB;
  const m = { left: 36, right: 6, top: 24, bottom: 24 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const y = (bytes) => +(m.top + h - (bytes / top) * h).toFixed(1);
  const slot = w / points.length;
  const barW = +Math.max(1, slot * 0.8).toFixed(1);
  const x = (i) => +(m.left + i * slot + (slot - barW) / 2).toFixed(1);
  const grid = ticks
    .map((t) => `<g class="mt-tick"><line x1="${m.left}" x2="${width - m.right}" y1="${y(t * F.BYTES_PER_GIB)}" y2="${y(t * F.BYTES_PER_GIB)}"/><text x="${m.left - 4}" y="${y(t * F.BYTES_PER_GIB) + 4}" text-anchor="end">${+t.toPrecision(3)}</text></g>`)
    .join('');
  const bars = points
    .map((p, i) => {
      const segs = p.segments
        .filter((s) => s.to > s.from)
        .map((s) => `<rect class="mt-${s.key}" x="${x(i)}" y="${y(s.to)}" width="${barW}" height="${Math.max(0, +(y(s.from) - y(s.to)).toFixed(1))}"/>`)
        .join('');
      return `<g class="mt-point${i === peak ? ' mt-peak-point' : ''}"><title>${esc(phaseLabel(p))}: ${esc(F.gib(p.total))}</title>${segs}</g>`;
    })
    .join('');
  // Phase names under the first column of each phase of several points; the last phase's (the optimizer's, one
  // point) ends at the right edge.
  const phaseMarks = points
    .map((p, i) => {
      if (i > 0 && points[i - 1].phase === p.phase) return '';
      const last = i === points.length - 1;
      if (!last && points[i + 1]?.phase !== p.phase) return '';
      const at = last ? `x="${width - m.right}" text-anchor="end"` : `x="${x(i)}"`;
      return `<text class="mt-phase" ${at} y="${height - m.bottom + 14}">${esc(PHASES[p.phase] ?? p.phase)}</text>`;
    })
    .join('');
  const capacityLine =
    capacity > 0
      ? `<g class="mt-capacity"><line x1="${m.left}" x2="${width - m.right}" y1="${y(capacity)}" y2="${y(capacity)}"/><text x="${width - m.right}" y="${y(capacity) - 4}" text-anchor="end">capacity ${esc(F.gib(capacity))}</text></g>`
      : '';
  const px = +(x(peak) + barW / 2).toFixed(1);
  const peakText = `peak ${F.gib(peakBytes)}`;
  const anchor = px > width * 0.7 ? 'end' : px < width * 0.3 ? 'start' : 'middle';
  const py = y(peakBytes);
  const r = (v) => +v.toFixed(1);
  const peakMark = `<g class="mt-peak"><path d="M${r(px - 5)},${r(py - 10)} L${r(px + 5)},${r(py - 10)} L${px},${r(py - 3)} Z"/><text class="mt-peak-label" x="${px}" y="${r(py - 13)}" text-anchor="${anchor}">${esc(peakText)}</text></g>`;
  const title = `Memory over one step: ${peakText} at “${phaseLabel(points[peak])}”${capacity > 0 ? ` of ${F.gib(capacity)}` : ''}`;
  const desc = `${points.length} points from the start of the forward pass to the optimizer step, each a column of its parts stacked (${TIMELINE_PARTS.map(([, l]) => l.toLowerCase()).join(', ')}); the table below gives the numbers.`;
  const svg = `<svg class="memory-timeline" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc" data-peak-bytes="${peakBytes}" data-capacity-bytes="${capacity}">
    <title id="${id}-title">${esc(title)}</title><desc id="${id}-desc">${esc(desc)}</desc>
    ${grid}<text class="mt-axis" x="4" y="${m.top - 8}">GiB</text>${bars}${phaseMarks}${capacityLine}${peakMark}</svg>`;
  const legend = `<ul class="legend mt-legend">${TIMELINE_PARTS.map(([key, label]) => `<li><svg class="sw" viewBox="0 0 10 10" aria-hidden="true"><rect class="mt-${key}" width="10" height="10"/></svg><span>${esc(label)}</span></li>`).join('')}</ul>`;
  const rows = points
    .map((p, i) => `<tr${i === peak ? ' class="mt-peak-row"' : ''}><th scope="row">${esc(phaseLabel(p))}${i === peak ? ' (peak)' : ''}</th><td>${F.gib(p.allocated)}</td><td>${F.gib(p.reserved)}</td><td>${F.gib(p.total)}</td></tr>`)
    .join('');
  const table = `<table class="visually-hidden"><caption>Memory at each point of the step</caption><thead><tr><th scope="col">Point</th><th scope="col">Allocated</th><th scope="col">Reserved</th><th scope="col">Device</th></tr></thead><tbody>${rows}</tbody></table>`;
  return `${svg}${legend}${table}`;
}
