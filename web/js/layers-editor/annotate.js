// What the page's answer says about each row: from the `features` reply, a layer's output shape and parameter
// count (a group's total); from an API error, the message on the layer it names and its field marked invalid.
import { count, esc, shape } from '../format.js';
import { GROUPS, walk } from './tree.js';

/** Shows `features` (or `error`) beside the rows of `doc` drawn in `root`; idOf gives a layer's row id. */
export function annotate(root, doc, idOf, features, error) {
  clearMarks(root);
  showOutputs(doc, idOf, error ? null : features);
  if (error) showError(root, doc, idOf, error);
}

function clearMarks(root) {
  root.querySelectorAll('.le-layer.invalid').forEach((el) => el.classList.remove('invalid'));
  root.querySelectorAll('.le-error').forEach((el) => {
    el.hidden = true;
    el.textContent = '';
  });
  root.querySelectorAll('[data-field][aria-invalid="true"]').forEach((el) => el.removeAttribute('aria-invalid'));
}

// Each layer's row of the reply, found by name; cleared when there is no reply.
function showOutputs(doc, idOf, features) {
  const rows = features?.layers ?? [];
  const byName = new Map();
  for (const row of rows) if (!byName.has(row.name)) byName.set(row.name, row);
  walk(doc.layers, (layer) => {
    const out = document.getElementById(`${idOf(layer)}-out`);
    if (!out) return;
    if (!features) {
      out.textContent = '';
      return;
    }
    if (GROUPS.has(layer.type)) {
      out.innerHTML = groupHtml(layer, byName);
      return;
    }
    const row = byName.get(layer.name);
    out.innerHTML = row
      ? `→ <strong>${shape(row.output_shape)}</strong> · ${count(row.params)} params${row.repeat > 1 ? ` × ${row.repeat}` : ''}`
      : '';
  });
}

// A repeat's total counts every repetition; a residual's is one instance of its branch.
function groupHtml(layer, byName) {
  let params = 0;
  let found = false;
  walk(layer.layers, (child) => {
    const row = GROUPS.has(child.type) ? null : byName.get(child.name);
    if (!row) return;
    found = true;
    params += row.params * (layer.type === 'repeat' ? row.repeat : 1);
  });
  return found ? `${layer.type === 'repeat' ? `× ${esc(layer.count)} · ` : ''}<strong>${count(params)}</strong> params${layer.type === 'repeat' ? ' in total' : ''}` : '';
}

// On the layer the error names (and its field), or above the rows when it names none.
function showError(root, doc, idOf, error) {
  const docError = root.querySelector('#le-doc-error');
  const target = errorTarget(doc, error);
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
export function errorTarget(doc, error) {
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
