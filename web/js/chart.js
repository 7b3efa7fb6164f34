// The charts of time to train and of cost per accelerator: one uPlot chart each (loaded only after the first
// results, so they never delay them), horizontal bars in the table's order, on a linear or a logarithmic
// scale (a log scale keeps fast accelerators' bars visible beside slow ones). Each bar's value is written
// at its end, so a narrow screen needs no axis labels to read it.
import uPlot from '../vendor/uplot.mjs';
import { hours, ms, usd } from './format.js';
import { shortName } from './results/rows.js';

const plots = new Map(); // element -> {plot, key, observer}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Draws the time chart in targets.time and the cost chart in targets.cost (a message where nothing to plot). */
export function drawCharts(targets, rows, { log = false } = {}) {
  const shown = rows.filter((r) => Number.isFinite(r.hours) || Number.isFinite(r.step));
  const useHours = shown.some((r) => Number.isFinite(r.hours));
  const names = shown.map((r) => `${shortName(r.name)}${r.fits ? '' : ' ✗'}`);
  drawOne(targets.time, names, shown.map((r) => (useHours ? r.hours : r.step) ?? null), {
    log,
    label: useHours ? 'time to train (hours)' : 'step time (ms)',
    color: css('--c-fwd'),
    format: useHours ? hours : ms,
    axis: (x) => `${+x.toPrecision(3)}`,
  });
  if (targets.cost)
    drawOne(targets.cost, names, shown.map((r) => (Number.isFinite(r.cost) ? r.cost : null)), {
      log,
      label: 'cost (USD)',
      color: css('--c-bwd'),
      format: usd,
      axis: usd,
      empty: 'No prices known: set one per accelerator, or one for all under “More training options”.',
    });
}

function drawOne(el, names, values, { log, label, color, format, axis, empty = 'Nothing to plot.' }) {
  const have = values.some((v) => Number.isFinite(v) && v > 0);
  const old = plots.get(el);
  if (!have) {
    old?.plot.destroy();
    old?.observer.disconnect();
    plots.delete(el);
    el.innerHTML = `<p class="chart-empty">${empty}</p>`;
    return;
  }
  const xs = names.map((_, i) => i);
  // On a log scale a bar starts at a decade below the smallest value (zero has no place on it).
  const positive = values.filter((v) => Number.isFinite(v) && v > 0);
  const floor = 10 ** Math.floor(Math.log10(Math.min(...positive)));
  const data = [xs, values.map((v) => (Number.isFinite(v) && (!log || v > 0) ? v : null))];
  const key = JSON.stringify([names, log]);
  if (old && old.key === key && el.contains(old.plot.root)) {
    old.labels.splice(0, old.labels.length, ...names);
    old.values.splice(0, old.values.length, ...values);
    old.plot.setData(data);
    return;
  }
  old?.plot.destroy();
  old?.observer.disconnect();
  el.innerHTML = '';
  const text = css('--text');
  const grid = css('--border');
  const font = `12px ${getComputedStyle(document.body).fontFamily}`;
  const height = Math.max(60, names.length * 18) + 60; // plus the axis, which uPlot counts in
  const width = () => Math.max(260, el.clientWidth);
  const measure = document.createElement('canvas').getContext('2d');
  measure.font = font;
  const labelWidth = Math.min(170, 14 + Math.max(...names.map((n) => measure.measureText(n).width)));
  const labels = [...names];
  const vals = [...values];
  const max = Math.max(...positive);
  const opts = {
    width: width(),
    height,
    padding: [6, 70, 4, 4], // room on the right for the last bar's value
    legend: { show: false },
    cursor: { show: false },
    scales: {
      x: { time: false, ori: 1, dir: -1, range: [-0.5, names.length - 0.5] },
      v: log ? { ori: 0, dir: 1, distr: 3, log: 10, range: () => [floor, 10 ** Math.ceil(Math.log10(max * 1.2))] } : { ori: 0, dir: 1, range: (u, min, mx) => [0, (mx || 1) * 1.05] },
    },
    axes: [
      { scale: 'x', side: 3, size: labelWidth, stroke: text, font, gap: 6, grid: { show: false }, ticks: { show: false }, splits: () => xs, values: (u, splits) => splits.map((i) => labels[i] ?? '') },
      { scale: 'v', side: 2, space: 70, label, labelFont: `600 ${font}`, font, stroke: text, size: 40, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values: (u, v) => v.map((x) => (x == null ? '' : axis(x))) },
    ],
    series: [
      {},
      { label, scale: 'v', stroke: color, fill: color, width: 0, points: { show: false }, paths: uPlot.paths.bars({ size: [0.7, 22] }), ...(log ? { fillTo: () => floor } : {}) },
    ],
    hooks: {
      // Each bar's value at its end.
      draw: [
        (u) => {
          const c = u.ctx;
          c.save();
          c.font = `${Math.round(11 * devicePixelRatio)}px ${getComputedStyle(document.body).fontFamily}`;
          c.fillStyle = text;
          c.textBaseline = 'middle';
          for (const i of xs) {
            const v = u.data[1][i];
            if (v == null) continue;
            const x = u.valToPos(v, 'v', true) + 4 * devicePixelRatio;
            const y = u.valToPos(i, 'x', true);
            c.fillText(format(vals[i]), x, y);
          }
          c.restore();
        },
      ],
    },
  };
  const plot = new uPlot(opts, data, el);
  const observer = new ResizeObserver(() => plot.width !== width() && plot.setSize({ width: width(), height }));
  observer.observe(el);
  plots.set(el, { plot, key, observer, labels, values: vals });
}
