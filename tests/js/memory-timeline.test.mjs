// web/js/results/memory-timeline.js: the parts stacked per point, the axis ticks, and the chart's capacity line,
// peak marker and text for screen readers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { niceTicks, stackTimeline, timelineSvg } from '../../web/js/results/memory-timeline.js';

const parts = (activations, extra = {}) => ({
  weights: 10e9, gradients: 10e9, optimizer_states: 20e9, activations, buffers: 1e9, logits: 0,
  workspace: 0.1e9, allocator: 0.4e9, outside: 0.5e9, ...extra,
});
const point = (phase, label, p) => {
  const allocated = p.weights + p.gradients + p.optimizer_states + p.activations + p.buffers + p.logits + p.workspace;
  return { phase, label, parts: p, allocated_bytes: allocated, reserved_bytes: allocated + p.allocator, device_bytes: allocated + p.allocator + p.outside };
};
const memory = {
  capacity_bytes: 80e9,
  peak_bytes_per_device: 72e9,
  timeline: {
    peak_point: 2,
    points: [
      point('start', 'before the forward pass', parts(0, { buffers: 0 })),
      point('forward', 'blocks 1-2 <b>', parts(20e9)),
      point('backward', 'backward starts', parts(30e9, { logits: 0 })),
      point('optimizer', 'optimizer step', parts(0, { buffers: 5e9 })),
    ],
  },
};

test('each point stacks its parts up to the device total, the reserve on top', () => {
  const { points, peak } = stackTimeline(memory.timeline);
  assert.equal(peak, 2);
  for (const p of points) assert.equal(p.segments.at(-1).to, p.total);
  const reserve = points[1].segments.find((s) => s.key === 'reserve');
  assert.equal(reserve.to - reserve.from, 1e9);  // workspace 0.1 + allocator 0.4 + outside 0.5
  assert.equal(points[1].segments[0].from, 0);
});

test('ticks are 1, 2 or 5 times a power of ten and reach the largest value', () => {
  assert.deepEqual(niceTicks(80), [0, 20, 40, 60, 80]);
  assert.deepEqual(niceTicks(83), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(niceTicks(0.7), [0, 0.2, 0.4, 0.6, 0.8]);
  assert.deepEqual(niceTicks(0), [0, 1]);
});

test('the chart has a capacity line, a peak marker and the numbers as text', () => {
  const html = timelineSvg(memory);
  assert.match(html, /<svg class="memory-timeline"[^>]*role="img"[^>]*aria-labelledby="mt-title mt-desc"/);
  assert.match(html, /<title id="mt-title">Memory over one step: peak 67\.1 GiB at “Backward: backward starts” of 74\.5 GiB<\/title>/);
  assert.match(html, /class="mt-capacity"><line [^>]*y1="(\d+(\.\d)?)"/);
  assert.match(html, /class="mt-peak-label"[^>]*>peak 67\.1 GiB</);
  assert.match(html, /data-peak-bytes="72000000000"/);
  assert.equal((html.match(/<th scope="row">/g) ?? []).length, 4);  // a table row per point for screen readers
  assert.match(html, /Backward: backward starts \(peak\)/);
  assert.ok(!html.includes('<b>'), 'labels are escaped');
  // The capacity line sits above the peak (80 GB over 72 GB: a smaller y).
  const capY = +html.match(/class="mt-capacity"><line [^>]*y1="([\d.]+)"/)[1];
  const peakY = Math.min(...[...html.matchAll(/<g class="mt-point mt-peak-point">.*?<\/g>/g)][0][0].match(/ y="([\d.]+)"/g).map((s) => +s.slice(4, -1)));
  assert.ok(capY < peakY, `capacity at ${capY}, peak's top at ${peakY}`);
});

test('no timeline, no chart', () => {
  assert.equal(timelineSvg({ capacity_bytes: 1 }), '');
  assert.equal(timelineSvg(undefined), '');
});
