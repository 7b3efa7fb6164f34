// `memory.timeline` (docs/training-model.md "Memory over one step"): with --breakdown only, its largest point is
// the reported peak to the byte (allocated, reserved and the device's), on one device and on a cluster (the
// fullest pipeline stage, FSDP), and the table draws it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prenet } from './helpers.mjs';

function predict(...args) {
  const r = prenet(['predict', ...args, '--json'], { timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const largest = (points, key) => Math.max(...points.map((p) => p[key]));

function assertTimelineIsThePeak(memory, where) {
  const t = memory.timeline;
  assert.ok(t && Array.isArray(t.points) && t.points.length >= 4, `${where}: memory.timeline.points`);
  assert.ok(t.points.length <= 40, `${where}: ${t.points.length} points (bounded)`);
  assert.equal(largest(t.points, 'allocated_bytes'), memory.peak_allocated_bytes, `${where}: allocated`);
  assert.equal(largest(t.points, 'reserved_bytes'), memory.peak_reserved_bytes, `${where}: reserved`);
  assert.equal(largest(t.points, 'device_bytes'), memory.peak_bytes_per_device, `${where}: device`);
  assert.equal(t.points[t.peak_point].device_bytes, memory.peak_bytes_per_device, `${where}: peak_point`);
  assert.equal(t.points[0].phase, 'start');
  assert.equal(t.points.at(-1).phase, 'optimizer');
  for (const p of t.points) {
    const sum = Object.values(p.parts).reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(sum - p.device_bytes) <= 1e-9 * p.device_bytes, `${where}: ${p.label}: parts add up`);
  }
}

test('one device: the timeline comes with --breakdown, and its largest point is the peak', () => {
  const base = ['--model', 'gpt2', '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16', '--batch', '4'];
  assert.equal(predict(...base).results[0].memory.timeline, undefined, 'no timeline without --breakdown');
  for (const extra of [[], ['--checkpointing'], ['--checkpointing', 'op-selective', '--grad-accum', '2']]) {
    const memory = predict(...base, ...extra, '--breakdown').results[0].memory;
    assertTimelineIsThePeak(memory, extra.join(' ') || 'none');
  }
});

test('a cluster: the fullest stage of a 1F1B pipeline, and FSDP', () => {
  const cluster = ['--model', 'gpt2-large', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16', '--attention', 'flash',
    '--gpus', '4', '--tp', '1', '--cp', '1', '--batch', '1', '--grad-accum', '8', '--checkpointing', 'none', '--breakdown'];
  const pipeline = predict(...cluster, '--dp', '1', '--pp', '4', '--zero', '0').results[0];
  assertTimelineIsThePeak(pipeline.memory, 'pp 4');
  assert.ok(pipeline.memory.timeline.points.some((p) => p.phase === 'warmup'), 'the first stage warms up');
  const fsdp = predict(...cluster, '--dp', '4', '--pp', '1', '--zero', '3').results[0];
  assertTimelineIsThePeak(fsdp.memory, 'zero 3');
});

test('the table prints the timeline once, with the peak marked', () => {
  const r = prenet(['predict', '--model', 'gpt2', '--hardware', 'h100-sxm5-80gb,a100-sxm4-80gb', '--batch', '4', '--breakdown']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal((r.stdout.match(/Memory over one step on/g) ?? []).length, 1, r.stdout);
  assert.match(r.stdout, /backward: backward starts.*#+.*<- peak/);
  assert.match(r.stdout, /optimizer: optimizer step/);
});
