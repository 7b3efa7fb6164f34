// The charts of time to train and of cost per accelerator: one uPlot chart each (loaded only after the first
// results, so they never delay them), horizontal bars in the table's order, on a linear or a logarithmic
// scale. Only the accelerators that can hold the step are drawn when any can (one that cannot, a P4 at years
// beside hours, would set the scale and leave the bars that matter as slivers); the note under the heading says
// how many are left out. The axis counts in the unit of the largest bar's label (days, not 25000000 hours); each
// bar's value is written at its end, so a narrow screen needs no axis labels to read it; names get the room
// they need, up to a share of the width, and are shortened with "…" past it.
import uPlot from '../vendor/uplot.mjs';
import { hours, ms, usd } from './format.js';
import { shortName } from './results/rows.js';

const plots = new Map(); // element -> {plot, key, observer, labels, values}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

// The units of the time axis, each with the largest value (in hours, or ms for step times) format.js writes in it.
const HOUR_UNITS = [
  { unit: 's', per: 3600, below: 1 / 60 },
  { unit: 'min', per: 60, below: 1 },
  { unit: 'h', per: 1, below: 48 },
  { unit: 'days', per: 1 / 24, below: 24 * 365 },
  { unit: 'years', per: 1 / 24 / 365, below: Infinity },
];
const MS_UNITS = [
  { unit: 'ms', per: 1, below: 1000 },
  { unit: 's', per: 1 / 1000, below: Infinity },
];
/** The unit `format` writes the largest value in: the axis counts in it. */
export const axisUnit = (units, max) => units.find((u) => max < u.below);

/** The rows a chart draws: those that can hold the step when any can, else all (each with a time). */
export function chartedRows(rows) {
  const timed = rows.filter((r) => Number.isFinite(r.hours) || Number.isFinite(r.step));
  const fitting = timed.filter((r) => r.fits);
  return { shown: fitting.length ? fitting : timed, left: fitting.length ? timed.length - fitting.length : 0, noneFits: !fitting.length && timed.length > 0 };
}

/** Draws the time chart in targets.time and the cost chart in targets.cost (a message where nothing to plot). */
export function drawCharts(targets, rows, { log = false } = {}) {
  const { shown, left, noneFits } = chartedRows(rows);
  if (targets.note) {
    targets.note.hidden = !(left || noneFits);
    targets.note.textContent = left
      ? `Left out: ${left} accelerator${left > 1 ? 's' : ''} that cannot hold this step (✗ in the table), so the bars compare those that can.`
      : noneFits
        ? 'None of these accelerators can hold this step (✗ in the table): the bars are their times as if it fitted.'
        : '';
  }
  const useHours = shown.some((r) => Number.isFinite(r.hours));
  const names = shown.map((r) => shortName(r.name));
  const times = shown.map((r) => (useHours ? r.hours : r.step) ?? null);
  const unit = axisUnit(useHours ? HOUR_UNITS : MS_UNITS, Math.max(0, ...times.filter(Number.isFinite)));
  drawOne(targets.time, names, times, {
    log,
    label: `${useHours ? 'time to train' : 'step time'} (${unit.unit})`,
    unit: unit.unit,
    per: unit.per,
    color: css('--c-fwd'),
    format: useHours ? hours : ms,
    axis: (x) => `${+x.toPrecision(3)}`,
  });
  if (targets.cost)
    drawOne(targets.cost, names, shown.map((r) => (Number.isFinite(r.cost) ? r.cost : null)), {
      log,
      label: 'cost (USD)',
      unit: 'USD',
      per: 1,
      color: css('--c-bwd'),
      format: usd,
      axis: usd,
      missing: 'no price',
      empty: 'No prices known: set one per accelerator, or one for all under “More training options”.',
    });
}

// A name shortened with "…" to at most `room` pixels as `measure` draws it.
function fitName(name, room, measure) {
  if (measure.measureText(name).width <= room) return name;
  let n = name.length;
  while (n > 1 && measure.measureText(`${name.slice(0, n)}…`).width > room) n--;
  return `${name.slice(0, n).trimEnd()}…`;
}

function drawOne(el, fullNames, values, { log, label, unit, per, color, format, axis, missing = '', empty = 'Nothing to plot.' }) {
  const have = values.some((v) => Number.isFinite(v) && v > 0);
  const old = plots.get(el);
  if (!have) {
    old?.plot.destroy();
    old?.observer.disconnect();
    plots.delete(el);
    el.innerHTML = `<p class="chart-empty">${empty}</p>`;
    return;
  }
  const xs = fullNames.map((_, i) => i);
  // Plotted in the axis unit; each bar's label is its value as the table writes it.
  const scaled = values.map((v) => (Number.isFinite(v) ? v * per : null));
  // On a log scale a bar starts at a decade below the smallest value (zero has no place on it).
  const positive = scaled.filter((v) => Number.isFinite(v) && v > 0);
  const floor = 10 ** Math.floor(Math.log10(Math.min(...positive)));
  const max = Math.max(...positive);
  const data = [xs, scaled.map((v) => (Number.isFinite(v) && (!log || v > 0) ? v : null))];
  const width = () => Math.max(260, el.clientWidth);
  const font = `12px ${getComputedStyle(document.body).fontFamily}`;
  const valueFont = `11px ${getComputedStyle(document.body).fontFamily}`;
  const measure = document.createElement('canvas').getContext('2d');
  measure.font = font;
  // Names get what they need up to 40% of the width (a phone keeps room for the bars).
  const nameRoom = Math.min(Math.max(...fullNames.map((n) => measure.measureText(n).width)), Math.max(90, 0.4 * width() - 14));
  const names = fullNames.map((n) => fitName(n, nameRoom, measure));
  const labelWidth = Math.ceil(nameRoom) + 14;
  measure.font = valueFont;
  const valueRoom = Math.ceil(Math.max(...values.map((v) => measure.measureText(Number.isFinite(v) ? format(v) : missing).width))) + 10;
  const key = JSON.stringify([names, log, unit, labelWidth, valueRoom]);
  if (old && old.key === key && el.contains(old.plot.root)) {
    old.values.splice(0, old.values.length, ...values);
    old.plot.setData(data);
    return;
  }
  old?.plot.destroy();
  old?.observer.disconnect();
  el.innerHTML = '';
  const text = css('--text');
  const grid = css('--border');
  const height = Math.max(60, names.length * 18) + 60; // plus the axis, which uPlot counts in
  const vals = [...values];
  const opts = {
    width: width(),
    height,
    padding: [6, valueRoom, 4, 4], // room on the right for the longest bar's value
    legend: { show: false },
    cursor: { show: false },
    scales: {
      x: { time: false, ori: 1, dir: -1, range: [-0.5, names.length - 0.5] },
      v: log ? { ori: 0, dir: 1, distr: 3, log: 10, range: () => [floor, 10 ** Math.ceil(Math.log10(max * 1.2))] } : { ori: 0, dir: 1, range: (u, min, mx) => [0, (mx || 1) * 1.05] },
    },
    axes: [
      { scale: 'x', side: 3, size: labelWidth, stroke: text, font, gap: 6, grid: { show: false }, ticks: { show: false }, splits: () => xs, values: (u, splits) => splits.map((i) => names[i] ?? '') },
      { scale: 'v', side: 2, space: 50, label, labelFont: `600 ${font}`, font, stroke: text, size: 40, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values: (u, v) => v.map((x) => (x == null ? '' : axis(x))) },
    ],
    series: [
      {},
      { label, scale: 'v', stroke: color, fill: color, width: 0, points: { show: false }, paths: uPlot.paths.bars({ size: [0.7, 22] }), ...(log ? { fillTo: () => floor } : {}) },
    ],
    hooks: {
      // Each bar's value at its end, left-aligned (uPlot leaves the context centred from its axes).
      draw: [
        (u) => {
          const c = u.ctx;
          c.save();
          c.font = `${Math.round(11 * devicePixelRatio)}px ${getComputedStyle(document.body).fontFamily}`;
          c.fillStyle = text;
          c.textAlign = 'left';
          c.textBaseline = 'middle';
          let leftmost = Infinity;
          const muted = css('--muted');
          for (const i of xs) {
            const v = u.data[1][i];
            // A row without a value (no price known) says so where its bar would be.
            if (v == null) {
              c.fillStyle = muted;
              if (missing && !Number.isFinite(vals[i])) c.fillText(missing, u.bbox.left + 4 * devicePixelRatio, u.valToPos(i, 'x', true));
              c.fillStyle = text;
              continue;
            }
            const x = u.valToPos(v, 'v', true) + 4 * devicePixelRatio;
            leftmost = Math.min(leftmost, x / devicePixelRatio);
            c.fillText(format(vals[i]), x, u.valToPos(i, 'x', true));
          }
          c.restore();
          // For the tests: where the values start, the plot's left edge, the scale, in CSS pixels and axis units.
          Object.assign(el.dataset, { valuesFrom: leftmost.toFixed(1), plotLeft: (u.bbox.left / devicePixelRatio).toFixed(1), scaleMin: u.scales.v.min, scaleMax: u.scales.v.max });
        },
      ],
    },
  };
  Object.assign(el.dataset, { unit, bars: names.length, nameRoom: nameRoom.toFixed(1), names: JSON.stringify(names) });
  const plot = new uPlot(opts, data, el);
  const observer = new ResizeObserver(() => plot.width !== width() && plot.setSize({ width: width(), height }));
  observer.observe(el);
  plots.set(el, { plot, key, observer, values: vals });
}
