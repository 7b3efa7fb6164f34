// The calculator page: state in the URL hash, inputs bound to it, requests to the wasm module in a Web
// Worker (js/worker.js), results rendered as they arrive. Nothing here talks to any server: the only
// fetches are this site's own files (the worker's wasm module, the schema and examples for the editor).
import { createClient, debounce, latest } from './client.js';
import * as F from './format.js';
import { createLayersEditor } from './layers-editor.js';
import { assumptionsHtml, breakdownHtml, buildRows, layersHtml, pickBest, renderTable, sortRows, toCsv, verdictHtml, COLUMNS } from './results.js';
import * as S from './state.js';

const client = createClient(); // start the worker (and the wasm download) before anything else
const $ = (id) => document.getElementById(id);
const CUSTOM_KEY = 'prenet.custom-hardware';
const { esc, isNum } = F;

const meta = { zoo: [], zooById: new Map(), hardware: [], hardwareById: new Map(), version: '' };
let state = S.fresh();
let last = { features: null, featuresError: null, predict: null, predictError: null, request: null, rows: [], language: true, supported: new Set(), snapshot: null };
let editor = null;
let firstResult = true;
const featuresCache = new Map();

// ---- state changes --------------------------------------------------------------------------------------

const writeHash = debounce(async () => {
  const hash = await S.toHash(state);
  if (hash !== location.hash && !(hash === '' && location.hash === '')) history.replaceState(null, '', hash || `${location.pathname}${location.search}`);
  updateShare();
}, 200);

/** Applies a patch; `then`: 'compute' (ask the worker, debounced), 'now' (ask at once), 'render' or 'none'. */
function update(patch, then = 'compute') {
  Object.assign(state, patch);
  writeHash();
  if (then === 'compute') scheduleCompute();
  else if (then === 'now') scheduleCompute.now();
  else if (then === 'render') renderResults();
}

const setBusy = (on) => {
  $('busy').classList.toggle('on', on);
  $('busy').textContent = on ? 'Computing…' : '';
  document.querySelector('.results-card').setAttribute('aria-busy', String(on));
};

const compute = latest(runJob, onJob, setBusy);
const scheduleCompute = debounce(() => compute(structuredClone(state)), 120);

async function features(snapshot, model) {
  const request = S.featuresRequest(snapshot, model);
  const key = JSON.stringify(request);
  if (featuresCache.has(key)) return featuresCache.get(key);
  const { doc } = await client.call(request);
  if (featuresCache.size > 20) featuresCache.clear();
  featuresCache.set(key, doc);
  return doc;
}

// One recompute. A zoo model goes straight to `predict` (the first result should not wait for anything
// else) and `features` follows for the model panel; a document goes to `features` first, which checks it
// and names the layer of any error. The training budget is tokens for language models: for a zoo model
// whose kind is not known yet it is guessed, and asked again if the reply says otherwise and the API uses it.
async function runJob(snapshot) {
  const start = performance.now();
  let f = null;
  let language;
  if (snapshot.source !== 'zoo') {
    f = await features(snapshot);
    if (f.error) return { snapshot, featuresError: f.error };
    language = f.settings?.seq != null;
  } else {
    const z = meta.zooById.get(snapshot.model);
    language = z ? z.default_seq != null : last.features?.settings ? last.features.settings.seq != null : true;
  }
  let request = S.predictRequest(snapshot, language);
  let { doc, ms } = await client.call(request);
  if (doc.error && language && snapshot.source === 'zoo' && request.tokens != null && /'tokens'/.test(doc.error)) {
    // A guess before the zoo list arrived: not a language model after all.
    language = false;
    request = S.predictRequest(snapshot, language);
    ({ doc, ms } = await client.call(request));
  }
  if (!doc.error && doc.model && (doc.model.tokens_per_sample > 0) !== language) {
    language = !language;
    request = S.predictRequest(snapshot, language);
    if (['tokens', 'samples'].some((k) => k in (doc.settings ?? {}))) ({ doc, ms } = await client.call(request));
  }
  return { snapshot, features: f, language, request, predict: doc, ms, total: performance.now() - start };
}

function onJob(error, job) {
  if (error) {
    showError(`The calculator failed: ${error.message ?? error}`);
    return;
  }
  last.snapshot = job.snapshot;
  if (job.featuresError) {
    last.featuresError = job.featuresError;
    renderModel();
    renderResults();
    return;
  }
  last = { ...last, features: job.features ?? last.features, featuresError: null, language: job.language };
  if (!job.features) {
    // A zoo model: the model panel's numbers follow the results.
    features(job.snapshot).then((f) => {
      if (last.snapshot !== job.snapshot) return;
      if (f.error) last.featuresError = f.error;
      else last.features = f;
      renderModel();
    });
  }
  if (job.predict.error) {
    last.predictError = job.predict.error;
    last.predict = null;
  } else {
    last.predictError = null;
    last.predict = job.predict;
    last.request = job.request;
    last.supported = new Set(Object.keys(job.predict.settings ?? {}));
    last.computeMs = job.ms;
  }
  renderModel();
  renderResults();
  if (firstResult && last.predict) {
    firstResult = false;
    performance.mark('prenet:first-result');
    document.documentElement.dataset.ready = 'true';
    afterFirstResult();
  }
}

// ---- model panel ---------------------------------------------------------------------------------------

function renderZoo() {
  const query = $('zoo-search').value.trim().toLowerCase();
  const domains = ['language', 'vision', 'speech'];
  for (const m of meta.zoo) if (!domains.includes(m.domain)) domains.push(m.domain);
  const groups = domains.map((domain) => {
    const models = meta.zoo.filter((m) => m.domain === domain && (!query || `${m.id} ${m.description}`.toLowerCase().includes(query)));
    if (!models.length && (query || domain !== 'speech')) return '';
    const items = models.length
      ? models
          .map(
            (m) => `<label class="zoo-item"><input type="radio" name="zoo" value="${esc(m.id)}" ${state.source === 'zoo' && state.model === m.id ? 'checked' : ''} />
            <span class="id">${esc(m.id)}</span><span class="desc">${esc(m.description)}</span></label>`,
          )
          .join('')
      : '<p class="zoo-empty">No speech models in the zoo yet: describe one layer by layer (conv1d, lstm, attention) or upload its layers JSON.</p>';
    return `<fieldset><legend>${esc(domain)}</legend>${items}</fieldset>`;
  });
  const html = groups.join('');
  $('zoo-list').innerHTML = html || `<p class="zoo-empty">No model matches “${esc(query)}”.</p>`;
}

function syncUseNote() {
  $('layers-use-note').hidden = state.source === 'layers';
}

function modelLabel() {
  if (state.source === 'zoo') return `<strong>${esc(state.model)}</strong> from the zoo`;
  const name = state.doc?.name ?? last.features?.model ?? 'custom';
  if (state.source === 'layers') return `<strong>${esc(name)}</strong>, built layer by layer`;
  const kind = state.doc?.model_type ? `Hugging Face config, ${esc(state.doc.model_type)}` : 'layers JSON';
  return `<strong>${esc(state.docName || 'uploaded file')}</strong> (${kind})`;
}

function renderModel() {
  $('model-in-use').innerHTML = `Using ${modelLabel()}`;
  syncUseNote();
  const f = last.features;
  const box = $('model-summary');
  if (last.featuresError) {
    box.innerHTML = `<p class="model-error" role="alert">${esc(last.featuresError)}</p>`;
    editor?.annotate(null, state.source === 'layers' ? last.featuresError : null);
    return;
  }
  if (!f) return;
  const batch = f.settings?.batch || 1;
  const perSample = (f.forward_flops + f.backward_flops) / batch;
  const stat = (label, value, title = '') => `<div class="stat" ${title ? `title="${esc(title)}"` : ''}><span class="label">${label}</span><span class="value">${value}</span></div>`;
  box.innerHTML = [
    stat('Parameters', F.count(f.params), `${F.integer(f.params)} trainable parameters`),
    stat('Training FLOPs / sample', F.si(perSample), 'forward + backward, FLOPs = 2 × multiply-accumulates'),
    stat('Forward FLOPs / sample', F.si(f.forward_flops / batch)),
    f.settings?.seq != null ? stat('Tokens / sample', F.integer(f.settings.seq)) : f.settings?.image != null ? stat('Image', `${f.settings.image} px`) : '',
  ].join('');
  if (state.source === 'layers') editor?.annotate(f, null);
  renderLayerTable();
  syncSizeFields();
}

function renderLayerTable() {
  const box = $('layer-table-box');
  const f = last.features;
  if (!f?.layers) return;
  box.querySelector('summary').textContent = `Per-layer table (${f.layers.length} rows${f.layers.some((l) => l.repeat > 1) ? ', repeated blocks shown once' : ''})`;
  if (!box.open) return;
  const rows = f.layers
    .map(
      (l) => `<tr><td>${esc(l.block || '')}</td><td>${esc(l.name)}</td><td>${esc(l.kind)}</td><td>${F.shape(l.output_shape)}</td>
      <td>${F.count(l.params)}</td><td>${l.repeat > 1 ? `× ${l.repeat}` : ''}</td><td>${F.si(l.forward_flops)}</td><td>${F.si(l.backward_input_flops + l.backward_weight_flops)}</td><td>${F.gb(l.saved_activation_bytes)}</td></tr>`,
    )
    .join('');
  $('layer-table').innerHTML = `<table><caption class="visually-hidden">Layers with shapes, parameters and FLOPs for the whole batch</caption>
    <thead><tr><th scope="col">Block</th><th scope="col">Layer</th><th scope="col">Type</th><th scope="col">Output shape</th><th scope="col">Params</th><th scope="col">Repeat</th>
    <th scope="col">Fwd FLOPs</th><th scope="col">Bwd FLOPs</th><th scope="col">Saved act.</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function selectTab(name, focus = false) {
  for (const tab of ['zoo', 'layers', 'file']) {
    const button = $(`tab-${tab}`);
    const on = tab === name;
    button.setAttribute('aria-selected', String(on));
    button.tabIndex = on ? 0 : -1;
    $(`panel-${tab}`).hidden = !on;
    if (on && focus) button.focus();
  }
  if (name === 'layers') ensureEditor();
}

let editorLoading = null;
async function ensureEditor() {
  if (editor) return editor;
  editorLoading ??= (async () => {
    const [schema, ...examples] = await Promise.all(
      ['data/layers.schema.json', 'examples/mnist-mlp.json', 'examples/tiny-transformer.json'].map((u) => fetch(u).then((r) => r.json())),
    );
    editor = createLayersEditor($('layers-editor'), {
      schema,
      examples: { 'mnist-mlp': examples[0], 'tiny-transformer': examples[1] },
      onChange: (doc) => {
        update({ source: 'layers', doc, seq: null, image: null });
        $('model-in-use').innerHTML = `Using ${modelLabel()}`;
        syncUseNote();
      },
    });
    if (state.source === 'layers' && state.doc) editor.setDoc(state.doc);
    if (state.source === 'layers' && last.features) editor.annotate(last.features, last.featuresError);
    return editor;
  })();
  return editorLoading;
}

async function loadFile(file) {
  const status = $('file-status');
  status.className = 'file-status';
  const bad = (message) => {
    status.className = 'file-status bad';
    status.textContent = message;
  };
  if (!file) return;
  if (file.size > 5e6) return bad(`${file.name} is ${F.si(file.size, 'B')}; a model description is a small JSON file (under 5 MB).`);
  let doc;
  try {
    doc = JSON.parse(await file.text());
  } catch (error) {
    return bad(`${file.name} is not valid JSON (${error.message}). Expected a Hugging Face config.json or a layers JSON document.`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return bad(`${file.name} is not a model description: expected a JSON object, a Hugging Face config.json (with "model_type") or a layers JSON document (with "layers").`);
  status.textContent = `Reading ${file.name}…`;
  const reply = await features(state, doc);
  if (reply.error) return bad(`${file.name} could not be used: ${reply.error}`);
  const kind = doc.model_type ? `a Hugging Face config (${doc.model_type})` : 'a layers JSON document';
  status.className = 'file-status good';
  status.innerHTML = `Using <strong>${esc(file.name)}</strong>: ${esc(kind)}, ${F.count(reply.params)} parameters.
    ${doc.layers ? '<button type="button" class="small" id="edit-upload">Edit in the layer editor</button>' : ''}`;
  update({ source: 'file', doc, docName: file.name, seq: null, image: null }, 'now');
}

// ---- training panel -------------------------------------------------------------------------------------

function zooEntry() {
  return state.source === 'zoo' ? meta.zooById.get(state.model) : null;
}

function languageModel() {
  const z = zooEntry();
  if (z) return z.default_seq != null;
  if (last.features?.settings) return last.features.settings.seq != null;
  return state.doc ? Boolean(state.doc.input?.tokens != null || (state.doc.model_type && state.doc.model_type !== 'vit')) : true;
}

function syncSizeFields() {
  const z = zooEntry();
  const f = last.features?.settings;
  const language = languageModel();
  const vision = z ? z.default_image != null : f ? f.image != null : false;
  $('seq-field').hidden = !language;
  $('image-field').hidden = !vision || language;
  $('seq').placeholder = String(z?.default_seq ?? f?.seq ?? '');
  $('image').placeholder = String(z?.default_image ?? f?.image ?? '');
  const tokens = language && (state.tokens != null || state.samples == null);
  $('budget-kind').querySelector('option[value=tokens]').disabled = !language;
  $('budget-kind').value = tokens ? 'tokens' : 'samples';
  $('tokens-field').hidden = !tokens;
  $('samples-field').hidden = tokens;
  $('epochs-field').hidden = tokens;
  $('tokens').placeholder = String(S.DEFAULT_TOKENS);
  $('samples').placeholder = String(S.DEFAULT_SAMPLES);
  $('epochs').placeholder = '1';
}

function syncInputs() {
  const set = (id, v) => {
    const el = $(id);
    if (document.activeElement !== el) el.value = v ?? '';
    el.removeAttribute('aria-invalid');
  };
  set('batch', state.batch);
  set('seq', state.seq);
  set('image', state.image);
  set('precision', state.precision);
  set('optimizer', state.optimizer);
  set('tokens', state.tokens);
  set('samples', state.samples);
  set('epochs', state.epochs);
  set('grad_accum', state.grad_accum);
  set('optimizer_impl', state.optimizer_impl);
  set('mixed', state.mixed);
  set('input_samples_per_s', state.input_samples_per_s);
  set('price_per_hour', state.price_per_hour);
  $('checkpointing').checked = state.checkpointing;
  syncSizeFields();
  renderZoo();
  renderHardware();
  renderCustomList();
  selectTab(state.source);
  syncUseNote();
  if (state.source === 'layers' && editor && state.doc) editor.setDoc(state.doc);
  $('model-in-use').innerHTML = `Using ${modelLabel()}`;
}

/** Reads a positive number field; marks it invalid (and returns undefined) when it is not one. */
function readNumber(el, { integer = true, optional = true, zero = false } = {}) {
  const text = el.value.trim();
  if (text === '') {
    el.setAttribute('aria-invalid', String(!optional));
    return optional ? null : undefined;
  }
  const v = Number(text);
  const ok = Number.isFinite(v) && (v > 0 || (zero && v === 0)) && (!integer || Number.isInteger(v));
  el.setAttribute('aria-invalid', String(!ok));
  return ok ? v : undefined;
}

function bindTraining() {
  const numbers = {
    batch: { optional: false },
    seq: {},
    image: {},
    tokens: { integer: false },
    samples: {},
    epochs: { integer: false },
    grad_accum: {},
    input_samples_per_s: { integer: false },
    price_per_hour: { integer: false, zero: true },
  };
  for (const [id, options] of Object.entries(numbers))
    $(id).addEventListener('input', (event) => {
      const v = readNumber(event.target, options);
      if (v !== undefined) update({ [id]: v });
    });
  for (const id of ['precision', 'optimizer', 'optimizer_impl', 'mixed']) $(id).addEventListener('change', (e) => update({ [id]: e.target.value }, 'now'));
  $('checkpointing').addEventListener('change', (e) => update({ checkpointing: e.target.checked }, 'now'));
  $('budget-kind').addEventListener('change', (e) => {
    if (e.target.value === 'tokens') update({ tokens: S.DEFAULT_TOKENS, samples: null, epochs: null }, 'now');
    else update({ tokens: null, samples: S.DEFAULT_SAMPLES, epochs: 1 }, 'now');
    syncInputs();
  });
  $('train-form').addEventListener('submit', (e) => e.preventDefault());
}

// ---- hardware panel -------------------------------------------------------------------------------------

function hardwareFilters() {
  return {
    query: $('hw-search').value.trim().toLowerCase(),
    vendor: $('hw-vendor').value,
    memory: Number($('hw-memory').value),
    since: Number($('hw-since').value || 0),
  };
}

function visibleHardware() {
  const f = hardwareFilters();
  return meta.hardware.filter(
    (h) =>
      (!f.vendor || h.vendor === f.vendor) &&
      h.memory_gb >= f.memory &&
      (!f.since || Number(String(h.launch_date).slice(0, 4)) >= f.since) &&
      (!f.query || `${h.id} ${h.name} ${String(h.architecture).replace(/\(.*\)/, '')}`.toLowerCase().includes(f.query)),
  );
}

const isSelected = (id) => state.hw == null || state.hw.includes(id);

function renderHardware() {
  if (!meta.hardware.length) return;
  const shown = visibleHardware();
  $('hw-list').innerHTML =
    shown
      .map((h) => {
        const edited = Object.hasOwn(state.prices, h.id);
        const price = edited ? state.prices[h.id] : h.price_per_hour > 0 ? h.price_per_hour : '';
        return `<div class="hw-item">
        <label><input type="checkbox" data-hw="${esc(h.id)}" ${isSelected(h.id) ? 'checked' : ''} />
        <span class="hw-name">${esc(h.name)}</span>
        <span class="hw-meta">${esc(h.vendor)} · ${esc(h.architecture)} · ${F.num(h.memory_gb)} GB · ${esc(String(h.launch_date).slice(0, 4))}</span></label>
        <span class="price"><label class="visually-hidden" for="price-${esc(h.id)}">Price of ${esc(h.name)} in US dollars per hour</label>$<input type="number" min="0" step="0.01" id="price-${esc(h.id)}" data-price="${esc(h.id)}" value="${price}" placeholder="?" class="${edited ? 'edited' : ''}" title="${edited ? 'edited; clear to restore the catalogue price' : 'lowest cloud price on file, USD per hour'}" />/h</span>
      </div>`;
      })
      .join('') || '<p class="zoo-empty">No accelerator matches these filters.</p>';
  const total = meta.hardware.length;
  const selected = state.hw == null ? total : state.hw.length;
  $('hw-count').textContent = `${selected} of ${total} selected${state.custom.length ? ` + ${state.custom.length} custom` : ''}${shown.length < total ? ` · ${shown.length} shown` : ''}`;
}

function setSelection(ids) {
  const all = meta.hardware.map((h) => h.id);
  const set = new Set(ids);
  update({ hw: all.every((id) => set.has(id)) ? null : all.filter((id) => set.has(id)) }, 'compute');
  renderHardware();
}

function bindHardware() {
  for (const id of ['hw-search', 'hw-vendor', 'hw-memory', 'hw-since']) $(id).addEventListener('input', renderHardware);
  $('hw-list').addEventListener('change', (e) => {
    const id = e.target.dataset.hw;
    if (!id) return;
    const current = state.hw ?? meta.hardware.map((h) => h.id);
    setSelection(e.target.checked ? [...current, id] : current.filter((x) => x !== id));
  });
  $('hw-list').addEventListener('input', (e) => {
    const id = e.target.dataset.price;
    if (!id) return;
    const prices = { ...state.prices };
    const text = e.target.value.trim();
    const v = Number(text);
    if (text === '') delete prices[id];
    else if (!(Number.isFinite(v) && v >= 0)) return e.target.setAttribute('aria-invalid', 'true');
    else prices[id] = v;
    e.target.removeAttribute('aria-invalid');
    e.target.classList.toggle('edited', Object.hasOwn(prices, id));
    update({ prices }, 'render');
  });
  $('hw-list').addEventListener('focusout', (e) => {
    if (e.target.dataset.price && !Object.hasOwn(state.prices, e.target.dataset.price)) renderHardware();
  });
  const shownIds = () => visibleHardware().map((h) => h.id);
  $('hw-select-shown').addEventListener('click', () => setSelection([...(state.hw ?? meta.hardware.map((h) => h.id)), ...shownIds()]));
  $('hw-clear-shown').addEventListener('click', () => {
    const hide = new Set(shownIds());
    setSelection((state.hw ?? meta.hardware.map((h) => h.id)).filter((id) => !hide.has(id)));
  });
  $('hw-all').addEventListener('click', () => {
    for (const id of ['hw-search']) $(id).value = '';
    for (const id of ['hw-vendor', 'hw-memory', 'hw-since']) $(id).selectedIndex = 0;
    setSelection(meta.hardware.map((h) => h.id));
  });
}

// Custom accelerators: a spec sheet with plain numbers, as the API accepts it.
const CUSTOM_FIELDS = ['c-name', 'c-fp32', 'c-bf16', 'c-mem', 'c-bw', 'c-sms', 'c-clock', 'c-l2', 'c-tdp', 'c-price'];
let editingCustom = null;

function sheetFromForm() {
  const v = (id) => {
    const t = $(id).value.trim();
    return t === '' ? null : Number(t);
  };
  const name = $('c-name').value.trim();
  const errors = [];
  for (const id of CUSTOM_FIELDS) $(id).removeAttribute('aria-invalid');
  const invalid = (id, message) => {
    $(id).setAttribute('aria-invalid', 'true');
    errors.push(message);
  };
  if (!name) invalid('c-name', 'a name');
  for (const id of CUSTOM_FIELDS.slice(1)) if (v(id) != null && !(v(id) >= 0)) invalid(id, `${$(id).labels[0].querySelector('span').textContent.trim()}: a positive number`);
  if (!(v('c-mem') > 0)) invalid('c-mem', 'memory in GB');
  if (!(v('c-bw') > 0)) invalid('c-bw', 'bandwidth in GB/s');
  if (!(v('c-fp32') > 0) && !(v('c-bf16') > 0)) {
    invalid('c-fp32', 'FP32 or BF16 TFLOPS');
    $('c-bf16').setAttribute('aria-invalid', 'true');
  }
  if (errors.length) return { errors };
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'gpu';
  const taken = new Set([...meta.hardware.map((h) => h.id), ...state.custom.filter((c) => c !== editingCustom).map((c) => c.id)]);
  let id = `custom-${slug}`;
  for (let i = 2; taken.has(id); i++) id = `custom-${slug}-${i}`;
  const peaks = {};
  if (v('c-fp32') > 0) peaks.fp32 = v('c-fp32');
  if (v('c-bf16') > 0) Object.assign(peaks, { bf16: v('c-bf16'), fp16: v('c-bf16') });
  const sheet = { id, name, vendor: 'custom', kind: 'gpu', peak_tflops: peaks, memory: { capacity_gb: v('c-mem'), bandwidth_gbps: v('c-bw') } };
  const compute = {};
  if (v('c-sms') > 0) compute.compute_units = v('c-sms');
  if (v('c-clock') > 0) compute.boost_clock_mhz = v('c-clock');
  if (v('c-l2') > 0) compute.l2_cache_mb = v('c-l2');
  if (Object.keys(compute).length) sheet.compute = compute;
  if (v('c-tdp') > 0) sheet.power = { tdp_w: v('c-tdp') };
  if (v('c-price') > 0) sheet.prices = { cloud: [{ usd_per_hour: v('c-price'), provider: 'entered on this page' }] };
  return { sheet };
}

function fillForm(sheet) {
  const put = (id, value) => ($(id).value = value ?? '');
  put('c-name', sheet?.name);
  put('c-fp32', sheet?.peak_tflops?.fp32);
  put('c-bf16', sheet?.peak_tflops?.bf16 ?? sheet?.peak_tflops?.fp16);
  put('c-mem', sheet?.memory?.capacity_gb);
  put('c-bw', sheet?.memory?.bandwidth_gbps);
  put('c-sms', sheet?.compute?.compute_units);
  put('c-clock', sheet?.compute?.boost_clock_mhz);
  put('c-l2', sheet?.compute?.l2_cache_mb);
  put('c-tdp', sheet?.power?.tdp_w);
  put('c-price', sheet?.prices?.cloud?.[0]?.usd_per_hour);
}

function saveCustom(list) {
  try {
    localStorage.setItem(CUSTOM_KEY, JSON.stringify(list));
  } catch {
    /* storage full or disabled: the sheets still live in the URL */
  }
}

function renderCustomList() {
  $('custom-list').innerHTML = state.custom
    .map(
      (c, i) => `<li><span><strong>${esc(c.name)}</strong> · ${F.num(c.memory?.capacity_gb)} GB · ${F.num(c.memory?.bandwidth_gbps)} GB/s</span>
      <button type="button" class="small" data-edit-custom="${i}">Edit</button>
      <button type="button" class="small" data-remove-custom="${i}" aria-label="Remove ${esc(c.name)}">Remove</button></li>`,
    )
    .join('');
}

function bindCustom() {
  $('custom-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const { sheet, errors } = sheetFromForm();
    if (errors) {
      $('c-error').textContent = `Please give ${errors.join(', ')}.`;
      return;
    }
    $('c-error').textContent = '';
    const custom = editingCustom ? state.custom.map((c) => (c === editingCustom ? sheet : c)) : [...state.custom, sheet];
    editingCustom = null;
    $('c-save').textContent = 'Add accelerator';
    $('c-cancel').hidden = true;
    fillForm(null);
    saveCustom(custom);
    update({ custom }, 'now');
    renderCustomList();
    renderHardware();
  });
  $('c-cancel').addEventListener('click', () => {
    editingCustom = null;
    fillForm(null);
    $('c-save').textContent = 'Add accelerator';
    $('c-cancel').hidden = true;
  });
  $('custom-list').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.removeCustom !== undefined) {
      const custom = state.custom.filter((_, i) => i !== Number(b.dataset.removeCustom));
      saveCustom(custom);
      update({ custom }, 'now');
      renderCustomList();
      renderHardware();
    } else if (b.dataset.editCustom !== undefined) {
      editingCustom = state.custom[Number(b.dataset.editCustom)];
      fillForm(editingCustom);
      $('c-save').textContent = 'Save changes';
      $('c-cancel').hidden = false;
      $('c-name').focus();
    }
  });
}

// ---- results --------------------------------------------------------------------------------------------

function showError(message) {
  $('error').hidden = !message;
  $('error').textContent = message ?? '';
}

let chartModule = null;
// A request error that names one of the training fields ("'seq' must be ...") marks that field.
const REQUEST_FIELDS = ['batch', 'seq', 'image', 'grad_accum', 'tokens', 'samples', 'epochs', 'input_samples_per_s', 'price_per_hour', 'optimizer_impl', 'optimizer', 'precision'];
function markRequestFields(error) {
  for (const key of REQUEST_FIELDS) {
    const el = $(key);
    const named = Boolean(error) && new RegExp(`'${key}'|--${key.replace(/_/g, '-')}\\b`).test(error);
    if (named) el.setAttribute('aria-invalid', 'true');
    else if (el.getAttribute('aria-invalid') === 'true' && el.dataset.markedByApi) el.removeAttribute('aria-invalid');
    el.dataset.markedByApi = named ? '1' : '';
  }
}

function renderResults() {
  const reply = last.predict;
  markRequestFields(last.predictError);
  if (last.predictError) {
    const nothing = /no hardware selected/.test(last.predictError);
    showError(nothing ? 'No accelerator selected: tick at least one in “Accelerators”, or describe your own.' : last.predictError);
    if (nothing) {
      $('results-table').innerHTML = '';
      $('verdict').innerHTML = '';
    }
    return;
  }
  showError(last.featuresError ? 'The model has an error (see “Model”); these results are for the last valid model.' : null);
  if (!reply) return;
  const rows = buildRows(reply, { hardware: meta.hardwareById, customs: last.request?.custom_hardware ?? [], prices: state.prices, request: last.request });
  const sorted = sortRows(rows, state.sort, state.dir);
  const pick = pickBest(rows);
  if (!state.sel || !rows.some((r) => r.id === state.sel)) state.selAuto = pick.best?.id ?? sorted[0]?.id;
  const selected = rows.some((r) => r.id === state.sel) ? state.sel : state.selAuto;
  last.rows = sorted;
  renderTable($('results-table'), sorted, { sort: state.sort, dir: state.dir, selected, best: pick.best, fastest: pick.fastest, language: last.language });
  $('verdict').innerHTML = verdictHtml(rows, pick);
  $('assumptions').innerHTML = assumptionsHtml(reply, last.request, rows);
  renderBreakdown(sorted, selected);
  renderExtraNote();
  updateShare();
  // The chart follows the table a frame later, so the numbers are on screen first.
  if (chartModule) {
    cancelAnimationFrame(chartFrame);
    chartFrame = requestAnimationFrame(() => chartModule.drawChart($('chart'), last.rows));
  }
}
let chartFrame = 0;

function renderBreakdown(rows, selected) {
  const sel = $('sel');
  sel.innerHTML = rows.map((r) => `<option value="${esc(r.id)}" ${r.id === selected ? 'selected' : ''}>${esc(r.name)}</option>`).join('');
  $('breakdown').innerHTML = breakdownHtml(rows.find((r) => r.id === selected));
  if (selected) loadLayers(selected);
}

// Per-layer times for the selected accelerator only: one more request of the same settings for that
// accelerator with `breakdown`, so the table's request stays small. A newer selection or result wins.
let layersJob = 0;
const layersCache = new Map();
async function loadLayers(selected) {
  const base = last.request;
  if (!base) return;
  const custom = (base.custom_hardware ?? []).find((sheet) => sheet.id === selected);
  const request = { ...base, breakdown: true, hardware: custom ? [] : [selected] };
  if (custom) request.custom_hardware = [custom];
  else delete request.custom_hardware;
  const key = JSON.stringify(request);
  const job = ++layersJob;
  try {
    if (!layersCache.has(key)) {
      const { doc } = await client.call(request);
      if (doc.error) throw new Error(doc.error);
      if (layersCache.size > 20) layersCache.clear();
      layersCache.set(key, doc.results?.[0]?.step);
    }
    if (job !== layersJob) return;
    const target = $('layer-breakdown');
    if (target) target.innerHTML = layersHtml(layersCache.get(key));
  } catch (e) {
    const target = $('layer-breakdown');
    if (job === layersJob && target) target.innerHTML = `<p class="hint">Per-layer times unavailable: ${esc(String(e.message ?? e))}</p>`;
  }
}

function renderExtraNote() {
  const unsupported = S.EXTRA_OPTIONS.filter((k) => !last.supported.has(k));
  const note = $('extra-note');
  note.hidden = !unsupported.length || !last.predict;
  note.textContent = unsupported.length
    ? `This build of the calculator does not apply ${unsupported.map((k) => k.replace(/_/g, ' ')).join(', ')} yet: they are sent with each request and take effect once it does.`
    : '';
}

function bindResults() {
  $('results-table').addEventListener('click', (e) => {
    const sort = e.target.closest('[data-sort]');
    if (sort) {
      const key = sort.dataset.sort;
      const col = COLUMNS.find((c) => c.key === key);
      update({ sort: key, dir: state.sort === key ? -state.dir : col.dir }, 'render');
      document.querySelector(`#results-table [data-sort="${key}"]`)?.focus();
      return;
    }
    const pick = e.target.closest('[data-pick]');
    if (pick) {
      update({ sel: pick.dataset.pick }, 'render');
      document.querySelector(`#results-table [data-pick="${CSS.escape(pick.dataset.pick)}"]`)?.focus();
    }
  });
  $('sel').addEventListener('change', (e) => update({ sel: e.target.value }, 'render'));
}

// ---- share ----------------------------------------------------------------------------------------------

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 2000);
}

function flash(text) {
  $('share-status').textContent = text;
  setTimeout(() => ($('share-status').textContent = ''), 2500);
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function updateShare() {
  const language = last.language;
  $('cli').textContent = S.commandLine(state, language, last.supported);
  const files = [];
  if (state.source !== 'zoo' && state.doc) files.push(`<button type="button" class="small" data-save-model>${esc(S.modelFile(state))}</button>`);
  for (const [i, c] of state.custom.entries()) files.push(`<button type="button" class="small" data-save-sheet="${i}">${esc(S.sheetFile(c))}</button>`);
  const edited = Object.keys(state.prices).length;
  $('cli-files').innerHTML = [
    files.length ? `Save next to where you run it: ${files.join(' ')}` : '',
    edited ? 'Prices edited on this page are not part of the command: its costs use the catalogue prices.' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const w = new URLSearchParams();
  if (state.source === 'zoo') w.set('model', state.model);
  if (state.hw) w.set('hardware', state.hw.slice(0, 8).join(','));
  w.set('batch', state.batch);
  w.set('precision', state.precision);
  $('widget-link').href = `widget.html?${w}`;
}

function bindShare() {
  $('copy-link').addEventListener('click', async () => {
    writeHash.now();
    await new Promise((r) => setTimeout(r, 50));
    flash((await copyText(location.href)) ? 'Link copied.' : 'Copy the address bar: it holds the whole state.');
  });
  $('copy-cli').addEventListener('click', async () => flash((await copyText($('cli').textContent)) ? 'Command copied.' : 'Select the command to copy it.'));
  $('download-csv').addEventListener('click', () => last.predict && download('prenet-results.csv', toCsv(last.rows, last.predict), 'text/csv'));
  $('download-json').addEventListener('click', () => {
    if (!last.predict) return;
    const doc = { request: last.request, reply: last.predict, page: { prices: state.prices, url: location.href } };
    download('prenet-results.json', `${JSON.stringify(doc, null, 2)}\n`, 'application/json');
  });
  $('cli-files').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.saveModel !== undefined) download(S.modelFile(state), `${JSON.stringify(state.doc, null, 2)}\n`, 'application/json');
    if (b.dataset.saveSheet !== undefined) {
      const sheet = state.custom[Number(b.dataset.saveSheet)];
      download(S.sheetFile(sheet), `${JSON.stringify(sheet, null, 2)}\n`, 'application/json');
    }
  });
}

// ---- model inputs ---------------------------------------------------------------------------------------

function bindModel() {
  const tabs = ['zoo', 'layers', 'file'];
  for (const tab of tabs) {
    $(`tab-${tab}`).addEventListener('click', () => selectTab(tab));
    $(`tab-${tab}`).addEventListener('keydown', (e) => {
      const i = tabs.indexOf(tab);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      selectTab(tabs[(next + tabs.length) % tabs.length], true);
    });
  }
  $('zoo-search').addEventListener('input', renderZoo);
  $('zoo-list').addEventListener('change', (e) => {
    if (e.target.name !== 'zoo') return;
    update({ source: 'zoo', model: e.target.value, seq: null, image: null, doc: null, docName: '' }, 'now');
    syncInputs();
    $('zoo-list').querySelector(`input[value="${CSS.escape(e.target.value)}"]`)?.focus();
  });
  $('file-input').addEventListener('change', (e) => {
    loadFile(e.target.files[0]);
    e.target.value = '';
  });
  const drop = $('drop');
  for (const type of ['dragenter', 'dragover'])
    drop.addEventListener(type, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    loadFile(e.dataTransfer.files[0]);
  });
  // Dropping a file anywhere on the page uses it too (instead of the browser opening it).
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    if (drop.contains(e.target)) return;
    e.preventDefault();
    if (e.dataTransfer?.files?.[0]) {
      selectTab('file');
      loadFile(e.dataTransfer.files[0]);
    }
  });
  $('file-status').addEventListener('click', async (e) => {
    if (e.target.id !== 'edit-upload') return;
    const ed = await ensureEditor();
    ed.setDoc(state.doc);
    selectTab('layers', true);
    update({ source: 'layers', doc: ed.getDoc() }, 'now');
  });
  $('layer-table-box').addEventListener('toggle', renderLayerTable);
  $('layers-use').addEventListener('click', async () => {
    const ed = await ensureEditor();
    update({ source: 'layers', doc: ed.getDoc(), seq: null, image: null }, 'now');
    syncInputs();
    $('layers-editor').querySelector('select, input')?.focus();
  });
}

// ---- start ----------------------------------------------------------------------------------------------

function afterFirstResult() {
  import('./chart.js').then((m) => {
    chartModule = m;
    if (last.rows.length) m.drawChart($('chart'), last.rows);
  });
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

window.addEventListener('hashchange', async () => {
  const next = await S.fromHash(location.hash);
  if ((await S.toHash(next)) === (await S.toHash(state))) return;
  state = next;
  syncInputs();
  scheduleCompute.now();
});

async function start() {
  state = await S.fromHash(location.hash);
  if (!location.hash.includes('custom=')) {
    try {
      const saved = JSON.parse(localStorage.getItem(CUSTOM_KEY) ?? '[]');
      if (Array.isArray(saved) && saved.length) state.custom = saved;
    } catch {
      /* ignore */
    }
  }
  bindModel();
  bindTraining();
  bindHardware();
  bindCustom();
  bindResults();
  bindShare();
  syncInputs();
  scheduleCompute.now(); // the default prediction, queued behind the catalogue requests below
  try {
    const [zoo, hardware] = await Promise.all([client.call({ command: 'zoo' }), client.call({ command: 'hardware' })]);
    meta.zoo = zoo.doc.models ?? [];
    meta.zooById = new Map(meta.zoo.map((m) => [m.id, m]));
    meta.hardware = hardware.doc.hardware ?? [];
    meta.hardwareById = new Map(meta.hardware.map((h) => [h.id, h]));
  } catch (error) {
    showError(`The calculator could not start: ${error.message ?? error}`);
    $('model-in-use').textContent = 'The calculator could not start.';
    return;
  }
  const vendors = [...new Set(meta.hardware.map((h) => h.vendor))].sort();
  $('hw-vendor').innerHTML = `<option value="">all</option>${vendors.map((v) => `<option>${esc(v)}</option>`).join('')}`;
  const years = [...new Set(meta.hardware.map((h) => Number(String(h.launch_date).slice(0, 4))))].filter(Boolean).sort();
  $('hw-since').innerHTML = `<option value="">any year</option>${years.map((y) => `<option value="${y}">${y}</option>`).join('')}`;
  syncInputs();
  if (state.source === 'layers') ensureEditor();
  if (last.predict) renderResults();
}

// A hook for the tests and benchmarks (tests/browser, bench/): the worker client and the current results.
// settled(): the results on the page are those of the current inputs (no recompute pending).
window.prenet = {
  client,
  state: () => structuredClone(state),
  last: () => last,
  settled: () =>
    !$('busy').classList.contains('on') &&
    last.request != null &&
    JSON.stringify(S.predictRequest(state, last.language)) === JSON.stringify(last.request) &&
    !last.featuresError,
};

start();
