// The chart of time to train and cost per accelerator: horizontal grouped bars drawn with uPlot (loaded
// only after the first results, so it never delays them). Accelerators appear in the table's order.
import uPlot from '../vendor/uplot.mjs';
import { hours, usd } from './format.js';
import { shortName } from './results.js';

let plot = null;
let observer = null;
let shape = ''; // what the current plot was built for: when only the numbers change, setData() suffices
let labels = [];

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

export function drawChart(el, rows) {
  const shown = rows.filter((r) => Number.isFinite(r.hours) || Number.isFinite(r.step));
  const useHours = shown.some((r) => Number.isFinite(r.hours));
  const hasCost = shown.some((r) => Number.isFinite(r.cost));
  const names = shown.map((r) => `${shortName(r.name)}${r.fits ? '' : ' ✗'}`);
  const xs = shown.map((_, i) => i);
  const time = shown.map((r) => (useHours ? r.hours : r.step) ?? null);
  const cost = shown.map((r) => (Number.isFinite(r.cost) ? r.cost : null));
  const key = JSON.stringify([names, useHours, hasCost]);
  if (plot && key === shape && el.contains(plot.root)) {
    labels = names;
    plot.setData(hasCost ? [xs, time, cost] : [xs, time]);
    return;
  }
  plot?.destroy();
  plot = null;
  shape = key;
  labels = names;
  el.innerHTML = '';
  if (!shown.length) {
    el.innerHTML = '<p class="chart-empty">Nothing to plot.</p>';
    return;
  }
  const text = css('--text');
  const grid = css('--border');
  const cTime = css('--c-fwd');
  const cCost = css('--c-bwd');
  const font = `12px ${getComputedStyle(document.body).fontFamily}`;
  const rowPx = hasCost ? 22 : 17;
  const height = Math.max(70, shown.length * rowPx) + (hasCost ? 160 : 95); // plus the axes, which uPlot counts in
  const width = () => Math.max(280, el.clientWidth);
  const measure = document.createElement('canvas').getContext('2d');
  measure.font = font;
  const labelWidth = Math.min(190, 18 + Math.max(...rows.map((r) => measure.measureText(`${shortName(r.name)} ✗`).width)));
  const bars = uPlot.paths.bars;
  const axisCommon = { stroke: text, font, labelFont: `600 ${font}`, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
  const timeLabel = useHours ? 'Time to train' : 'Step time (ms)';
  const opts = {
    width: width(),
    height,
    padding: [8, 16, 8, 4],
    legend: { show: true, live: false },
    cursor: { show: true, drag: { x: false, y: false }, points: { show: false } },
    scales: {
      x: { time: false, ori: 1, dir: -1, range: [-0.5, shown.length - 0.5] },
      t: { ori: 0, dir: 1, range: (u, min, max) => [0, (max || 1) * 1.05] },
      c: { ori: 0, dir: 1, range: (u, min, max) => [0, (max || 1) * 1.05] },
    },
    axes: [
      {
        scale: 'x',
        side: 3,
        size: labelWidth,
        stroke: text,
        font,
        gap: 6,
        grid: { show: false },
        ticks: { show: false },
        splits: () => xs,
        values: (u, splits) => splits.map((i) => labels[i] ?? ''),
      },
      { ...axisCommon, scale: 't', side: 2, space: 60, label: useHours ? 'time to train (hours)' : 'step time (ms)', size: 44, values: (u, v) => v.map((x) => `${+x.toPrecision(3)}`) },
      ...(hasCost ? [{ ...axisCommon, scale: 'c', side: 0, label: 'cost (USD)', size: 44, space: 60, grid: { show: false }, values: (u, v) => v.map((x) => usd(x)) }] : []),
    ],
    series: [
      { label: 'accelerator', value: (u, i) => (i == null ? '' : labels[i]) },
      {
        label: timeLabel,
        scale: 't',
        stroke: cTime,
        fill: cTime,
        width: 0,
        points: { show: false },
        paths: bars({ size: [hasCost ? 0.42 : 0.7, 24], align: hasCost ? -1 : 0 }),
        value: (u, v) => (v == null ? '—' : useHours ? hours(v) : `${v.toFixed(1)} ms`),
      },
      ...(hasCost
        ? [
            {
              label: 'Cost',
              scale: 'c',
              stroke: cCost,
              fill: cCost,
              width: 0,
              points: { show: false },
              paths: bars({ size: [0.42, 24], align: 1 }),
              value: (u, v) => (v == null ? '—' : usd(v)),
            },
          ]
        : []),
    ],
  };
  plot = new uPlot(opts, hasCost ? [xs, time, cost] : [xs, time], el);
  observer?.disconnect();
  observer = new ResizeObserver(() => plot && plot.width !== width() && plot.setSize({ width: width(), height }));
  observer.observe(el);
}
