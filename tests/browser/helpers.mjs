// Shared set-up of the browser tests: a local static server for dist/ (web/serve.mjs), headless Chromium
// driven by playwright-core with a fresh profile, a record of console errors and of every request that
// does not go to the local server (those are blocked), and (from ../js/compare.mjs) the native CLI for comparisons.
import assert from 'node:assert/strict';
import { after, afterEach, before } from 'node:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../web/serve.mjs';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const dist = resolve(root, process.env.PRENET_DIST ?? 'dist');
export const shots = join(root, 'test-results');
export const chromiumPath = process.env.PRENET_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Starts the server and a browser profile; returns a harness whose `problems` lists console errors, outside
 * requests and Content-Security-Policy violations (the server sends dist/_headers, the site's own policy, with a
 * report-uri; pages also report `securitypolicyviolation` events). `testHooks` turns on the worker's test hooks.
 */
export async function start({ serviceWorkers = 'block', viewport = { width: 1440, height: 1000 }, testHooks = false } = {}) {
  assert.ok(existsSync(join(dist, 'index.html')), `${dist}/index.html not found; run: npm run build`);
  assert.ok(existsSync(chromiumPath), `Chromium not found at ${chromiumPath}; run: bash scripts/setup.sh --browser`);
  mkdirSync(shots, { recursive: true });
  const requests = [];
  const problems = [];
  const violations = [];
  const violation = (v) => {
    violations.push(v);
    problems.push(`CSP violation: ${v['violated-directive'] ?? v.violatedDirective} blocked ${v['blocked-uri'] ?? v.blockedURI} in ${v['document-uri'] ?? v.documentURI}`);
  };
  const server = await serve({ root: dist, log: (entry) => requests.push(entry), cspReport: violation });
  const profile = mkdtempSync(join(tmpdir(), 'prenet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    serviceWorkers,
    acceptDownloads: true,
  });
  await context.exposeFunction('prenetCspViolation', (v) => violation(v));
  await context.addInitScript((hooks) => {
    if (hooks) window.prenetTestHooks = true;
    document.addEventListener('securitypolicyviolation', (e) =>
      window.prenetCspViolation({ violatedDirective: e.violatedDirective, blockedURI: e.blockedURI, documentURI: e.documentURI, sample: e.sample }),
    );
  }, testHooks);
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
      const why = request.failure()?.errorText;
      // net::ERR_ABORTED is a request the page itself gave up: a reload or the test closing the page while the
      // worker's script was still loading (seen once in CI after the Calibrate test's last reload). A request the
      // server failed is an HTTP status (below) or another network error, and stays a problem.
      if (url.startsWith(`${origin}/`) && why !== 'net::ERR_ABORTED') problems.push(`request failed: ${url} (${why})`);
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
    violations,
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

/**
 * The usual set-up of a browser test file: a harness started before its tests and closed after them, and after
 * each test its pages closed and no problem (console error, outside request, CSP violation) recorded. Returns a
 * function that gives the harness.
 */
export function useHarness(options) {
  let h;
  before(async () => {
    h = await start(options);
  });
  after(async () => {
    await h?.close();
  });
  afterEach(async () => {
    for (const page of h.context.pages()) await page.close();
    assert.deepEqual(h.problems.splice(0), [], 'console errors, outside requests or CSP violations');
  });
  return () => h;
}

/** Waits until the page shows the results of its current inputs. */
export async function settled(page, timeout = 30_000) {
  await page.waitForFunction(() => window.prenet?.settled?.() && document.querySelectorAll('#results-table tbody tr').length > 0, null, { timeout });
}

export async function shot(page, name, options = {}) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: options.fullPage ?? true, ...options });
}

// Page vs CLI comparisons, shared with the Node tests (tests/js/page-vs-cli.test.mjs).
export { TIME_TOLERANCE, cli, cliBinary, close, compareReplies, divergences, splitCommand } from '../js/compare.mjs';
