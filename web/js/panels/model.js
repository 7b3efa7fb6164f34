// Panel 1, the model: the zoo (searchable, by domain), the layer-by-layer editor, a dropped or chosen file,
// and the model's numbers (parameters, FLOPs, the per-layer table) from the `features` reply.
import * as F from '../format.js';
import { isDiffusersDoc, isOnnxDoc, readJson, toBase64, utf8 } from '../documents.js';
import { acceptFiles } from '../files.js';
import { llmDefaults } from '../results/assumptions.js';

const { esc } = F;
const TABS = ['zoo', 'layers', 'file'];

export const reads = ['source', 'model', 'doc', 'docName', '@meta', '@features'];

let editor = null;
let editorLoading = null;
let editorDoc = null; // the document the editor last reported: the state holding it needs no setDoc
let shownSource = null; // the tab follows the state's source only when the source changes
const zooShown = { zoo: null, source: null, model: null }; // what the zoo list was last built for

// What another model resets: its own sequence length and image size; a tokens budget (which a model
// without tokens cannot use; samples × epochs suits every model); and what the language-model preset set for the
// last model (llmDefaults: a global batch in tokens, which a diffusion UNet or a CNN cannot use), which the next
// language model's preset sets again for itself.
const newModel = (state) => ({
  seq: null,
  image: null,
  preset: '',
  ...(state.budget === 'tokens' ? { budget: '' } : {}),
  ...(state.preset === 'llm' ? { global_batch_tokens: null, global_batch: null } : {}),
  ...(state.encoders != null ? { encoders: null } : {}), // a diffusion pipeline's encoders: that model's alone
});

function renderZoo(state, { $, meta }) {
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

// What kind of model document the user uploaded, in words (the calculator decides the same way: importers/resolve.cpp).
const KERAS_CLASSES = ['Sequential', 'Functional', 'Model'];
function kerasModel(doc) {
  if (!doc || typeof doc !== 'object') return null;
  if (KERAS_CLASSES.includes(doc.class_name) && doc.config && typeof doc.config === 'object') return doc;
  return kerasModel(doc.modelTopology) ?? kerasModel(doc.model_config);
}
export function documentKind(doc) {
  if (isOnnxDoc(doc)) return { short: 'ONNX model', long: 'an ONNX model' };
  if (isDiffusersDoc(doc)) return { short: `diffusers ${doc._class_name}`, long: `a diffusers ${doc._class_name} config` };
  if (doc?.model_type) return { short: `Hugging Face config, ${doc.model_type}`, long: `a Hugging Face config (${doc.model_type})` };
  const keras = kerasModel(doc);
  // Keras's functional class is called Model: "a Keras Model" (not "a Keras Model model").
  if (keras) return { short: `Keras ${keras.class_name}`, long: keras.class_name === 'Model' ? 'a Keras Model' : `a Keras ${keras.class_name} model` };
  return { short: 'layers JSON', long: 'a layers JSON document' };
}

function modelLabel(state, { last }) {
  if (state.source === 'zoo') return `<strong>${esc(state.model)}</strong> from the zoo`;
  const name = state.doc?.name ?? last.features?.model ?? 'custom';
  if (state.source === 'layers') return `<strong>${esc(name)}</strong>, built layer by layer`;
  const kind = esc(documentKind(state.doc).short);
  return `<strong>${esc(state.docName || 'uploaded file')}</strong> (${kind})`;
}

// The per-layer table draws only the rows in view (plus a margin) between two spacer rows, so a model of
// 100,000 layers scrolls as one of ten: every row is there, the page never builds them all at once.
const ROW_PX = 28;
const WINDOW = 120;
let table = null; // what the table shows: {features, total, rows (the rows at hand), id (the worker's, for more)}

function layerRow(l, i) {
  if (!l) return `<tr aria-rowindex="${i + 2}"><td colspan="9" class="hint">…</td></tr>`;
  return `<tr aria-rowindex="${i + 2}"><td>${esc(l.block || '')}</td><td>${esc(l.name)}</td><td>${esc(l.kind)}</td><td>${F.shape(l.output_shape)}</td>
      <td>${F.count(l.params)}</td><td>${l.repeat > 1 ? `× ${l.repeat}` : ''}</td><td>${F.si(l.forward_flops)}</td><td>${F.si(l.backward_input_flops + l.backward_weight_flops)}</td><td>${F.gib(l.saved_activation_bytes)}</td></tr>`;
}

// A long model's rows stay in the worker (its features reply is tens of megabytes): the rows in view are
// asked for as the table scrolls, a page of them at a time.
const PAGE = 500;
function fetchRows(start, end, client, repaint) {
  const t = table;
  for (let p = Math.floor(start / PAGE) * PAGE; p < end; p += PAGE) {
    if (t.pages.has(p)) continue;
    t.pages.set(p, 'loading');
    client.layers(t.id, p, p + PAGE).then((rows) => {
      if (table !== t || !rows) return;
      rows.forEach((row, k) => (t.rows[p + k] = row));
      t.pages.set(p, 'done');
      repaint();
    });
  }
}

function paintLayerRows(wrap, client) {
  const t = table;
  const body = wrap.querySelector('tbody');
  if (!t || !body) return;
  const start = Math.max(0, Math.floor(wrap.scrollTop / ROW_PX) - 20);
  const end = Math.min(t.total, start + WINDOW);
  let missing = false;
  for (let i = start; i < end && !missing; i++) missing = !t.rows[i];
  if (missing && t.id) fetchRows(start, end, client, () => ((body.dataset.range = ''), paintLayerRows(wrap, client)));
  const range = `${start}-${end}${missing ? '-partial' : ''}`;
  if (body.dataset.range === range) return;
  body.dataset.range = range;
  const spacer = (n, which) => (n > 0 ? `<tr class="spacer" aria-hidden="true" data-spacer="${which}"><td colspan="9"></td></tr>` : '');
  const rows = [];
  for (let i = start; i < end; i++) rows.push(layerRow(t.rows[i], i));
  body.innerHTML = `${spacer(start, 'top')}${rows.join('')}${spacer(t.total - end, 'bottom')}`;
  const top = body.querySelector('[data-spacer=top]');
  const bottom = body.querySelector('[data-spacer=bottom]');
  if (top) top.style.height = `${start * ROW_PX}px`;
  if (bottom) bottom.style.height = `${(t.total - end) * ROW_PX}px`;
}

function renderLayerTable({ $, last, client }) {
  const box = $('layer-table-box');
  const f = last.features;
  if (!f?.layers) return;
  const n = f.layers_total ?? f.layers.length;
  box.querySelector('summary').textContent = `Per-layer table (${n.toLocaleString('en-US')} rows${f.layers.some((l) => l.repeat > 1) ? ', repeated blocks shown once' : ''})`;
  if (!box.open) return;
  const wrap = $('layer-table');
  if (table?.features === f && wrap.querySelector('tbody')) return paintLayerRows(wrap, client);
  table = { features: f, total: n, rows: [...f.layers], id: f.layers_id ?? null, pages: new Map() };
  wrap.innerHTML = `<table aria-rowcount="${n + 1}"><caption class="visually-hidden">Layers with shapes, parameters and FLOPs for the whole batch</caption>
    <thead><tr aria-rowindex="1"><th scope="col">Block</th><th scope="col">Layer</th><th scope="col">Type</th><th scope="col">Output shape</th><th scope="col">Params</th><th scope="col">Repeat</th>
    <th scope="col">Fwd FLOPs</th><th scope="col">Bwd FLOPs</th><th scope="col">Saved act.</th></tr></thead><tbody></tbody></table>`;
  $('layer-table-note').textContent = n > WINDOW ? `All ${n.toLocaleString('en-US')} layers are in the table; only the rows in view are drawn as you scroll.` : '';
  wrap.scrollTop = 0;
  paintLayerRows(wrap, client);
}

export function render(state, ctx) {
  const { $, last } = ctx;
  $('model-in-use').innerHTML = `Using ${modelLabel(state, ctx)}`;
  $('layers-use-note').hidden = state.source === 'layers';
  if (state.source !== shownSource) {
    shownSource = state.source;
    selectTab(state.source, ctx);
  }
  // The zoo list is rebuilt only when what it shows changes (it is long; the search box rebuilds it too).
  if (zooShown.zoo !== ctx.meta.zoo || zooShown.source !== state.source || zooShown.model !== state.model) {
    Object.assign(zooShown, { zoo: ctx.meta.zoo, source: state.source, model: state.model });
    renderZoo(state, ctx);
  }
  if (state.source === 'layers' && editor && state.doc && state.doc !== editorDoc) editor.setDoc((editorDoc = state.doc));
  const box = $('model-summary');
  // An error of another field (a batch too large for the model) is marked at that field, not here.
  const error = last.featuresError && (last.featuresError.field ?? 'model') === 'model' ? last.featuresError : null;
  if (error) {
    box.innerHTML = `<p class="model-error" role="alert">${esc(error.message)}</p>`;
    // The layer editor marks the layer and attribute a model error names (its path and attr).
    editor?.annotate(null, state.source === 'layers' && error.field === 'model' ? error : null);
    return;
  }
  const f = last.features;
  if (!f) return;
  const batch = f.settings?.batch || 1;
  const perSample = (f.forward_flops + f.backward_flops) / batch;
  const stat = (label, value, title = '') => `<div class="stat" ${title ? `title="${esc(title)}"` : ''}><span class="label">${label}</span><span class="value">${value}</span></div>`;
  box.innerHTML = [
    stat('Parameters', F.count(f.params), `${F.integer(f.params)} parameters, ${F.integer(f.trainable_params ?? f.params)} of them trainable`),
    // Fine-tuning trains a part (LoRA: the adapters), the number PEFT's print_trainable_parameters shows first.
    F.isNum(f.trainable_params) && f.trainable_params !== f.params
      ? stat('Trainable', F.count(f.trainable_params), `${F.integer(f.trainable_params)} trainable parameters (${F.num((f.trainable_params / f.params) * 100)}% of ${F.integer(f.params)})`)
      : '',
    stat('Training FLOPs / sample', F.si(perSample), 'forward + backward, FLOPs = 2 × multiply-accumulates'),
    stat('Forward FLOPs / sample', F.si(f.forward_flops / batch)),
    f.settings?.seq != null ? stat('Tokens / sample', F.integer(f.settings.seq)) : f.settings?.image != null ? stat('Image', `${f.settings.image} px`) : '',
  ].join('') + unknownOps(f.unknown_ops);
  if (state.source === 'layers') editor?.annotate(f, null);
  renderLayerTable(ctx);
}

/** Shows one of the three tabs (the zoo, the editor, the file); the state's source changes only on use. */
export function selectTab(name, ctx, focus = false) {
  for (const tab of TABS) {
    const button = ctx.$(`tab-${tab}`);
    const on = tab === name;
    button.setAttribute('aria-selected', String(on));
    button.tabIndex = on ? 0 : -1;
    ctx.$(`panel-${tab}`).hidden = !on;
    if (on && focus) button.focus();
  }
  if (name === 'layers') ensureEditor(ctx);
}

async function ensureEditor(ctx) {
  if (editor) return editor;
  editorLoading ??= (async () => {
    // The editor's code loads with its data, when the tab is first opened: most visits never open it, and the
    // page's first load stays lighter (docs/performance.md).
    const [{ createLayersEditor }, schema, ...examples] = await Promise.all([
      import('../layers-editor.js'),
      ...['data/layers.schema.json', 'examples/mnist-mlp.json', 'examples/tiny-transformer.json'].map((u) => fetch(u).then((r) => r.json())),
    ]);
    editor = createLayersEditor(ctx.$('layers-editor'), {
      schema,
      examples: { 'mnist-mlp': examples[0], 'tiny-transformer': examples[1] },
      onChange: (doc) => ctx.update({ source: 'layers', doc: (editorDoc = doc), ...newModel(ctx.state) }),
    });
    const state = ctx.state;
    if (state.source === 'layers' && state.doc) editor.setDoc((editorDoc = state.doc));
    const error = ctx.last.featuresError;
    if (state.source === 'layers' && (ctx.last.features || error)) editor.annotate(error ? null : ctx.last.features, error?.field === 'model' ? error : null);
    return editor;
  })();
  return editorLoading;
}

// An imported graph's ops without a layer kind (the reply's unknown_ops): named, with their counts.
function unknownOps(ops) {
  if (!ops?.length) return '';
  const list = ops.map((o) => `<code>${esc(o.op)}</code> × ${F.integer(o.count)}`).join(', ');
  return `<p class="unknown-ops hint" role="note">Ops with no kind of their own, costed as memory-bound over their tensors: ${list}.</p>`;
}

// An ONNX file (binary): handed to the calculator base64-encoded ({onnx_base64}, docs/importers.md), within the
// API's own limit on its size.
async function loadOnnx(file, ctx, bad) {
  const status = ctx.$('file-status');
  const most = ctx.table.limits.onnx_bytes;
  if (file.size > most)
    return bad(`${file.name} is ${F.si(file.size, 'B')}, more than the limit of ${Math.round(most / 2 ** 20)} MiB on an ONNX file: export it with its weights as external data (only the .onnx file is needed).`);
  const doc = { onnx_base64: toBase64(await file.arrayBuffer()), name: file.name };
  status.textContent = `Checking ${file.name} (${F.si(file.size, 'B')}) in the calculator…`;
  const { reply, error } = await ctx.features({ ...ctx.state, seq: null, image: null, batch: null }, doc);
  if (error) return bad(`${file.name} could not be used: ${error.message}`);
  status.className = 'file-status good';
  const count = (reply.unknown_ops ?? []).reduce((n, o) => n + o.count, 0);
  const unknown = count
    ? `; ${F.integer(count)} op${count === 1 ? '' : 's'} with no kind of their own (${reply.unknown_ops.map((o) => esc(o.op)).join(', ')}), costed as memory-bound`
    : '';
  status.innerHTML = `Using <strong>${esc(file.name)}</strong>: an ONNX model, ${F.count(reply.params)} parameters${unknown}.`;
  ctx.update({ source: 'file', doc, docName: file.name, ...newModel(ctx.state) }, { compute: 'now' });
}

async function loadFile(file, ctx) {
  const status = ctx.$('file-status');
  status.className = 'file-status';
  const bad = (message) => {
    status.className = 'file-status bad';
    status.textContent = message;
  };
  if (!file) return;
  if (/\.onnx$/i.test(file.name)) return loadOnnx(file, ctx, bad);
  if (file.size > 5e6) return bad(`${file.name} is ${F.si(file.size, 'B')}; a model description is a small JSON file (under 5 MB).`);
  const text = utf8(await file.arrayBuffer());
  if (text == null) return bad(`${file.name} is not UTF-8 text. Expected a Hugging Face config.json, a Keras model.to_json() file, a layers JSON document or an .onnx file.`);
  const { value: doc, error: unreadable } = readJson(text, ctx.table.limits, file.name);
  if (unreadable) return bad(`${unreadable}. Expected a Hugging Face config.json, a Keras model.to_json() file, a layers JSON document or an .onnx file.`);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return bad(`${file.name} is not a model description: expected a JSON object, a Hugging Face config.json (with "model_type"), a Keras model.to_json() file (class_name Sequential or Functional) or a layers JSON document (with "layers").`);
  status.textContent = `Checking ${file.name} (${F.si(file.size, 'B')}) in the calculator…`;
  // The model's own sequence length and image size (not the last model's), for its defaults.
  const { reply, error } = await ctx.features({ ...ctx.state, seq: null, image: null, batch: null }, doc);
  if (error) return bad(`${file.name} could not be used: ${error.message}`);
  const kind = documentKind(doc).long;
  status.className = 'file-status good';
  // What the import left out or could not model (unknown Keras layers, a CLIP config's text tower): shown, never dropped.
  const notes = (reply.import_notes ?? []).map((n) => `<li>${esc(n)}</li>`).join('');
  const layers = reply.layers_total ?? reply.layers?.length;
  status.innerHTML = `Using <strong>${esc(file.name)}</strong>: ${esc(kind)}, ${F.count(reply.params)} parameters${layers > 1000 ? `, ${F.integer(layers)} layers (all of them computed)` : ''}.
    ${doc.layers ? '<button type="button" class="small" id="edit-upload">Edit in the layer editor</button>' : ''}
    ${notes ? `<ul class="import-notes" aria-label="Not modelled">${notes}</ul>` : ''}`;
  // A Hugging Face language model gets the page's defaults for one (named in "What this assumes").
  const language = doc.model_type && reply.settings?.seq != null && !doc.layers;
  const defaults = language ? llmDefaults(reply.settings.seq, ctx.table) : {};
  ctx.update({ source: 'file', doc, docName: file.name, ...newModel(ctx.state), ...defaults }, { compute: 'now' });
}

export function bind(ctx) {
  const { $ } = ctx;
  for (const tab of TABS) {
    $(`tab-${tab}`).addEventListener('click', () => selectTab(tab, ctx));
    $(`tab-${tab}`).addEventListener('keydown', (e) => {
      const i = TABS.indexOf(tab);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      selectTab(TABS[(next + TABS.length) % TABS.length], ctx, true);
    });
  }
  $('zoo-search').addEventListener('input', () => renderZoo(ctx.state, ctx));
  $('zoo-list').addEventListener('change', (e) => {
    if (e.target.name !== 'zoo') return;
    ctx.update({ source: 'zoo', model: e.target.value, doc: null, docName: '', ...newModel(ctx.state) }, { compute: 'now' });
    $('zoo-list').querySelector(`input[value="${CSS.escape(e.target.value)}"]`)?.focus();
  });
  acceptFiles($('file-input'), $('drop'), (file) => loadFile(file, ctx));
  // Dropping a file anywhere on the page uses it too (instead of the browser opening it).
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    // The model's drop zone, and the calibration's (panels/calibration.js), handle their own files.
    if ($('drop').contains(e.target) || e.target.closest?.('#cal-drop')) return;
    e.preventDefault();
    if (e.dataTransfer?.files?.[0]) {
      selectTab('file', ctx);
      loadFile(e.dataTransfer.files[0], ctx);
    }
  });
  $('file-status').addEventListener('click', async (e) => {
    if (e.target.id !== 'edit-upload') return;
    const ed = await ensureEditor(ctx);
    ed.setDoc(ctx.state.doc);
    selectTab('layers', ctx, true);
    ctx.update({ source: 'layers', doc: (editorDoc = ed.getDoc()) }, { compute: 'now' });
  });
  $('layer-table-box').addEventListener('toggle', () => renderLayerTable(ctx));
  let frame = 0;
  $('layer-table').addEventListener('scroll', () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => paintLayerRows($('layer-table'), ctx.client));
  });
  $('layers-use').addEventListener('click', async () => {
    const ed = await ensureEditor(ctx);
    ctx.update({ source: 'layers', doc: (editorDoc = ed.getDoc()), ...newModel(ctx.state) }, { compute: 'now' });
    $('layers-editor').querySelector('select, input')?.focus();
  });
}
