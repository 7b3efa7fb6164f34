// Shared set-up of the browser tests: a local static server for dist/ (web/serve.mjs), headless Chromium
// driven by playwright-core with a fresh profile, a record of console errors and of every request that
// does not go to the local server (those are blocked), and the native CLI for comparisons.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../web/serve.mjs';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const dist = resolve(root, process.env.PRENET_DIST ?? 'dist');
export const shots = join(root, 'test-results');
export const cliBinary = resolve(root, process.env.PRENET ?? 'build/prenet');
export const chromiumPath = process.env.PRENET_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Starts the server and a browser profile; returns a harness whose `problems` lists console errors and outside requests. */
export async function start({ serviceWorkers = 'block', viewport = { width: 1440, height: 1000 } } = {}) {
  assert.ok(existsSync(join(dist, 'index.html')), `${dist}/index.html not found; run: npm run build`);
  assert.ok(existsSync(chromiumPath), `Chromium not found at ${chromiumPath}; run: bash scripts/setup.sh --browser`);
  mkdirSync(shots, { recursive: true });
  const requests = [];
  const server = await serve({ root: dist, log: (entry) => requests.push(entry) });
  const profile = mkdtempSync(join(tmpdir(), 'prenet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    serviceWorkers,
    acceptDownloads: true,
  });
  const problems = [];
  const outside = [];
  const origin = new URL(server.url).origin;
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
    outside.push(url);
    problems.push(`request outside the local server: ${url}`);
    return route.abort();
  });
  const watch = (page) => {
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error on ${page.url()}: ${msg.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('requestfailed', (request) => {
      const url = request.url();
      if (url.startsWith(`${origin}/`)) problems.push(`request failed: ${url} (${request.failure()?.errorText})`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && response.url().startsWith(`${origin}/`)) problems.push(`HTTP ${response.status()} for ${response.url()}`);
    });
  };
  context.on('page', watch);
  for (const page of context.pages()) watch(page);
  return {
    url: server.url,
    context,
    requests,
    outside,
    problems,
    async page(path = 'index.html', options = {}) {
      const page = await context.newPage();
      if (options.viewport) await page.setViewportSize(options.viewport);
      await page.goto(server.url + path);
      return page;
    },
    async close() {
      await context.close();
      await server.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until the page shows the results of its current inputs. */
export async function settled(page, timeout = 30_000) {
  await page.waitForFunction(() => window.prenet?.settled?.() && document.querySelectorAll('#results-table tbody tr').length > 0, null, { timeout });
}

export async function shot(page, name, options = {}) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: options.fullPage ?? true, ...options });
}

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
