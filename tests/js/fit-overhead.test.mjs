// tools/fit_overhead.mjs: how a kernel-only answer moves with the overhead, hand-worked, and what counts as hidden.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withOverhead, overheadOf, hiddenCommunicationMs, objective } from '../../tools/fit_overhead.mjs';

const p = { launch_gap_ms: 0.01, step_fixed_ms: 5, overlap_loss: 0.25 };
// A 100 ms step of 1,000 launches with 40 ms of hidden communication: 10 + 5 + 10 = 25 ms of overhead.
const run = { stepMs: 100, kernels: 1000, hiddenMs: 40 };

test('the overhead is launch gaps, the fixed cost and the lost share of hidden communication', () => {
  assert.equal(overheadOf(p, run), 25);
});

test('a rate falls, a time grows and a forward-backward time adds the overhead', () => {
  assert.equal(withOverhead(p, { ...run, metric: 'rate', base: 1000 }), 1000 * 100 / 125);
  assert.equal(withOverhead(p, { ...run, metric: 'time', base: 2000 }), 2000 * 125 / 100);
  assert.equal(withOverhead(p, { ...run, metric: 'ms', base: 90 }), 115);
});

test('pipeline sends are not overlapped communication', () => {
  const step = { communication: { 'data parallel': { total_ms: 50, exposed_ms: 10 },
    'pipeline parallel': { total_ms: 30, exposed_ms: 5 }, 'tensor parallel': { total_ms: 8, exposed_ms: 8 } } };
  assert.equal(hiddenCommunicationMs(step), 40);
  assert.equal(hiddenCommunicationMs({}), 0);
});

test('each source weighs the same in the objective', () => {
  const none = { launch_gap_ms: 0, step_fixed_ms: 0, overlap_loss: 0 };
  const at = (source, base, published) => ({ source, metric: 'rate', base, published, stepMs: 1, kernels: 0, hiddenMs: 0 });
  // Source a: three rows off by e, source b: one row exact: the mean of medians is ln(2) / 2.
  const runs = [at('a', 2, 1), at('a', 2, 1), at('a', 2, 1), at('b', 1, 1)];
  assert.ok(Math.abs(objective(none, runs) - Math.log(2) / 2) < 1e-12);
});
