// The calculator page: one state (state.js), kept in the URL hash; one update(patch) that applies a change,
// asks the worker for the new numbers and re-renders every panel that reads what changed; the panels
// (panels/*.js) each render(state, ctx) and bind(ctx) their own inputs. Nothing here talks to any server:
// the only fetches are this site's own files (the worker's wasm module, the schema and examples for the editor).
import { createClient, debounce, latest } from './client.js';
import * as custom from './panels/custom-hardware.js';
import * as hardware from './panels/hardware.js';
import * as model from './panels/model.js';
import * as results from './panels/results.js';
import * as share from './panels/share.js';
import * as training from './panels/training.js';
import * as S from './state.js';

const client = createClient(); // picks up the worker js/boot.js started
const $ = (id) => document.getElementById(id);

// In render order: the results mark the inputs an error names after the inputs have been filled.
const PANELS = [model, training, hardware, custom, results, share];

let table = null; // the API's option table (state.js optionTable), before anything else
let state = null;
// What the worker said, for the state in `last.snapshot` (the panels' '@features' and '@predict').
const last = { snapshot: null, features: null, featuresError: null, predict: null, predictError: null, request: null, rows: [], language: true, computeMs: 0, selAuto: null };
// The catalogues ('@meta'), filled at start.
const meta = { zoo: [], zooById: new Map(), hardware: [], hardwareById: new Map() };
const featuresCache = new Map();

const ctx = {
  $,
  client,
  meta,
  last,
  get table() {
    return table;
  },
  get state() {
    return state;
  },
  update,
  features,
  /** Writes the hash now (the copy-link button). */
  writeHash: () => writeHash.now(),
};

// ---- the one way the page changes ----------------------------------------------------------------------

const writeHash = debounce(async () => {
  const hash = await S.toHash(state, table);
  if (hash !== location.hash && !(hash === '' && location.hash === '')) history.replaceState(null, '', hash || `${location.pathname}${location.search}`);
}, 200);

/**
 * Applies a patch to the state, then re-renders every panel that reads a changed key (state keys, or
 * '@meta', '@features', '@predict' for what the worker said: `changed`). `compute`: 'debounced' (typing),
 * 'now', or false (a change the results already answer: sorting, a price edit, the breakdown's accelerator).
 */
function update(patch = {}, { compute = 'debounced', changed = [] } = {}) {
  Object.assign(state, patch);
  const keys = [...Object.keys(patch), ...changed];
  if (Object.keys(patch).length) writeHash();
  if (compute === 'now') scheduleCompute.now();
  else if (compute === 'debounced' && Object.keys(patch).length) scheduleCompute();
  for (const panel of PANELS) if (panel.reads.includes('*') || keys.some((k) => panel.reads.includes(k))) panel.render(state, ctx);
}

const renderAll = () => update({}, { compute: false, changed: [...new Set(PANELS.flatMap((p) => p.reads))] });

const setBusy = (on) => {
  $('busy').classList.toggle('on', on);
  $('busy').textContent = on ? 'Computing…' : '';
  document.querySelector('.results-card').setAttribute('aria-busy', String(on));
};

const compute = latest(runJob, onJob, setBusy);
const scheduleCompute = debounce(() => compute(structuredClone(state)), 120);

/** The `features` reply for a state (or another model document), cached: {reply, error}. */
async function features(snapshot, modelArgument) {
  const request = S.featuresRequest(snapshot, table, modelArgument);
  const key = JSON.stringify(request);
  if (featuresCache.has(key)) return featuresCache.get(key);
  const { doc, error } = await client.call(request);
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
async function runJob(snapshot) {
  const request = S.predictRequest(snapshot, table);
  const { doc, ms, error } = await client.call(request);
  return { snapshot, request, predict: doc, predictError: error, ms };
}

function onJob(thrown, job) {
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
  if (!table) return;
  const notes = [];
  const next = await S.fromHash(location.hash, table, notes);
  showLinkNotes(notes);
  if ((await S.toHash(next, table)) === (await S.toHash(state, table))) return;
  state = next;
  renderAll();
  scheduleCompute.now();
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
  state = await S.fromHash(location.hash, table, notes);
  showLinkNotes(notes);
  if (!location.hash.includes('custom=')) {
    const saved = custom.saved();
    if (saved.length) state.custom = saved;
  }
  for (const panel of PANELS) panel.bind(ctx);
  renderAll();
  scheduleCompute.now(); // the default prediction, queued ahead of the catalogue requests below
  const [zoo, catalogue] = await Promise.all([client.call({ command: 'zoo' }), client.call({ command: 'hardware' })]);
  const error = zoo.error ?? catalogue.error;
  if (error) return startFailed(error);
  meta.zoo = zoo.doc.models ?? [];
  meta.zooById = new Map(meta.zoo.map((m) => [m.id, m]));
  meta.hardware = catalogue.doc.hardware ?? [];
  meta.hardwareById = new Map(meta.hardware.map((h) => [h.id, h]));
  update({}, { compute: false, changed: ['@meta'] });
}

// A hook for the tests and benchmarks (tests/browser, bench/): the worker client and the current results.
// settled(): the results on the page are those of the current inputs (no recompute pending).
window.prenet = {
  client,
  state: () => structuredClone(state),
  table: () => table,
  last: () => last,
  settled: () =>
    !$('busy').classList.contains('on') &&
    last.request != null &&
    !last.predictError &&
    JSON.stringify(S.predictRequest(state, table)) === JSON.stringify(last.request),
};

start();
