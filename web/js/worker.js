// The wasm module lives here, off the main thread, so the page never freezes while it computes.
// The page calls request(jsonText) through comlink and gets the reply as a JSON string: handleRequest's
// std::string is copied out of wasm memory at once, so nothing on the page points into the module's heap.
import * as Comlink from '../vendor/comlink.mjs';

const wasmUrl = new URL('../wasm/prenet.wasm', import.meta.url);
// Startup milestones (epoch ms), for bench/: worker started, wasm received, glue loaded, module ready.
const marks = { start: performance.timeOrigin + performance.now() };
const mark = (k) => (marks[k] = performance.timeOrigin + performance.now());

// The compiled module: index.html starts the download and compilation before the page's modules load and
// posts the result here (worker.js?wasm=posted); otherwise the worker fetches it itself, at once, while the
// Emscripten glue is still loading. Streaming compilation when the host sends application/wasm; otherwise
// (a host with the wrong MIME type) the same bytes through an ArrayBuffer: slower, but it works.
const posted = new URL(import.meta.url).searchParams.get('wasm') === 'posted';
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

let failure = null;
const loaded = new Promise((resolve, reject) => {
  const fail = (error) => {
    failure = error instanceof Error ? error : new Error(String(error));
    reject(failure);
  };
  compiled.catch(fail);
  import('../wasm/prenet.mjs')
    .then(({ default: createPrenet }) => {
      mark('glue');
      return createPrenet({
        locateFile: (path) => new URL(`../wasm/${path}`, import.meta.url).href,
        instantiateWasm(imports, receive) {
          compiled
            .then((module) => WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module)))
            .catch(fail);
          return {};
        },
        print: (text) => console.log(text),
        printErr: (text) => console.warn(text),
      });
    })
    .then((module) => {
      mark('ready');
      resolve(module);
    }, fail);
});
loaded.catch(() => {}); // reported to the page by the first request

// The module's one-time start-up (parsing the embedded hardware sheets and the learned kernel models) runs
// on its first prediction. If the module is ready before the page's first request arrives, a tiny
// prediction starts that work at once instead of waiting for it.
let requests = 0;
const WARM_UP = JSON.stringify({
  command: 'predict',
  model: { input: { shape: [8] }, layers: [{ type: 'linear', out_features: 8 }, { type: 'cross_entropy' }] },
  hardware: 'all',
});
loaded.then((prenet) =>
  setTimeout(() => {
    if (requests) return;
    const start = performance.now();
    prenet.handleRequest(WARM_UP);
    marks.warmUpMs = performance.now() - start;
  }, 0),
);

const api = {
  /** Startup milestones in epoch milliseconds. */
  marks: () => marks,
  /** Resolves once the module is ready; returns its version. */
  async ready() {
    const prenet = await loaded;
    return prenet.version();
  },
  /** One API request (a JSON string); returns {reply: JSON string, ms: time spent in the module}. */
  async request(text) {
    requests++;
    if (failure) throw failure;
    const prenet = await loaded;
    const start = performance.now();
    const reply = prenet.handleRequest(text);
    return { reply, ms: performance.now() - start };
  },
};

Comlink.expose(api);
