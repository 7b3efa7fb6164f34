// The editor's HTML: the document's header fields, a row per layer (type, name, move / duplicate / remove,
// its attribute fields, its members for a group) and the toolbar. `view` is what the rows are drawn from:
// { doc, types, typeNames, idOf (layer -> its row's id, stable across renders), examples }.
import { esc } from '../format.js';
import { listText } from './layer-types.js';
import { GROUPS, parentList } from './tree.js';

const svg = (path) => `<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">${path}</svg>`;
const ICON = {
  up: svg('<path fill="currentColor" d="M8 2l5.5 6H10v6H6V8H2.5z"/>'),
  down: svg('<path fill="currentColor" d="M8 14L2.5 8H6V2h4v6h3.5z"/>'),
  dup: svg('<path fill="none" stroke="currentColor" stroke-width="1.6" d="M5.5 5.5h8v8h-8zM2.5 10.5v-8h8"/>'),
  del: svg('<path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" d="M4 4l8 8M12 4l-8 8"/>'),
};

export function editorHtml(view) {
  const { doc, examples } = view;
  return `
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
      <ol class="le-list" aria-label="Layers, in order">${doc.layers.map((l, i) => layerHtml(view, l, [i])).join('')}</ol>
      ${addHtml(view, [])}
      <div class="le-toolbar">
        <label class="field inline" for="le-example"><span>Start from</span><select id="le-example">
          <option value="">choose…</option>
          <option value="blank">a small decoder (template)</option>
          ${Object.keys(examples).map((k) => `<option value="${esc(k)}">${esc(k)}</option>`).join('')}
        </select></label>
        <button type="button" class="small" id="le-download">Download JSON</button>
      </div>`;
}

/** In place of the rows, for a model longer than the editor shows. */
export function tooLongHtml(layers, limit) {
  return `<p class="le-error" role="status">This model has ${layers.toLocaleString('en-US')} layers; the layer-by-layer editor shows models of up to ${limit.toLocaleString('en-US')}. Its numbers are computed in full; to change it, edit the file (a <code>repeat</code> group describes repeated blocks in one entry) and upload it again.</p>`;
}

/** The selector of the editor's focused control (to focus it again after a render), or null. */
export function activeSelector(root) {
  const el = document.activeElement;
  if (!el || !root.contains(el)) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  return null;
}

function addHtml({ typeNames }, path) {
  const key = path.join('-') || 'root';
  return `<div class="le-add">
      <label class="visually-hidden" for="le-add-type-${key}">Type of the layer to add${path.length ? ' inside this group' : ''}</label>
      <select id="le-add-type-${key}" data-add-type="${path.join(',')}">
        ${typeNames.map((t) => `<option value="${t}" ${t === 'linear' ? 'selected' : ''}>${t}</option>`).join('')}
      </select>
      <button type="button" class="small" id="le-add-${key}" data-add="${path.join(',')}">+ Add layer${path.length ? ' inside' : ''}</button>
    </div>`;
}

function layerHtml(view, layer, path) {
  const { types, typeNames } = view;
  const id = view.idOf(layer);
  const spec = types[layer.type];
  const p = path.join(',');
  const label = esc(layer.name || layer.type);
  const fields = spec?.fields ?? [];
  const req = fields.filter((f) => f.required);
  const opt = fields.filter((f) => !f.required);
  const setOpt = opt.filter((f) => layer[f.key] !== undefined).length;
  const siblings = parentList(view.doc, path).length;
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
      ${GROUPS.has(layer.type) ? `<ol class="le-list" aria-label="Layers inside ${label}">${(layer.layers ?? []).map((l, i) => layerHtml(view, l, [...path, i])).join('')}</ol>${addHtml(view, path)}` : ''}
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
