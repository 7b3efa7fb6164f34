// The page's side of the worker: a comlink proxy, JSON in and out, and "latest wins" channels so that a
// burst of input changes computes only the newest state (a worker runs one request at a time). A cluster
// question is many independent requests (one plan search per accelerator): `callEach` spreads them over a
// few more workers, each with its own instance of the same compiled module.
import * as Comlink from '../vendor/comlink.mjs';
import { apiError } from './errors.js';

// Workers for `callEach`: one per core, at most four (each holds a module instance and its parsed models).
const POOL_SIZE = Math.max(1, Math.min(4, globalThis.navigator?.hardwareConcurrency ?? 2));

/** One request (its JSON text) through a worker's proxy: {doc, ms, error} (errors.js), never a rejection. */
async function callWorker(remote, text, options) {
  try {
    const { reply, ms } = await remote.request(text, options);
    const doc = JSON.parse(reply);
    return { doc, ms, error: apiError(doc) };
  } catch (thrown) {
    const error = apiError(thrown);
    return { doc: { error }, ms: 0, error };
  }
}

/**
 * The build's answers to the page's first requests (startup.json, web/startup-replies.mjs): request text ->
 * reply, each given once (a caller may change the reply it gets; a repeat goes to the worker). `loaded` is
 * js/boot.js's fetch of the file; a file that is missing or not the expected shape gives no answers. A request
 * waits for the file only until the worker is ready: then the worker answers, whatever the file does.
 */
function precomputed(loaded, ready) {
  const entries = (doc) => (Array.isArray(doc?.replies) ? doc.replies : []).filter((e) => e?.request && e.reply && typeof e.reply === 'object');
  const replies = Promise.resolve(loaded)
    .then((doc) => new Map(entries(doc).map(({ request, reply }) => [JSON.stringify(request), reply])))
    .catch(() => new Map());
  const given = [];
  return {
    async take(text) {
      const map = await Promise.race([replies, ready.then(() => new Map(), () => new Map())]);
      const reply = map.get(text);
      if (reply === undefined) return null;
      map.delete(text);
      given.push(text);
      return reply;
    },
    /** The requests answered from the file (tests, bench/). */
    given: () => [...given],
  };
}

export function createClient() {
  // js/boot.js starts the worker (and the wasm download) before this module graph has loaded.
  const worker = globalThis.prenetWorker ?? new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  globalThis.prenetWorker = null;
  // The compiled module js/boot.js fetched, handed to the extra workers too (no second download or compile).
  const compiled = globalThis.prenetWasm ?? null;
  const remote = Comlink.wrap(worker);
  const ready = remote.ready();
  const startup = precomputed(globalThis.prenetStartup ?? null, ready);
  globalThis.prenetStartup = null;
  // The pool: the main worker first; the others start on warmUp() (after the first result) or the first callEach.
  const pool = [remote];
  const asked = [0]; // requests each worker of the pool answered through callEach (tests, bench/)
  function grow() {
    while (pool.length < POOL_SIZE) {
      const extra = compiled
        ? new Worker(new URL('./worker.js?wasm=posted&pool=1', import.meta.url), { type: 'module' })
        : new Worker(new URL('./worker.js?pool=1', import.meta.url), { type: 'module' });
      compiled?.then(
        (module) => extra.postMessage({ type: 'prenet-wasm', module }),
        (error) => extra.postMessage({ type: 'prenet-wasm', error: String(error) }),
      );
      pool.push(Comlink.wrap(extra));
      asked.push(0);
    }
  }
  return {
    ready,
    /**
     * Sends one request object; resolves (never rejects) to {doc, ms, error}: doc is the parsed reply,
     * error its {message, field, code} (errors.js) or null. A worker that failed answers as an error too. The
     * page's first requests may be answered from the build's startup.json instead (ms 0; see precomputed).
     * `options.trimLayers`: a features reply with more layers than that keeps the rest in the worker
     * (`layers_total`, `layers_id`; rows through layers()).
     */
    async call(request, options = undefined) {
      const text = JSON.stringify(request);
      const doc = await startup.take(text);
      if (!doc) return callWorker(remote, text, options);
      // The worker still runs a prediction given from the file, its reply unread: V8 compiles the module's
      // functions as they first run, so the user's first edit then finds them compiled (about 0.3 s sooner).
      // Queued behind the requests the page makes at once (the catalogues it lists), not ahead of them.
      if (request.command === 'predict') setTimeout(() => remote.request(text).catch(() => {}), 0);
      return { doc, ms: 0, error: apiError(doc) };
    },
    /** The requests answered from the build's precomputed replies (startup.json) instead of the worker. */
    precomputed: startup.given,
    /**
     * Independent requests over every worker of the pool, each worker taking the next request when it is free.
     * `live.current()` false stops handing out requests (a newer input cancelled the job); `onPart(part, i)`
     * after each answer, `stop(part)` true stops handing out the rest. Resolves to the parts answered, in the
     * requests' order (holes where none was asked).
     */
    async callEach(requests, { current = () => true, onPart = () => {}, stop = () => false } = {}) {
      grow();
      const parts = new Array(requests.length);
      let next = 0;
      let halted = false;
      const drain = async (proxy, w) => {
        while (!halted && next < requests.length) {
          if (!current()) return;
          const i = next++;
          parts[i] = await callWorker(proxy, JSON.stringify(requests[i]));
          asked[w]++;
          if (stop(parts[i])) halted = true;
          onPart(parts[i], i);
        }
      };
      // Two requests queued per worker: the next one waits in the worker while the page reads the last reply,
      // so no worker idles between requests (a cancel lets at most the two already handed out finish).
      await Promise.all(pool.flatMap((proxy, w) => [drain(proxy, w), drain(proxy, w)]));
      return parts;
    },
    /** How many workers callEach spreads over, and how many requests each has answered there. */
    poolSize: POOL_SIZE,
    asked: () => [...asked],
    /** Starts the pool's other workers (each starts its module and parses its models while the page is idle). */
    warmUp: grow,
    /** Rows start..end of a trimmed features reply's layers (null when the worker no longer has them). */
    async layers(id, start, end) {
      try {
        return JSON.parse(await remote.layers(id, start, end));
      } catch {
        return null;
      }
    },
    worker,
    remote,
  };
}

/**
 * A channel that runs `run(arg, live)` for the newest argument only. `submit(arg)` returns at once; `onResult`
 * gets (error, value, arg) for results that are still current. `onBusy(true/false)` says when the channel
 * has been working for longer than one frame, so quick recomputes do not flash a busy state. `live.current()`
 * is false once a newer argument was submitted (a job of several requests stops there: cancelled), and
 * `live.progress(done, total)` reaches `onProgress` while the job is current.
 */
export function latest(run, onResult, onBusy = () => {}, onProgress = () => {}) {
  let generation = 0;
  let pending = null;
  let inflight = false;
  let busyTimer = null;
  let busy = false;
  const setBusy = (value) => {
    if (busy !== value) onBusy((busy = value));
  };
  async function pump() {
    if (inflight || !pending) return;
    const job = pending;
    pending = null;
    inflight = true;
    // What a long job (a cluster question, asked one accelerator at a time) asks between its requests: whether
    // it is still the newest (a newer input cancels it) and where to report its progress.
    const live = { current: () => job.generation === generation, progress: (done, total, what) => job.generation === generation && onProgress(done, total, what) };
    try {
      const value = await run(job.arg, live);
      if (job.generation === generation) onResult(null, value, job.arg);
    } catch (error) {
      if (job.generation === generation) onResult(error, null, job.arg);
    } finally {
      inflight = false;
      if (pending) pump();
      else {
        clearTimeout(busyTimer);
        busyTimer = null;
        setBusy(false);
      }
    }
  }
  return function submit(arg) {
    pending = { arg, generation: ++generation };
    if (!busyTimer && !busy) busyTimer = setTimeout(() => setBusy(true), 16);
    pump();
  };
}

/** Calls fn after `ms` of quiet. */
export function debounce(fn, ms) {
  let timer = null;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  debounced.now = (...args) => {
    clearTimeout(timer);
    return fn(...args);
  };
  return debounced;
}
