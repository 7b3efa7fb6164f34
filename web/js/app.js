// The calculator page: one state (state.js), kept in the URL hash; one update(patch) that applies a change,
// asks the worker for the new numbers and re-renders every panel that reads what changed; the panels
// (panels/*.js) each render(state, ctx) and bind(ctx) their own inputs. Nothing here talks to any server:
// the only fetches are this site's own files (the worker's wasm module, the schema and examples for the editor).
import { createClient, debounce, latest } from './client.js';
import { isCluster, mergeReplies, splitRequest } from './cluster.js';
import * as calibration from './panels/calibration.js';
import * as compare from './panels/compare.js';
import * as custom from './panels/custom-hardware.js';
import * as hardware from './panels/hardware.js';
import * as model from './panels/model.js';
import * as results from './panels/results.js';
import * as share from './panels/share.js';
import * as training from './panels/training.js';
import * as S from './state.js';
import { keepFocus } from './focus.js';

const client = createClient(); // picks up the worker js/boot.js started
const $ = (id) => document.getElementById(id);

// In render order: the results mark the inputs an error names after the inputs have been filled.
const PANELS = [model, training, hardware, custom, calibration, results, compare, share];

let table = null; // the API's option table (state.js optionTable), before anything else
let state = null;
// What the worker said, for the state in `last.snapshot` (the panels' '@features' and '@predict').
const last = { snapshot: null, features: null, featuresError: null, predict: null, predictError: null, request: null, calibrate: null, rows: [], language: true, computeMs: 0, selAuto: null, cancelled: 0 };
// The catalogues ('@meta'), filled at start.
const meta = { zoo: [], zooById: new Map(), hardware: [], hardwareById: new Map() };
const featuresCache = new Map();
// A features reply with more layers than this keeps them in the worker; the per-layer table asks for the rows it shows.
const FEATURE_ROWS = 2000;

// Fields whose text is not a valid value (name -> {label, message}): the state keeps the last valid value,
// nothing is recomputed while one is left, and the results say which input holds them back.
const invalid = new Map();

const ctx = {
  $,
  client,
  meta,
  last,
  invalid,
  get table() {
    return table;
  },
  get state() {
    return state;
  },
  update,
  features,
  /** The predict reply for another state (a pinned scenario): {doc, error}. */
  predict: async (snapshot) => {
    const job = await runJob(snapshot, { current: () => true, progress: () => {} });
    return { doc: job.predict, error: job.predictError };
  },
  /** Writes the hash now (the copy-link button). */
  writeHash: () => writeHash.now(),
};

// ---- the one way the page changes ----------------------------------------------------------------------

// The link is an input too. `hashSeen`: the hash the state was last read from or written to; `hashReading`: a
// link being read (fromHash is async). Until both are done the results are not those of the link (settled()).
let hashSeen = null;
let hashReading = 0;
// Counts the edits (patches), so that a link read that an edit overtook does not undo the edit.
let edits = 0;

const writeHash = debounce(async () => {
  const hash = await S.toHash(state, table);
  if (hash !== location.hash && !(hash === '' && location.hash === '')) history.replaceState(null, '', hash || `${location.pathname}${location.search}`);
  hashSeen = location.hash;
}, 200);

/**
 * Applies a patch to the state, then re-renders every panel that reads a changed key (state keys, or
 * '@meta', '@features', '@predict' for what the worker said: `changed`). `compute`: 'debounced' (typing),
 * 'now', or false (a change the results already answer: sorting, a price edit, the breakdown's accelerator).
 */
function update(patch = {}, { compute = 'debounced', changed = [] } = {}) {
  Object.assign(state, patch);
  if (Object.keys(patch).length) edits++;
  for (const key of Object.keys(patch)) if (invalid.delete(key)) changed = [...changed, '@invalid'];
  const keys = [...Object.keys(patch), ...changed];
  if (Object.keys(patch).length) writeHash();
  if (invalid.size) compute = false; // the results say which input keeps them from updating
  else if (keys.includes('@invalid') && compute === false) compute = 'debounced';
  if (compute === 'now') scheduleCompute.now();
  else if (compute === 'debounced' && (Object.keys(patch).length || keys.includes('@invalid'))) scheduleCompute();
  keepFocus(() => {
    for (const panel of PANELS) if (panel.reads.includes('*') || keys.some((k) => panel.reads.includes(k))) panel.render(state, ctx);
  });
}

const renderAll = () => update({}, { compute: false, changed: [...new Set(PANELS.flatMap((p) => p.reads))] });

let progress = '';
const setBusy = (on) => {
  $('busy').classList.toggle('on', on);
  if (!on) progress = '';
  $('busy').textContent = on ? progress || 'Computing…' : '';
  document.querySelector('.results-card').setAttribute('aria-busy', String(on));
};
const onProgress = (done, total, what = 'Computing') => {
  progress = `${what}: ${done} of ${total} accelerators…`;
  if ($('busy').classList.contains('on')) $('busy').textContent = progress;
};

const compute = latest(runJob, onJob, setBusy, onProgress);
// The state as it is now, for a recompute: a copy, except the model document, which is never changed in place
// (an edit or an upload makes a new one), so a large one is not copied on every keystroke.
const snapshot = () => ({ ...structuredClone({ ...state, doc: null }), doc: state.doc });
// The debounce only merges the input events of one frame: latest() already computes just the newest state of a
// burst, and every millisecond waited here is waited on every edit (issue #26: an edit within 100 ms).
const scheduleCompute = debounce(() => compute(snapshot()), 16);

/** The `features` reply for a state (or another model document), cached: {reply, error}. */
async function features(snapshot, modelArgument) {
  const request = S.featuresRequest(snapshot, table, modelArgument);
  const key = JSON.stringify(request);
  if (featuresCache.has(key)) return featuresCache.get(key);
  const { doc, error } = await client.call(request, { trimLayers: FEATURE_ROWS });
  const answer = { reply: doc, error };
  if (!(error?.code === 'internal')) {
    if (featuresCache.size > 20) featuresCache.clear();
    featuresCache.set(key, answer);
  }
  return answer;
}

// One recompute: one `predict` request, which answers everything the results need (the API picks the
// budget that fits the model and says which in `settings`; whether the model counts tokens is in its
// `model`). The model panel's `features` follows, for the same state.
async function runJob(snapshot, live) {
  const request = S.predictRequest(snapshot, table);
  if (isCluster(request, table)) return runChunked(snapshot, request, live, 1, 'Searching layouts', true);
  // A model of thousands of layers takes seconds per accelerator: asked a few accelerators at a time, with progress.
  if ((snapshot.doc?.layers?.length ?? 0) > 5000) return runChunked(snapshot, request, live, 8, 'Computing');
  const { doc, ms, error } = await client.call(request);
  return { snapshot, request, predict: doc, predictError: error, ms };
}

// A cluster question runs a plan search per accelerator: asked one accelerator at a time, spread over the
// client's workers, so the page shows how far it is and a newer input stops it between two accelerators.
// An accelerator's answer is kept for the next jobs (partCache): an edit that leaves its request as it was
// (another accelerator ticked, a value typed and typed back) reuses its plan search instead of repeating it.
let catalogueIds = null;
const partCache = new Map(); // chunk request (JSON) -> its part {doc, ms, error}, the newest PART_CACHE_SIZE
const PART_CACHE_SIZE = 200;
async function runChunked(snapshot, request, live, size, what, reuse = false) {
  catalogueIds ??= client.call({ command: 'hardware' }).then(({ doc }) => (doc.hardware ?? []).map((h) => h.id));
  const ids = request.hardware === 'all' ? await catalogueIds : [];
  const chunks = splitRequest(request, ids, size);
  const count = (c) => c.hardware.length + (c.custom_hardware?.length ?? 0);
  const total = chunks.reduce((n, c) => n + count(c), 0);
  // (Not for a model of thousands of layers: its requests are megabytes each, and an edit changes them all.)
  const keys = chunks.map((c) => (reuse ? JSON.stringify(c) : null));
  const parts = keys.map((k) => partCache.get(k));
  let done = parts.reduce((n, p, i) => n + (p ? count(chunks[i]) : 0), 0);
  const asked = chunks.flatMap((c, i) => (parts[i] ? [] : [i]));
  live.progress(done, total, what);
  const fresh = await client.callEach(
    asked.map((i) => chunks[i]),
    {
      current: live.current,
      // An error that is not one accelerator's (an invalid layout) is every part's: no need to ask the rest.
      stop: (part) => part.error && part.error.hardware == null,
      onPart(part, j) {
        const i = asked[j];
        parts[i] = part;
        if (reuse && part.error?.code !== 'internal') {
          partCache.delete(keys[i]);
          partCache.set(keys[i], part);
          for (const old of partCache.keys()) if (partCache.size > PART_CACHE_SIZE) partCache.delete(old);
        }
        done += count(chunks[i]);
        live.progress(done, total, what);
      },
    },
  );
  if (!live.current()) {
    last.cancelled++;
    return { snapshot, request, cancelled: true };
  }
  const answered = chunks.flatMap((c, i) => (parts[i] ? [i] : []));
  const ms = fresh.reduce((sum, p) => sum + (p?.ms ?? 0), 0);
  const names = new Map(meta.hardware.map((h) => [h.id, h.name]));
  const { doc, error } = mergeReplies(answered.map((i) => parts[i]), answered.map((i) => chunks[i]), names);
  return { snapshot, request, predict: doc, predictError: error, ms };
}

function onJob(thrown, job) {
  if (job?.cancelled) return;
  if (thrown) {
    last.predictError = { message: `The calculator failed: ${thrown.message ?? thrown}`, field: null, code: 'internal' };
    update({}, { compute: false, changed: ['@predict'] });
    return;
  }
  last.snapshot = job.snapshot;
  features(job.snapshot).then(({ reply, error }) => {
    if (last.snapshot !== job.snapshot) return;
    last.featuresError = error;
    if (!error) last.features = reply;
    update({}, { compute: false, changed: ['@features'] });
  });
  if (job.predictError) {
    last.predictError = job.predictError;
  } else {
    Object.assign(last, { predictError: null, predict: job.predict, request: job.request, computeMs: job.ms });
    last.language = job.predict.model?.tokens_per_sample > 0;
  }
  update({}, { compute: false, changed: ['@predict'] });
  if (!job.predictError && document.documentElement.dataset.ready !== 'true') {
    performance.mark('prenet:first-result');
    document.documentElement.dataset.ready = 'true';
    afterFirstResult();
  }
}

// ---- start ----------------------------------------------------------------------------------------------

function afterFirstResult() {
  results.loadChart(ctx);
  // The extra workers a cluster question spreads over start now, while the page is idle, so the first cluster
  // question does not wait for their modules to start.
  setTimeout(client.warmUp, 1000);
  client.ready.then((v) => ($('version').textContent = v));
  fetch('version.json')
    .then((r) => (r.ok ? r.json() : null))
    .then((v) => v && ($('version').textContent = `${v.version} (build ${v.build})`))
    .catch(() => {});
  if ('serviceWorker' in navigator && /^https?:$/.test(location.protocol)) {
    navigator.serviceWorker
      .register('sw.js')
      .then(() => navigator.serviceWorker.ready)
      .then(() => ($('offline-status').textContent = '· Works offline.'))
      .catch(() => {});
  }
}

// The floating "Results" link (phones) hides while the results are on screen.
new IntersectionObserver(([entry]) => document.querySelector('.jump')?.classList.toggle('away', entry.isIntersecting)).observe($('results'));

window.addEventListener('beforeinstallprompt', (e) => {
  e.preventDefault();
  const b = $('install');
  b.hidden = false;
  b.onclick = async () => {
    b.hidden = true;
    await e.prompt();
  };
});

// What a link carried that the page could not use, said above the results until the next link.
function showLinkNotes(notes) {
  $('link-note').hidden = !notes.length;
  $('link-note').textContent = notes.join(' ');
}

window.addEventListener('hashchange', async () => {
  if (!table) return; // start() has not read the link yet, and will read this one
  hashSeen = location.hash;
  const since = edits;
  hashReading++;
  try {
    const notes = [];
    const next = await S.fromHash(hashSeen, table, notes);
    next.calibration ??= calibration.saved();
    // An edit made while the link was read (a file dropped just after a link was followed) is the newer
    // input: it stays, and its own writeHash puts it in the address.
    if (edits !== since) return;
    if (S.keepKnown(next, meta, notes)) writeHash();
    showLinkNotes(notes);
    if ((await S.toHash(next, table)) === (await S.toHash(state, table))) return;
    if (edits !== since) return;
    state = next;
    invalid.clear();
    renderAll();
    scheduleCompute.now();
  } finally {
    hashReading--;
  }
});

function startFailed(error) {
  last.predictError = { ...error, message: `The calculator could not start: ${error.message}` };
  results.render(state, ctx);
  $('model-in-use').textContent = 'The calculator could not start.';
}

async function start() {
  // The option table first: the form, the URL's keys and the requests are made of it.
  const options = await client.call({ command: 'options' });
  if (options.error) return startFailed(options.error);
  table = S.optionTable(options.doc);
  const notes = [];
  hashSeen = location.hash;
  state = await S.fromHash(hashSeen, table, notes);
  showLinkNotes(notes);
  if (!location.hash.includes('custom=')) {
    const saved = custom.saved();
    if (saved.length) state.custom = saved;
  }
  // The calibration kept in this browser, unless the link carries one (the results it shares are for that).
  state.calibration ??= calibration.saved();
  for (const panel of PANELS) panel.bind(ctx);
  renderAll();
  // The default prediction, queued ahead of the catalogue requests below; a link that names a model or
  // accelerators waits for the catalogues, so that one unknown id is left out with a note (S.keepKnown)
  // instead of failing the whole request.
  const namesIds = (state.source === 'zoo' && state.model !== S.fresh(table).model) || state.hw?.length > 0;
  if (!namesIds) scheduleCompute.now();
  const [zoo, catalogue] = await Promise.all([client.call({ command: 'zoo' }), client.call({ command: 'hardware' })]);
  const error = zoo.error ?? catalogue.error;
  if (error) return startFailed(error);
  meta.zoo = zoo.doc.models ?? [];
  meta.zooById = new Map(meta.zoo.map((m) => [m.id, m]));
  meta.hardware = catalogue.doc.hardware ?? [];
  meta.hardwareById = new Map(meta.hardware.map((h) => [h.id, h]));
  const corrected = S.keepKnown(state, meta, notes);
  if (corrected) {
    showLinkNotes(notes);
    writeHash();
  }
  update({}, { compute: false, changed: corrected ? ['@meta', 'model', 'hw'] : ['@meta'] });
  if (namesIds) scheduleCompute.now();
}

// A hook for the tests and benchmarks (tests/browser, bench/): the worker client and the current results.
// settled(): the results on the page are those of the current inputs (no recompute pending, the link read),
// and the catalogues it lists have arrived (the first result may come before them: js/client.js).
window.prenet = {
  client,
  state: () => structuredClone(state),
  table: () => table,
  last: () => last,
  settled: () =>
    hashReading === 0 &&
    meta.hardware.length > 0 &&
    location.hash === hashSeen &&
    !$('busy').classList.contains('on') &&
    last.request != null &&
    !last.predictError &&
    JSON.stringify(S.predictRequest(state, table)) === JSON.stringify(last.request),
};

start();
