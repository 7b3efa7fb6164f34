// Comparing the page's numbers (the wasm module) with the native CLI's: run `build/prenet`, split the page's
// command line into arguments, and compare two predict replies number by number. Used by the browser tests
// (through tests/browser/helpers.mjs) and by tests/js/page-vs-cli.test.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const cliBinary = resolve(root, process.env.PRENET ?? 'build/prenet');

/** Runs the native CLI; returns parsed JSON (throws with stderr on failure). */
export function cli(args) {
  const r = spawnSync(cliBinary, args, { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`prenet ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Splits the page's command line (single-quoted words allowed) into arguments. */
export function splitCommand(text) {
  const args = [];
  for (const m of text.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) args.push(m[1] != null ? m[1].replace(/'\\''/g, "'") : m[2]);
  return args;
}

/** Asserts two numbers agree to a relative tolerance. */
export function close(actual, expected, what, tolerance = 1e-9) {
  if (expected === null || actual === null || expected === undefined) return assert.equal(actual ?? null, expected ?? null, what);
  const scale = Math.max(Math.abs(expected), 1e-300);
  assert.ok(Math.abs(actual - expected) / scale <= tolerance, `${what}: page ${actual} vs CLI ${expected}`);
}

// Times: the wasm build and the native one run the same code. The learned trees split halfway between training
// values, so a feature that differs in its last bit (glibc's and Emscripten's libm may round log10/pow
// differently) does not change the branch taken: times must agree to rounding.
export const TIME_TOLERANCE = 1e-6;
export const divergences = [];

function closeTime(actual, expected, what) {
  close(actual, expected, what, TIME_TOLERANCE);
  if (Math.abs(actual - expected) > 1e-9 * Math.abs(expected)) divergences.push(`${what}: wasm ${actual} vs native ${expected}`);
}

/** Compares every number of a predict reply from the page with the CLI's. */
export function compareReplies(page, native, label) {
  assert.equal(page.results.length, native.results.length, `${label}: number of results`);
  for (const key of ['params', 'forward_flops', 'backward_flops', 'tokens_per_sample']) close(page.model[key], native.model[key], `${label}: model.${key}`);
  assert.deepEqual(page.settings, native.settings, `${label}: settings`);
  const byId = new Map(native.results.map((r) => [r.hardware, r]));
  for (const r of page.results) {
    const n = byId.get(r.hardware);
    assert.ok(n, `${label}: CLI has no result for ${r.hardware}`);
    // An accelerator that cannot form the cluster: refused by both, in the same words.
    if (r.error || n.error) {
      assert.deepEqual({ name: r.name, message: r.error?.message }, { name: n.name, message: n.error?.message }, `${label} ${r.hardware} refused`);
      continue;
    }
    // A cluster's answer: the same plan, MFU, communication and bubble.
    if (n.plan) {
      for (const key of ['gpus', 'gpus_per_node', 'nodes', 'dp', 'tp', 'pp', 'cp', 'ep', 'vp', 'zero', 'sequence_parallel', 'schedule', 'micro_batch', 'grad_accum', 'checkpointing', 'searched'])
        assert.equal(r.plan?.[key], n.plan[key], `${label} ${r.hardware} plan.${key}`);
      closeTime(r.throughput.mfu, n.throughput.mfu, `${label} ${r.hardware} mfu`);
      closeTime(r.step.bubble_ms, n.step.bubble_ms, `${label} ${r.hardware} bubble`);
      closeTime(r.step.communication_total_ms, n.step.communication_total_ms, `${label} ${r.hardware} communication total`);
      for (const [kind, c] of Object.entries(n.step.communication ?? {})) closeTime(r.step.communication[kind].exposed_ms, c.exposed_ms, `${label} ${r.hardware} ${kind} exposed`);
    }
    for (const key of ['forward_ms', 'backward_ms', 'optimizer_ms', 'communication_ms', 'total_ms'])
      closeTime(r.step[key], n.step[key], `${label} ${r.hardware} step.${key}`);
    for (const [family, ms] of Object.entries(n.step.by_family_ms)) closeTime(r.step.by_family_ms[family], ms, `${label} ${r.hardware} ${family}`);
    closeTime(r.throughput.samples_per_s, n.throughput.samples_per_s, `${label} ${r.hardware} samples/s`);
    for (const [key, bytes] of Object.entries(n.memory)) if (typeof bytes === 'number') close(r.memory[key], bytes, `${label} ${r.hardware} memory.${key}`);
    assert.equal(r.memory.fits, n.memory.fits, `${label} ${r.hardware} fits`);
    if (n.uncertainty) closeTime(r.uncertainty.low_ms, n.uncertainty.low_ms, `${label} ${r.hardware} low`);
    close(r.price_per_hour, n.price_per_hour, `${label} ${r.hardware} price`);
    if (n.run) for (const key of ['steps', 'hours', 'gpu_hours', 'cost_usd', 'energy_kwh']) (key === 'steps' ? close : closeTime)(r.run?.[key], n.run[key], `${label} ${r.hardware} run.${key}`);
  }
}
