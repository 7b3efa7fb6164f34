// The wasm module lives here, off the main thread, so the page never freezes while it computes.
// The page calls request(jsonText) through comlink and gets the reply as a JSON string: handleRequest's
// std::string is copied out of wasm memory at once, so nothing on the page points into the module's heap.
import * as Comlink from '../vendor/comlink.mjs';
import { breakModule, createEngine } from './engine.js';

const wasmUrl = new URL('../wasm/prenet.wasm', import.meta.url);
// Startup milestones (epoch ms), for bench/: worker started, wasm received, glue loaded, module ready.
const marks = { start: performance.timeOrigin + performance.now() };
const mark = (k) => (marks[k] = performance.timeOrigin + performance.now());

// The compiled module: index.html starts the download and compilation before the page's modules load and
// posts the result here (worker.js?wasm=posted); otherwise the worker fetches it itself, at once, while the
// Emscripten glue is still loading. Streaming compilation when the host sends application/wasm; otherwise
// (a host with the wrong MIME type) the same bytes through an ArrayBuffer: slower, but it works.
const posted = new URL(import.meta.url).searchParams.get('wasm') === 'posted';
// One of the pool's other workers (js/client.js), started after the first result: never the page's first answer.
const poolWorker = new URL(import.meta.url).searchParams.get('pool') === '1';
const compiled = posted
  ? new Promise((resolve, reject) => {
      self.addEventListener('message', function handoff(event) {
        if (event.data?.type !== 'prenet-wasm') return;
        self.removeEventListener('message', handoff);
        mark('fetched');
        if (event.data.module) resolve(event.data.module);
        else reject(new Error(event.data.error ?? 'the page could not load the wasm module'));
      });
    })
  : (async () => {
      const response = await fetch(wasmUrl, { credentials: 'same-origin' });
      mark('fetched');
      if (!response.ok) throw new Error(`cannot load ${wasmUrl.pathname}: HTTP ${response.status}`);
      const type = response.headers.get('content-type') ?? '';
      if (typeof WebAssembly.compileStreaming === 'function' && type.startsWith('application/wasm'))
        return WebAssembly.compileStreaming(response);
      return WebAssembly.compile(await response.arrayBuffer());
    })();

// Test hooks (js/worker.js?test-hooks=1, which js/boot.js asks for only when a test has set
// window.prenetTestHooks before the page loaded; no link or input can): breakNext() makes the next request
// trap inside the module, to test the recovery below.
const testHooks = new URL(import.meta.url).searchParams.get('test-hooks') === '1';

// Every instance is made from the same compiled module: the first when the glue has loaded, a fresh one after
// a request that trapped or aborted the module (js/engine.js), in a few milliseconds.
let failure = null;
const fail = (error) => {
  failure = error instanceof Error ? error : new Error(String(error));
  throw failure;
};
compiled.catch(() => {});
const glue = import('../wasm/prenet.mjs').then(({ default: createPrenet }) => {
  mark('glue');
  return createPrenet;
});
glue.catch(() => {});
let instances = 0;
function instantiate() {
  return new Promise((resolve, reject) => {
    Promise.all([glue, compiled])
      .then(([createPrenet, module]) =>
        createPrenet({
          locateFile: (path) => new URL(`../wasm/${path}`, import.meta.url).href,
          instantiateWasm(imports, receive) {
            WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module), reject);
            return {};
          },
          print: (text) => console.log(text),
          printErr: (text) => console.warn(text),
        }),
      )
      .then(resolve, reject);
  }).then((prenet) => {
    if (!instances++) mark('ready');
    return prenet;
  }, fail);
}
const engine = createEngine(instantiate);

// The module's one-time start-up (parsing the embedded hardware sheets and the learned kernel models) runs
// on its first prediction. If the module is ready before the page's first request arrives, a tiny
// prediction starts that work at once instead of waiting for it.
let requests = 0;
let breakNext = false;
const layerStore = new Map(); // id -> the layers of a long features reply (the newest four)
let layerIds = 0;
const WARM_UP = JSON.stringify({
  command: 'predict',
  model: { input: { shape: [8] }, layers: [{ type: 'linear', out_features: 8 }, { type: 'cross_entropy' }] },
  hardware: 'all',
});
// The pool's other workers (started after the first result) also ask a small cluster question, so that the plan
// search's code is hot (V8 compiles wasm functions optimised once they run a while) before the user's first
// cluster question (measured about 0.1 s sooner on 2 shared cores, a noisy gain; docs/performance.md).
const WARM_UP_CLUSTER = JSON.stringify({ command: 'predict', model: 'gpt2', gpus: 8, hardware: ['h100-sxm5-80gb', 'a100-sxm4-40gb', 'mi300x', 'rtx-4090'] });
engine.ready().then(() =>
  setTimeout(async () => {
    if (requests) return;
    marks.warmUpMs = (await engine.request(WARM_UP)).ms;
    if (poolWorker && !requests) marks.warmUpClusterMs = (await engine.request(WARM_UP_CLUSTER)).ms;
  }, 0),
);

const api = {
  /** Startup milestones in epoch milliseconds. */
  marks: () => marks,
  /** Resolves once the module is ready; returns its version. */
  async ready() {
    const prenet = await engine.ready();
    return prenet.version();
  },
  /**
   * One API request (a JSON string); returns {reply: JSON string, ms: time spent in the module, restarted}.
   * A request that traps or aborts the module is answered with an error reply and the module is restarted.
   */
  async request(text, { trimLayers = 0 } = {}) {
    requests++;
    if (failure) throw failure;
    const before = breakNext ? breakModule : undefined;
    breakNext = false;
    const out = await engine.request(text, { before });
    // A `features` reply of a model with very many layers (100,000 layers: about 50 MB of JSON) is parsed
    // here, not on the page: the page gets the first `trimLayers` rows and the count, and asks for the rows
    // its table shows (layers(id, start, end)).
    if (trimLayers > 0 && out.reply.length > 1e6) {
      const doc = JSON.parse(out.reply);
      if (Array.isArray(doc.layers) && doc.layers.length > trimLayers) {
        const id = ++layerIds;
        layerStore.set(id, doc.layers);
        for (const old of layerStore.keys()) if (layerStore.size > 4) layerStore.delete(old);
        Object.assign(doc, { layers_total: doc.layers.length, layers_id: id, layers: doc.layers.slice(0, trimLayers) });
        out.reply = JSON.stringify(doc);
      }
    }
    return out;
  },
  /** Rows start..end of a `features` reply's layers kept by request(..., {trimLayers}); a JSON array, or null. */
  layers(id, start, end) {
    const layers = layerStore.get(id);
    return layers ? JSON.stringify(layers.slice(start, end)) : 'null';
  },
  /** How many times a request has broken the module (and it was restarted). */
  restarts: () => engine.restarts,
};
if (testHooks)
  api.breakNext = () => {
    breakNext = true;
  };

Comlink.expose(api);
