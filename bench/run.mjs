// Measures the web calculator and writes docs/performance.md:
//   1. the compressed size (gzip -9, brotli q11) of everything the page loads on a cold visit;
//   2. time to first result on a cold load (fresh Chromium profile, local server, no throttling);
//   3. time to recompute every catalogue accelerator for llama2-70b in the page's worker, and the page's
//      whole path (a typed value to the updated table) for it and for a 64-GPU question (issue #26);
//   4. wasm vs native for the same prediction: in-process, warm and cold (native: bench/native-bench.cpp
//      linked against build/libprenet_core.a; wasm: build-wasm/prenet_node.mjs under Node, and the worker).
// Needs: npm run build (build/, build-wasm/, dist/), Chromium (scripts/setup.sh --browser), g++.
//   node bench/run.mjs [--runs 5] [--out docs/performance.md]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { serve } from '../web/serve.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('runs', 5));
// The brief's page budget: the first result within 0.8 s of a cold load (and the page under 1 MB gzip).
const FIRST_RESULT_TARGET_MS = 800;
// Issue #26's targets, from the input event to the updated table, over every accelerator.
const EDIT_TARGET_MS = 100; // a single-device question
const CLUSTER_FIRST_TARGET_MS = 1000; // a 64-GPU question, asked anew
const CLUSTER_EDIT_TARGET_MS = 500; // ... and a value typed into it
// The 64-GPU question of issue #26: llama3-8b on 64 devices, sequences of 8,192 tokens, 1M tokens a step (a
// plan search per accelerator); its edits type micro-batches it has not been asked with before, so no
// answer is reused.
const CLUSTER_HASH = 'model=llama3-8b&gpus=64&seq=8192&gtokens=1048576';
const CLUSTER_BATCHES = [1, 2, 4];
// A link to a question the build's precomputed replies do not answer (the default with another batch): its first
// result is computed by the worker, start-up included.
const LINK_HASH = 'model=gpt2&batch=16';
const OUT = resolve(root, arg('out', 'docs/performance.md'));
const dist = join(root, 'dist');
const chromiumPath = process.env.PRENET_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const REQUEST = { command: 'predict', model: 'llama2-70b', batch: 8, precision: 'bf16', optimizer: 'adamw', hardware: 'all', tokens: 1e9 };
// The plan search's target (docs/parallel.md): a 70B model on 1,024 devices, every layout left open.
const PLAN_REQUEST = { command: 'predict', model: 'llama2-70b', gpus: 1024, hardware: 'a100-sxm4-80gb', precision: 'bf16', attention: 'flash', seq: 4096, global_batch: 1024 };

for (const [path, hint] of [
  [join(dist, 'index.html'), 'npm run build'],
  [join(root, 'build/libprenet_core.a'), 'bash scripts/build.sh native'],
  [join(root, 'build-wasm/prenet_node.mjs'), 'bash scripts/build.sh wasm'],
  [chromiumPath, 'bash scripts/setup.sh --browser'],
])
  if (!existsSync(path)) {
    console.error(`bench: ${path} not found; run: ${hint}`);
    process.exit(1);
  }

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const log = (...a) => console.log('bench:', ...a);

async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'prenet-bench-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 1000 },
    serviceWorkers: 'block',
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// ---- 1 + 2: cold loads --------------------------------------------------------------------------------------

const requested = new Set();
const server = await serve({ root: dist, log: (e) => e.status === 200 && requested.add(e.path) });
// The default page (its first replies precomputed by the build: web/startup-replies.mjs), then a link to a
// question the build did not answer, whose first result the worker computes.
const loads = await coldLoads('index.html');
const linkLoads = await coldLoads(`index.html#${LINK_HASH}`);

async function coldLoads(path) {
  const loads = [];
  for (let i = 0; i < RUNS; i++) loads.push(await coldLoad(path, i));
  return loads;
}

async function coldLoad(path, i) {
  const { context, close } = await launch();
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${server.url}${path}`);
  await page.waitForFunction(() => performance.getEntriesByName('prenet:first-result').length > 0, null, { timeout: 60_000 });
  const t = await page.evaluate(async () => {
    const marks = await window.prenet.client.remote.marks();
    const nav = performance.getEntriesByType('navigation')[0];
    const rel = (epoch) => epoch - performance.timeOrigin;
    return {
      first: performance.getEntriesByName('prenet:first-result')[0].startTime,
      dcl: nav.domContentLoadedEventEnd,
      workerStart: rel(marks.start),
      wasmReceived: rel(marks.fetched),
      moduleReady: rel(marks.ready),
      precomputed: window.prenet.client.precomputed().length,
    };
  });
  await page.waitForSelector('#chart canvas', { timeout: 30_000 }).catch(() => {});
  await page.waitForTimeout(500);
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  log(`cold load ${i + 1} of ${path}: first result ${round(t.first)} ms (module ready ${round(t.moduleReady)} ms, ${t.precomputed} replies precomputed)`);
  await close();
  return t;
}

function sizes(files) {
  return files.map((f) => {
    const data = readFileSync(join(dist, f));
    return {
      file: f,
      raw: data.length,
      gzip: gzipSync(data, { level: 9 }).length,
      brotli: brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }).length,
    };
  });
}
const loaded = [...requested].map((p) => p.replace(/^\//, '')).filter((p) => p && existsSync(join(dist, p))).sort();
const pageSizes = sizes(loaded);
const total = (list, key) => list.reduce((s, x) => s + x[key], 0);

// ---- 3: full-table recompute in the worker ------------------------------------------------------------------

const { context, close } = await launch();
const page = context.pages()[0] ?? (await context.newPage());
await page.goto(`${server.url}index.html`);
await page.waitForFunction(() => performance.getEntriesByName('prenet:first-result').length > 0, null, { timeout: 60_000 });
const worker = await page.evaluate(async (request) => {
  const out = { module: [], roundTrip: [], results: 0 };
  for (let i = 0; i < 45; i++) {
    const t = performance.now();
    const { doc, ms } = await window.prenet.client.call(request);
    const rt = performance.now() - t;
    if (doc.error) throw new Error(doc.error.message);
    out.results = doc.results.length;
    if (i >= 5) {
      out.module.push(ms);
      out.roundTrip.push(rt);
    }
  }
  return out;
}, REQUEST);
const planWorker = await page.evaluate(async (request) => {
  const ms = [];
  let layouts = 0;
  for (let i = 0; i < 4; i++) {
    const t = performance.now();
    const { doc } = await window.prenet.client.call(request);
    if (doc.error) throw new Error(doc.error.message);
    layouts = doc.results[0].plan.layouts_searched;
    ms.push(performance.now() - t);
  }
  return { ms, layouts };
}, PLAN_REQUEST);
// Through the page's own path: a new state in the hash, timed until the table shows it.
const uiRecompute = [];
for (let i = 0; i < 6; i++) {
  const batch = 8 + (i % 2);
  const t = await page.evaluate(async (batch) => {
    const start = performance.now();
    location.hash = `model=llama2-70b&batch=${batch}`;
    await new Promise((resolve) => {
      const check = () => (window.prenet.settled() && window.prenet.last().predict?.model?.name === 'llama2-70b' && window.prenet.last().predict.settings.batch === batch ? resolve() : requestAnimationFrame(check));
      check();
    });
    return performance.now() - start;
  }, batch);
  if (i > 0) uiRecompute.push(t);
}
// An edit, through the page's whole path: a value typed into the batch field (its input event, the debounce,
// the request, every accelerator's row, the verdict and breakdown rendered), timed until the table shows it.
// Milliseconds from typing `batch` into the batch field to a table of more than `rows` rows that shows it.
const typeBatch = (batch, rows) =>
  page.evaluate(
    async ({ batch, rows }) => {
      const el = document.getElementById('batch');
      const start = performance.now();
      el.value = String(batch);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((resolve) => {
        const check = () => (window.prenet.settled() && window.prenet.last().predict.settings.batch === batch && document.querySelectorAll('#results-table tbody tr').length > rows ? resolve() : requestAnimationFrame(check));
        check();
      });
      return performance.now() - start;
    },
    { batch, rows },
  );
const editRecompute = [];
await page.evaluate(() => (location.hash = 'model=llama2-70b'));
await page.waitForFunction(() => window.prenet.settled() && window.prenet.last().predict?.model?.name === 'llama2-70b');
for (let i = 0; i < 8; i++) {
  const t = await typeBatch(2 + (i % 2), 40);
  if (i > 1) editRecompute.push(t);
}
// The 64-GPU question: asked anew through the URL (as a link or a preset would), then edited in the batch
// field; each round with its own training budget, so that no accelerator's earlier answer is reused.
const clusterFirst = [];
const clusterEdit = [];
for (let round = 0; round < 2; round++) {
  await page.evaluate(() => (location.hash = 'model=llama2-70b'));
  await page.waitForFunction(() => window.prenet.settled() && window.prenet.last().predict?.settings?.gpus === 1);
  clusterFirst.push(
    await page.evaluate(async (hash) => {
      const start = performance.now();
      location.hash = hash;
      await new Promise((resolve) => {
        const check = () => (window.prenet.settled() && window.prenet.last().predict?.settings?.gpus === 64 && document.querySelectorAll('#results-table tbody tr').length > 30 ? resolve() : requestAnimationFrame(check));
        check();
      });
      return performance.now() - start;
    }, `${CLUSTER_HASH}&tokens=${(round + 1) * 1e9}`),
  );
  for (const batch of CLUSTER_BATCHES) clusterEdit.push(await typeBatch(batch, 30));
}
const clusterWorkers = await page.evaluate(() => window.prenet.client.poolSize);
log(`64-GPU question: first answer ${clusterFirst.map((t) => round(t, 0)).join(', ')} ms; edits ${clusterEdit.map((t) => round(t, 0)).join(', ')} ms`);
const userAgent = await page.evaluate(() => navigator.userAgent);
await close();
await server.close();
log(`worker recompute (llama2-70b, ${worker.results} accelerators): median ${round(median(worker.module))} ms in the module, ${round(median(worker.roundTrip))} ms round trip`);

// ---- 4: wasm vs native ----------------------------------------------------------------------------------

const nativeBin = join(tmpdir(), 'prenet-native-bench');
execFileSync('g++', ['-std=c++17', '-O3', '-DNDEBUG', '-I', join(root, 'src'), '-isystem', '/usr/include/eigen3', join(root, 'bench/native-bench.cpp'), join(root, 'build/libprenet_core.a'), '-o', nativeBin], { stdio: 'inherit' });
const nativeRuns = [];
for (let i = 0; i < 3; i++) nativeRuns.push(JSON.parse(execFileSync(nativeBin, [JSON.stringify(REQUEST), '40'], { encoding: 'utf8' })));
const nativeWarm = median(nativeRuns.flatMap((r) => r.warm_ms));
const planNative = JSON.parse(execFileSync(nativeBin, [JSON.stringify(PLAN_REQUEST), '4'], { encoding: 'utf8' }));
const nativeCold = median(nativeRuns.map((r) => r.cold_ms));
const cliTimes = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  const r = spawnSync(join(root, 'build/prenet'), ['predict', '--model', 'llama2-70b', '--hardware', 'all', '--batch', '8', '--precision', 'bf16', '--tokens', '1000000000', '--json'], { encoding: 'utf8' });
  if (r.status !== 0) {
    // Builds whose CLI has no --tokens yet.
    spawnSync(join(root, 'build/prenet'), ['predict', '--model', 'llama2-70b', '--hardware', 'all', '--batch', '8', '--precision', 'bf16', '--json']);
  }
  cliTimes.push(performance.now() - t);
}
// wasm under Node: a child process per run, so every cold measurement is really cold.
const wasmNodeScript = `
  import createPrenet from ${JSON.stringify(pathToFileURL(join(root, 'build-wasm/prenet_node.mjs')).href)};
  const request = ${JSON.stringify(JSON.stringify(REQUEST))};
  let t = performance.now();
  const prenet = await createPrenet();
  const init = performance.now() - t;
  t = performance.now();
  prenet.handleRequest(request);
  const cold = performance.now() - t;
  const warm = [];
  for (let i = 0; i < 150; i++) { t = performance.now(); prenet.handleRequest(request); warm.push(performance.now() - t); }
  console.log(JSON.stringify({ init, cold, warm }));`;
const wasmRuns = [];
for (let i = 0; i < 3; i++) wasmRuns.push(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', wasmNodeScript], { encoding: 'utf8' })));
const wasmWarm = median(wasmRuns.flatMap((r) => r.warm.slice(50))); // after V8's tier-up to optimized code
const wasmCold = median(wasmRuns.map((r) => r.cold));
const wasmInit = median(wasmRuns.map((r) => r.init));
rmSync(nativeBin, { force: true });
log(`native ${round(nativeWarm, 2)} ms warm; wasm ${round(wasmWarm, 2)} ms (Node), ${round(median(worker.module), 2)} ms (Chromium worker)`);

// ---- report ---------------------------------------------------------------------------------------------

const cpu = cpus()[0]?.model?.trim() ?? 'unknown CPU';
const chromiumVersion = userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? 'unknown';
const firstMedian = median(loads.map((l) => l.first));
const linkFirstMedian = median(linkLoads.map((l) => l.first));
const kb = (b) => `${round(b / 1024, 1)} KiB`;
const pageBrotli = total(pageSizes, 'brotli');
const pageGzip = total(pageSizes, 'gzip');
const workerMedian = median(worker.module);
const ratio = wasmWarm / nativeWarm;
const ratioWorker = workerMedian / nativeWarm;
const pass = (ok) => (ok ? '✅ met' : '❌ missed');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const build = JSON.parse(readFileSync(join(dist, 'version.json'), 'utf8')).build;
let load = '';
try {
  load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', ');
} catch {
  /* not Linux */
}

const md = `# Web calculator performance

Measured by \`node bench/run.mjs\` (\`npm run bench\`) on ${new Date().toISOString().slice(0, 10)}, build ${build}.
Machine: ${cpus().length} cores (${cpu}), ${round(totalmem() / 2 ** 30, 0)} GiB memory${load ? `, load average ${load} when the run ended` : ''};
Chromium ${chromiumVersion} headless, Node ${process.version}. Numbers move with the machine's load: the
page targets are for a plain 2-core machine, and these runs share theirs with other work.

| what | target | measured | |
|---|---|---|---|
| page size, compressed (brotli / gzip) | < 1 MB | ${kb(pageBrotli)} / ${kb(pageGzip)} | ${pass(pageGzip < 1e6)} |
| time to first result, cold load, local server (median of ${RUNS}) | ≤ ${FIRST_RESULT_TARGET_MS / 1000} s | ${round(firstMedian, 0)} ms | ${pass(firstMedian <= FIRST_RESULT_TARGET_MS)} |
| the same for a link to another question (\`#${LINK_HASH}\`: the worker computes it, start-up included; median of ${RUNS}) | ≤ ${FIRST_RESULT_TARGET_MS / 1000} s | ${round(linkFirstMedian, 0)} ms | ${pass(linkFirstMedian <= FIRST_RESULT_TARGET_MS)} |
| recompute every accelerator after an edit, through the page's whole path (typed value to table, median) | ≤ ${EDIT_TARGET_MS} ms | ${round(median(editRecompute), 0)} ms | ${pass(median(editRecompute) <= EDIT_TARGET_MS)} |
| 64-GPU question (llama3-8b, 1M tokens a step) on every accelerator, asked anew: link to table (median of ${clusterFirst.length}) | ≤ ${CLUSTER_FIRST_TARGET_MS / 1000} s | ${round(median(clusterFirst), 0)} ms | ${pass(median(clusterFirst) <= CLUSTER_FIRST_TARGET_MS)} |
| the same question after a typed micro-batch, typed value to table (median of ${clusterEdit.length}) | ≤ ${CLUSTER_EDIT_TARGET_MS} ms | ${round(median(clusterEdit), 0)} ms | ${pass(median(clusterEdit) <= CLUSTER_EDIT_TARGET_MS)} |
| recompute every accelerator (${worker.results}) for llama2-70b in the worker (median) | < 50 ms | ${round(workerMedian, 1)} ms in the module, ${round(median(worker.roundTrip), 1)} ms round trip | ${pass(median(worker.roundTrip) < 50)} |
| plan search: llama2-70b on 1,024 A100s, every layout open (${planWorker.layouts} layouts) | < 1 s native, < 2 s in the worker | ${round(planNative.cold_ms, 0)} ms native (first call; ${round(median(planNative.warm_ms), 0)} ms after), ${round(planWorker.ms[0], 0)} ms in the worker (first; ${round(median(planWorker.ms.slice(1)), 0)} ms after) | ${pass(planNative.cold_ms < 1000 && planWorker.ms[0] < 2000)} |
| wasm vs native, same prediction, warm (median) | within 2x | ${round(ratioWorker, 2)}x in the Chromium worker (${round(workerMedian, 2)} vs ${round(nativeWarm, 2)} ms); ${round(ratio, 2)}x under Node 20 | ${pass(ratioWorker <= 2)} |

## 1. What the page loads

Everything a cold visit to \`index.html\` fetches until the first result and the chart are on screen (the
service worker then caches the rest of the site for offline use: another ${kb(total(sizes(listAll()), 'brotli') - pageBrotli)} brotli).
Static hosts compress on the fly (gzip nearly everywhere, brotli on most CDNs); \`.wasm\` is the bulk.

| file | raw | gzip -9 | brotli 11 |
|---|---:|---:|---:|
${pageSizes.map((s) => `| \`${s.file}\` | ${kb(s.raw)} | ${kb(s.gzip)} | ${kb(s.brotli)} |`).join('\n')}
| **total** | **${kb(total(pageSizes, 'raw'))}** | **${kb(pageGzip)}** | **${kb(pageBrotli)}** |

## 2. Time to first result

A fresh browser profile per run (no HTTP cache, no compiled-code cache), \`dist/\` served by \`web/serve.mjs\`
on the same machine, no network throttling. "First result" is the \`prenet:first-result\` performance mark:
the default table (GPT-2, batch 8, bf16, every accelerator) rendered. Milliseconds from navigation start:

| load | run | DOM ready | worker started | wasm compiled, handed over | module ready | replies from startup.json | first result |
|---|---|---:|---:|---:|---:|---:|---:|
${[...loads.map((l, i) => ['default', i, l]), ...linkLoads.map((l, i) => [`\`#${LINK_HASH}\``, i, l])].map(([what, i, l]) => `| ${what} | ${i + 1} | ${round(l.dcl, 0)} | ${round(l.workerStart, 0)} | ${round(l.wasmReceived, 0)} | ${round(l.moduleReady, 0)} | ${l.precomputed} | **${round(l.first, 0)}** |`).join('\n')}

The page starts the wasm download and compilation from \`js/boot.js\`, a classic script in \`<head>\` (shared with
the widget), before its own modules load, and hands the compiled module to the worker; the page asks for the
option table (\`options\`, which makes the form and the request) before its first \`predict\`. The module's first
requests are slow however little they compute: V8 compiles its functions as they first run and then again,
optimised, while they run, so under Node the first \`predict\` of llama2-70b, start-up included, takes ${round(wasmCold, 0)} ms
against ${round(nativeCold, 0)} ms natively (its one-time start-up itself is small: the hardware catalogue read by
\`core/embedded_json.hpp\`'s one-pass reader, the learned kernel models compiled in as arrays rather than as the
${round(statSync(join(root, 'models/kernels.json')).size / 1e6, 1)} MB of JSON of \`models/kernels.json\`, \`predict/embedded_models.hpp\`). On a cold load in
Chromium on 2 cores the option table and the default \`predict\` took about 0.4 s of the module's time together.
So the build answers the page's first requests itself (\`web/startup-replies.mjs\`): the option table and the
default question's \`predict\` and \`features\`, asked of the same wasm module under Node and written to
\`startup.json\` (${kb(pageSizes.find((f) => f.file === 'startup.json')?.gzip ?? 0)} gzip), which \`js/boot.js\` fetches beside the module; \`js/client.js\`
answers an identical request from it once and sends the worker the same \`predict\` anyway (its reply unread), so
that the first edit finds the module's code compiled. A link to any other question (the second set of rows) is
answered by the worker, start-up included.

## 3. Recomputing the table

\`predict\` for llama2-70b (batch 8, bf16, AdamW, 1B-token budget) on all ${worker.results} accelerators, sent from the page
to its worker ${worker.module.length} times after 5 warm-up calls:

- in the module (\`handleRequest\`): median ${round(workerMedian, 2)} ms, min ${round(Math.min(...worker.module), 2)}, max ${round(Math.max(...worker.module), 2)};
- round trip from the page (comlink message, JSON string in and out, \`JSON.parse\`): median ${round(median(worker.roundTrip), 2)} ms;
- through the page's own path (a new state in the URL hash, \`predict\` in the worker, then the table, chart and
  breakdown rendered): median ${round(median(uiRecompute), 0)} ms. Typing in a field adds the form's 16 ms debounce before this
  (the "after an edit" row above includes it).

A cluster question (docs/parallel.md) runs a plan search per accelerator. The page asks it one accelerator at a
time, spread over ${clusterWorkers} workers here (one per core, at most four; each with its own instance of the same
compiled module, two requests queued in each so that none idles while the page reads a reply), and keeps each
accelerator's answer, so an edit that leaves an accelerator's request as it was reuses its search. In each
module the searches of one question share what does not depend on the accelerator: the model's sharded stages and
every layout's memory (\`api/parallel_result.cpp\`); so the first accelerator a worker answers for a new model
costs the most (the first round below builds the stages; the second, another run length of the same model, finds them
built). The 64-GPU question
(\`#${CLUSTER_HASH}\`), asked anew through the URL: ${clusterFirst.map((t) => `${round(t, 0)} ms`).join(', ')};
then a micro-batch typed into the batch field (${CLUSTER_BATCHES.join(', ')}; values not asked before, each round under its own
training budget): ${clusterEdit.map((t) => `${round(t, 0)} ms`).join(', ')}.

## 4. wasm vs native

The same request, in process (no process start-up): natively through \`bench/native-bench.cpp\` linked
against \`build/libprenet_core.a\` (-O3); the wasm build (-O3) in the page's worker (section 3) and under Node
(\`build-wasm/prenet_node.mjs\`, 150 calls, the first 50 left out while V8 tiers up to optimized code):

| | native | wasm (Node) | wasm (Chromium worker) | ratio |
|---|---:|---:|---:|---:|
| warm request, median | ${round(nativeWarm, 2)} ms | ${round(wasmWarm, 2)} ms | ${round(workerMedian, 2)} ms | ${round(ratio, 2)}x (Node), ${round(ratioWorker, 2)}x (Chromium) |
| first request (includes one-time data parsing) | ${round(nativeCold, 1)} ms | ${round(wasmCold, 1)} ms | — | ${round(wasmCold / nativeCold, 2)}x |
| module instantiation | — | ${round(wasmInit, 1)} ms | — | |
| whole CLI process (\`build/prenet predict ... --json\`, median of ${cliTimes.length}) | ${round(median(cliTimes), 0)} ms | | | |

## How to reproduce

\`\`\`sh
npm run build                          # build/, build-wasm/, dist/
bash scripts/setup.sh --browser        # Chromium, if missing
npm run bench                          # = node bench/run.mjs [--runs N]; rewrites this file
\`\`\`
`;

function listAll() {
  const out = [];
  const walk = (dir) => {
    for (const name of execFileSync('ls', ['-A', dir], { encoding: 'utf8' }).split('\n').filter(Boolean)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(p.slice(dist.length + 1));
    }
  };
  walk(dist);
  return out;
}

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, md);
log(`wrote ${OUT}`);
console.log(
  JSON.stringify({ pageBrotli, pageGzip, firstMedian, editRecompute: median(editRecompute), clusterFirst: median(clusterFirst), clusterEdit: median(clusterEdit), planWorker: planWorker.ms[0], workerMedian, roundTrip: median(worker.roundTrip), nativeWarm, wasmWarm, ratio, pkg: pkg.version }, null, 1),
);
