// The layer-by-layer form: a layers-JSON document (docs/layers-json.md) edited as a list of layers whose
// attribute fields come from the layers-JSON schema. Every edit calls onChange(doc) with a fresh copy; the
// page answers with the `features` reply (or the error), which annotate() shows beside each layer: its
// output shape and parameter count, or the error message on the layer it names.
import { count, esc, shape } from './format.js';

const GROUPS = new Set(['repeat', 'residual']);
const SKIP = new Set(['type', 'name', 'layers']);

// Values for required attributes of a newly added layer (anything missing here gets a generic default).
const STARTER = {
  linear: { out_features: 128 },
  conv1d: { out_channels: 64, kernel_size: 3 },
  conv2d: { out_channels: 64, kernel_size: 3, padding: 1 },
  conv3d: { out_channels: 64, kernel_size: 3 },
  conv_transpose2d: { out_channels: 64, kernel_size: 2, stride: 2 },
  maxpool2d: { kernel_size: 2 },
  avgpool2d: { kernel_size: 2 },
  groupnorm: { groups: 8 },
  reshape: { shape: [-1] },
  concat: { extra: 32 },
  squeeze_excitation: { squeeze_channels: 16 },
  embedding: { num_embeddings: 32000, embedding_dim: 512 },
  positional_embedding: { num_embeddings: 2048 },
  token_type_embedding: { num_embeddings: 2 },
  attention: { heads: 8, causal: true },
  mla_attention: { heads: 8, q_lora_rank: 384, kv_lora_rank: 128, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64 },
  relative_position_bias: { heads: 8 },
  mlp: { intermediate: 2048 },
  moe: { experts: 8, top_k: 2, intermediate: 1024 },
  rnn: { hidden: 256 },
  lstm: { hidden: 256 },
  gru: { hidden: 256 },
  matmul: { n: 64 },
  attention_core: { heads: 8 },
  memory_bound: { op: 'op', output_shape: [1, 128] },
  parameters: { count: 1000 },
  repeat: { count: 2, layers: [] },
  residual: { layers: [] },
};

export const BLANK_DOC = () => ({
  name: 'my-model',
  domain: 'language',
  input: { tokens: 512 },
  layers: [
    { type: 'embedding', name: 'embed', num_embeddings: 32000, embedding_dim: 512 },
    {
      type: 'repeat',
      name: 'blocks',
      count: 6,
      layers: [
        { type: 'residual', name: 'attn_block', layers: [{ type: 'layernorm', name: 'ln1' }, { type: 'attention', name: 'attn', heads: 8, causal: true }] },
        { type: 'residual', name: 'mlp_block', layers: [{ type: 'layernorm', name: 'ln2' }, { type: 'mlp', name: 'mlp', intermediate: 2048 }] },
      ],
    },
    { type: 'layernorm', name: 'final_norm' },
    { type: 'linear', name: 'lm_head', out_features: 32000, bias: false, tied: true },
    { type: 'cross_entropy', name: 'loss' },
  ],
});

/** Attribute descriptions per layer type from the layers-JSON schema. */
export function layerTypes(schema) {
  const types = {};
  const names = schema?.$defs?.layer?.properties?.type?.enum ?? [];
  for (const type of names) {
    const def = schema.$defs[type];
    if (!def) continue;
    const required = new Set(def.required ?? []);
    const fields = [];
    for (const [key, prop] of Object.entries(def.properties ?? {})) {
      if (SKIP.has(key)) continue;
      fields.push({ key, prop, required: required.has(key), kind: fieldKind(prop) });
    }
    types[type] = { description: def.description ?? '', fields };
  }
  return types;
}

function fieldKind(prop) {
  if (prop.enum) return 'enum';
  if (prop.type === 'boolean') return 'boolean';
  if (prop.type === 'integer') return 'integer';
  if (prop.type === 'number') return 'number';
  if (prop.type === 'array' || prop.oneOf) return 'list'; // an integer, a list of integers, or "same"
  return 'text';
}

function listText(value) {
  return Array.isArray(value) ? value.join(', ') : value == null ? '' : String(value);
}

function parseList(text) {
  const t = text.trim();
  if (t === '') return undefined;
  if (t === 'same') return 'same';
  const parts = t.split(/[\s,x×]+/).filter(Boolean).map(Number);
  if (parts.some((x) => !Number.isInteger(x))) return { invalid: true };
  return parts.length === 1 ? parts[0] : parts;
}

let uid = 0;

const svg = (path) => `<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">${path}</svg>`;
const ICON = {
  up: svg('<path fill="currentColor" d="M8 2l5.5 6H10v6H6V8H2.5z"/>'),
  down: svg('<path fill="currentColor" d="M8 14L2.5 8H6V2h4v6h3.5z"/>'),
  dup: svg('<path fill="none" stroke="currentColor" stroke-width="1.6" d="M5.5 5.5h8v8h-8zM2.5 10.5v-8h8"/>'),
  del: svg('<path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" d="M4 4l8 8M12 4l-8 8"/>'),
};

export function createLayersEditor(root, { schema, examples = {}, onChange }) {
  const types = layerTypes(schema);
  const typeNames = Object.keys(types);
  let doc = BLANK_DOC();
  const ids = new WeakMap(); // layer object -> row id, stable across renders
  const idOf = (layer) => {
    if (!ids.has(layer)) ids.set(layer, `le${++uid}`);
    return ids.get(layer);
  };

  const usedNames = () => {
    const names = new Set();
    walk(doc.layers, (l) => l.name && names.add(l.name));
    return names;
  };
  const freshName = (type) => {
    const names = usedNames();
    for (let i = 1; ; i++) if (!names.has(`${type}${i}`)) return `${type}${i}`;
  };
  // Every layer gets a name, so the features reply and the errors can be matched to their row.
  const nameAll = () => {
    const names = usedNames();
    const next = new Map(); // type -> the next number to try (so naming n layers is linear, not quadratic)
    walk(doc.layers, (l) => {
      if (l.name) return;
      let i = next.get(l.type) ?? 1;
      while (names.has(`${l.type}${i}`)) i++;
      next.set(l.type, i + 1);
      l.name = `${l.type}${i}`;
      names.add(l.name);
    });
  };

  const changed = () => onChange(structuredClone(doc));

  // ---- rendering ----
  function render(focusSelector = null) {
    const active = focusSelector ?? activeSelector();
    root.innerHTML = `
      <div class="le-head">
        <label class="field" for="le-model-name"><span>Model name</span><input id="le-model-name" value="${esc(doc.name ?? '')}" /></label>
        <label class="field" for="le-domain"><span>Domain</span><select id="le-domain">
          ${['language', 'vision', 'speech', 'custom'].map((d) => `<option ${doc.domain === d ? 'selected' : ''}>${d}</option>`).join('')}
        </select></label>
        <label class="field" for="le-input-kind"><span>Input</span><select id="le-input-kind">
          <option value="tokens" ${doc.input?.tokens != null ? 'selected' : ''}>tokens per sample</option>
          <option value="shape" ${doc.input?.shape ? 'selected' : ''}>tensor shape per sample</option>
        </select></label>
        <label class="field" for="le-input"><span>${doc.input?.shape ? 'Shape <small>e.g. 3, 224, 224</small>' : 'Tokens'}</span>
          <input id="le-input" value="${esc(doc.input?.shape ? doc.input.shape.join(', ') : doc.input?.tokens ?? '')}" inputmode="numeric" /></label>
      </div>
      <p class="le-error" id="le-doc-error" role="alert" hidden></p>
      <ol class="le-list" aria-label="Layers, in order">${doc.layers.map((l, i) => layerHtml(l, [i])).join('')}</ol>
      ${addHtml([])}
      <div class="le-toolbar">
        <label class="field inline" for="le-example"><span>Start from</span><select id="le-example">
          <option value="">choose…</option>
          <option value="blank">a small decoder (template)</option>
          ${Object.keys(examples).map((k) => `<option value="${esc(k)}">${esc(k)}</option>`).join('')}
        </select></label>
        <button type="button" class="small" id="le-download">Download JSON</button>
      </div>`;
    if (active) root.querySelector(active)?.focus();
  }

  function activeSelector() {
    const el = document.activeElement;
    if (!el || !root.contains(el)) return null;
    if (el.id) return `#${CSS.escape(el.id)}`;
    return null;
  }

  function addHtml(path) {
    const key = path.join('-') || 'root';
    return `<div class="le-add">
      <label class="visually-hidden" for="le-add-type-${key}">Type of the layer to add${path.length ? ' inside this group' : ''}</label>
      <select id="le-add-type-${key}" data-add-type="${path.join(',')}">
        ${typeNames.map((t) => `<option value="${t}" ${t === 'linear' ? 'selected' : ''}>${t}</option>`).join('')}
      </select>
      <button type="button" class="small" id="le-add-${key}" data-add="${path.join(',')}">+ Add layer${path.length ? ' inside' : ''}</button>
    </div>`;
  }

  function layerHtml(layer, path) {
    const id = idOf(layer);
    const spec = types[layer.type];
    const p = path.join(',');
    const label = esc(layer.name || layer.type);
    const fields = spec?.fields ?? [];
    const req = fields.filter((f) => f.required);
    const opt = fields.filter((f) => !f.required);
    const setOpt = opt.filter((f) => layer[f.key] !== undefined).length;
    const siblings = parentList(path).length;
    const last = path[path.length - 1];
    return `<li class="le-layer" id="${id}" data-path="${p}">
      <div class="le-top">
        <label class="visually-hidden" for="${id}-type">Type of layer ${label}</label>
        <select class="le-type" id="${id}-type" data-type="${p}" title="${esc(spec?.description ?? '')}">
          ${typeNames.map((t) => `<option ${t === layer.type ? 'selected' : ''}>${t}</option>`).join('')}
          ${spec ? '' : `<option selected>${esc(layer.type)}</option>`}
        </select>
        <label class="visually-hidden" for="${id}-name">Name of layer ${label}</label>
        <input class="le-name" id="${id}-name" data-name="${p}" value="${esc(layer.name ?? '')}" placeholder="name" />
        <span class="le-buttons">
          <button type="button" class="icon" id="${id}-up" data-move="${p}" data-dir="-1" ${last === 0 ? 'disabled' : ''} aria-label="Move ${label} up" title="Move up">${ICON.up}</button>
          <button type="button" class="icon" id="${id}-down" data-move="${p}" data-dir="1" ${last === siblings - 1 ? 'disabled' : ''} aria-label="Move ${label} down" title="Move down">${ICON.down}</button>
          <button type="button" class="icon" id="${id}-dup" data-dup="${p}" aria-label="Duplicate ${label}" title="Duplicate">${ICON.dup}</button>
          <button type="button" class="icon" id="${id}-del" data-del="${p}" aria-label="Remove ${label}" title="Remove">${ICON.del}</button>
        </span>
      </div>
      ${req.length ? `<div class="le-fields">${req.map((f) => fieldHtml(layer, f, id, p)).join('')}</div>` : ''}
      ${opt.length ? `<details class="le-more" ${setOpt ? 'open' : ''}><summary>Options (${opt.length}${setOpt ? `, ${setOpt} set` : ''})</summary>
        <div class="le-fields">${opt.map((f) => fieldHtml(layer, f, id, p)).join('')}</div></details>` : ''}
      ${GROUPS.has(layer.type) ? `<ol class="le-list" aria-label="Layers inside ${label}">${(layer.layers ?? []).map((l, i) => layerHtml(l, [...path, i])).join('')}</ol>${addHtml(path)}` : ''}
      <div class="le-out" id="${id}-out" aria-live="off"></div>
      <div class="le-error" id="${id}-error" role="alert" hidden></div>
    </li>`;
  }

  function fieldHtml(layer, f, id, p) {
    const fid = `${id}-f-${f.key}`;
    const v = layer[f.key];
    const def = f.prop.default;
    const title = esc(f.prop.description ?? '');
    const label = `<span>${esc(f.key)}${f.required ? ' <abbr title="required">*</abbr>' : ''}</span>`;
    const data = `data-field="${f.key}" data-path="${p}" data-kind="${f.kind}" id="${fid}" title="${title}"`;
    if (f.kind === 'enum' || f.kind === 'boolean') {
      const options = f.kind === 'enum' ? f.prop.enum : [true, false];
      const none = f.required ? '' : `<option value="" ${v === undefined ? 'selected' : ''}>default${def !== undefined ? ` (${esc(def)})` : ''}</option>`;
      return `<label class="field" for="${fid}">${label}<select ${data}>${none}${options
        .map((o) => `<option value="${esc(o)}" ${v === o ? 'selected' : ''}>${esc(o)}</option>`)
        .join('')}</select></label>`;
    }
    const placeholder = def !== undefined ? `placeholder="${esc(listText(def))}"` : '';
    const type = f.kind === 'integer' || f.kind === 'number' ? `type="number" step="${f.kind === 'integer' ? 1 : 'any'}"` : 'type="text"';
    return `<label class="field" for="${fid}">${label}<input ${type} ${data} ${placeholder} value="${esc(listText(v))}" ${f.required ? 'required' : ''} /></label>`;
  }

  // ---- paths ----
  function parentList(path) {
    let list = doc.layers;
    for (const i of path.slice(0, -1)) list = list[i].layers;
    return list;
  }
  const parsePath = (text) => (text === '' ? [] : text.split(',').map(Number));
  const layerAt = (path) => parentList(path)[path[path.length - 1]];

  // ---- events ----
  root.addEventListener('input', (event) => {
    const t = event.target;
    if (t.id === 'le-model-name') {
      doc.name = t.value;
      return changed();
    }
    if (t.id === 'le-input') {
      const parsed = parseList(t.value);
      const bad = parsed === undefined || parsed.invalid || (Array.isArray(parsed) ? parsed : [parsed]).some((x) => !(x >= 1));
      t.setAttribute('aria-invalid', bad ? 'true' : 'false');
      if (bad) return;
      doc.input = doc.input?.shape ? { shape: Array.isArray(parsed) ? parsed : [parsed] } : { tokens: Array.isArray(parsed) ? parsed[0] : parsed };
      return changed();
    }
    if (t.dataset.name !== undefined) {
      const layer = layerAt(parsePath(t.dataset.name));
      if (t.value) layer.name = t.value;
      else delete layer.name;
      return changed();
    }
    if (t.dataset.field && t.tagName === 'INPUT') {
      const layer = layerAt(parsePath(t.dataset.path));
      const key = t.dataset.field;
      let value;
      if (t.dataset.kind === 'list') value = parseList(t.value);
      else if (t.dataset.kind === 'text') value = t.value === '' ? undefined : t.value;
      else value = t.value === '' ? undefined : Number(t.value);
      if (value && value.invalid) {
        t.setAttribute('aria-invalid', 'true');
        return;
      }
      t.removeAttribute('aria-invalid');
      if (value === undefined) delete layer[key];
      else layer[key] = value;
      return changed();
    }
  });

  root.addEventListener('change', (event) => {
    const t = event.target;
    if (t.id === 'le-domain') {
      doc.domain = t.value;
      return changed();
    }
    if (t.id === 'le-input-kind') {
      doc.input = t.value === 'shape' ? { shape: [3, 224, 224] } : { tokens: 512 };
      render('#le-input-kind');
      return changed();
    }
    if (t.id === 'le-example') {
      const pick = t.value;
      if (!pick) return;
      const next = pick === 'blank' ? BLANK_DOC() : structuredClone(examples[pick]);
      delete next.$schema;
      setDoc(next);
      root.querySelector('#le-example')?.focus();
      return changed();
    }
    if (t.dataset.type !== undefined) {
      const path = parsePath(t.dataset.type);
      const old = layerAt(path);
      const next = { type: t.value, name: old.name ?? freshName(t.value), ...structuredClone(STARTER[t.value] ?? {}) };
      for (const f of types[t.value]?.fields ?? []) if (f.required && next[f.key] === undefined) next[f.key] = genericValue(f);
      if (GROUPS.has(t.value) && GROUPS.has(old.type)) next.layers = old.layers;
      parentList(path)[path[path.length - 1]] = next;
      render(`#${idOf(next)}-type`);
      return changed();
    }
    if (t.dataset.field && t.tagName === 'SELECT') {
      const layer = layerAt(parsePath(t.dataset.path));
      const key = t.dataset.field;
      if (t.value === '') delete layer[key];
      else layer[key] = t.dataset.kind === 'boolean' ? t.value === 'true' : t.value;
      return changed();
    }
  });

  root.addEventListener('click', (event) => {
    const b = event.target.closest('button');
    if (!b || !root.contains(b)) return;
    if (b.id === 'le-download') {
      const blob = new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: 'application/json' });
      const a = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: `${doc.name || 'model'}.json` });
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
      return;
    }
    if (b.dataset.add !== undefined) {
      const path = parsePath(b.dataset.add);
      const select = root.querySelector(`[data-add-type="${b.dataset.add}"]`);
      const type = select.value;
      const layer = { type, name: freshName(type), ...structuredClone(STARTER[type] ?? {}) };
      for (const f of types[type]?.fields ?? []) if (f.required && layer[f.key] === undefined) layer[f.key] = genericValue(f);
      const list = path.length ? layerAt(path).layers : doc.layers;
      list.push(layer);
      render(`#${idOf(layer)}-type`);
      return changed();
    }
    if (b.dataset.move !== undefined) {
      const path = parsePath(b.dataset.move);
      const list = parentList(path);
      const i = path[path.length - 1];
      const j = i + Number(b.dataset.dir);
      if (j < 0 || j >= list.length) return;
      [list[i], list[j]] = [list[j], list[i]];
      const moved = list[j];
      render('#none');
      const same = root.querySelector(`#${idOf(moved)}-${Number(b.dataset.dir) < 0 ? 'up' : 'down'}`);
      (same && !same.disabled ? same : root.querySelector(`#${idOf(moved)}-type`))?.focus();
      return changed();
    }
    if (b.dataset.dup !== undefined) {
      const path = parsePath(b.dataset.dup);
      const list = parentList(path);
      const copy = structuredClone(layerAt(path));
      const names = usedNames();
      walk([copy], (l) => {
        if (!l.name) return;
        let n = 2;
        const stem = l.name.replace(/_\d+$/, '');
        while (names.has(`${stem}_${n}`)) n++;
        l.name = `${stem}_${n}`;
        names.add(l.name);
      });
      list.splice(path[path.length - 1] + 1, 0, copy);
      render(`#${idOf(copy)}-type`);
      return changed();
    }
    if (b.dataset.del !== undefined) {
      const path = parsePath(b.dataset.del);
      const list = parentList(path);
      const i = path[path.length - 1];
      list.splice(i, 1);
      const next = list[Math.min(i, list.length - 1)];
      render(next ? `#${idOf(next)}-del` : '#le-add-root');
      return changed();
    }
  });

  function genericValue(f) {
    if (f.kind === 'enum') return f.prop.enum[0];
    if (f.kind === 'boolean') return false;
    if (f.kind === 'number') return 0.1;
    if (f.kind === 'text') return '';
    return 64;
  }

  // ---- annotations from the features reply ----
  function annotate(features, error) {
    root.querySelectorAll('.le-layer.invalid').forEach((el) => el.classList.remove('invalid'));
    root.querySelectorAll('.le-error').forEach((el) => {
      el.hidden = true;
      el.textContent = '';
    });
    root.querySelectorAll('[data-field][aria-invalid="true"]').forEach((el) => el.removeAttribute('aria-invalid'));
    const rows = features?.layers ?? [];
    const byName = new Map();
    for (const row of rows) if (!byName.has(row.name)) byName.set(row.name, row);
    walk(doc.layers, (layer) => {
      const out = document.getElementById(`${idOf(layer)}-out`);
      if (!out) return;
      if (error || !features) {
        out.textContent = '';
        return;
      }
      if (GROUPS.has(layer.type)) {
        // A repeat's total counts every repetition; a residual's is one instance of its branch.
        let params = 0;
        let found = false;
        walk(layer.layers, (child) => {
          const row = GROUPS.has(child.type) ? null : byName.get(child.name);
          if (!row) return;
          found = true;
          params += row.params * (layer.type === 'repeat' ? row.repeat : 1);
        });
        out.innerHTML = found ? `${layer.type === 'repeat' ? `× ${esc(layer.count)} · ` : ''}<strong>${count(params)}</strong> params${layer.type === 'repeat' ? ' in total' : ''}` : '';
        return;
      }
      const row = byName.get(layer.name);
      out.innerHTML = row
        ? `→ <strong>${shape(row.output_shape)}</strong> · ${count(row.params)} params${row.repeat > 1 ? ` × ${row.repeat}` : ''}`
        : '';
    });
    const docError = root.querySelector('#le-doc-error');
    if (!error) return;
    const target = errorTarget(error);
    if (target) {
      const li = document.getElementById(idOf(target.layer));
      li?.classList.add('invalid');
      const box = document.getElementById(`${idOf(target.layer)}-error`);
      if (box) {
        box.hidden = false;
        box.textContent = error.message;
      }
      if (target.field) root.querySelector(`#${idOf(target.layer)}-f-${CSS.escape(target.field)}`)?.setAttribute('aria-invalid', 'true');
    } else if (docError) {
      docError.hidden = false;
      docError.textContent = error.message;
    }
  }

  /** The layer and attribute an API error names ({path: "layers[1][0]", attr: "out_features"}), or null. */
  function errorTarget(error) {
    if (!error?.path) return null;
    let list = doc.layers;
    let layer = null;
    for (const m of error.path.matchAll(/\[(\d+)\]/g)) {
      layer = list?.[Number(m[1])] ?? null;
      list = layer?.layers;
      if (!layer) return null;
    }
    return layer ? { layer, field: error.attr ?? null } : null;
  }

  // A model longer than EDITOR_LIMIT layers is not edited here (each layer is a row of fields): the editor
  // says so; the model itself is computed in full wherever it came from.
  let tooLong = 0;
  function setDoc(next) {
    const n = countLayers(next?.layers);
    if (n > EDITOR_LIMIT) {
      tooLong = n;
      doc = next;
      root.innerHTML = `<p class="le-error" role="status">This model has ${n.toLocaleString('en-US')} layers; the layer-by-layer editor shows models of up to ${EDITOR_LIMIT.toLocaleString('en-US')}. Its numbers are computed in full; to change it, edit the file (a <code>repeat</code> group describes repeated blocks in one entry) and upload it again.</p>`;
      return;
    }
    tooLong = 0;
    doc = structuredClone(next);
    if (!Array.isArray(doc.layers)) doc.layers = [];
    if (!doc.input) doc.input = { tokens: 512 };
    nameAll();
    render();
  }

  setDoc(doc);
  return {
    setDoc,
    getDoc: () => (tooLong ? doc : structuredClone(doc)),
    annotate: (features, error) => (tooLong ? undefined : annotate(features, error)),
    errorTarget,
    tooLong: () => tooLong,
  };
}

/** The most layers the editor shows (every group and its members counted). */
export const EDITOR_LIMIT = 2000;

export function countLayers(list) {
  let n = 0;
  walk(list, () => n++);
  return n;
}

function walk(list, fn) {
  for (const layer of list ?? []) {
    fn(layer);
    if (Array.isArray(layer.layers)) walk(layer.layers, fn);
  }
}
