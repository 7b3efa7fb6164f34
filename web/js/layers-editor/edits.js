// How the form's controls edit the document. Each control says what it edits in its id or data attributes
// (data-name, data-field + data-path, data-type, data-add, data-move, data-dup, data-del; a path as in tree.js);
// every edit ends with editor.changed(). `editor` is the editor's state: { root, types, examples, doc() (the
// document now), setDoc(next), render(focusSelector), changed(), idOf(layer) }.
import { BLANK_DOC, newLayer, parseList } from './layer-types.js';
import { freshName, GROUPS, layerAt, parentList, parsePath, renameCopy } from './tree.js';

export function listenForEdits(editor) {
  editor.root.addEventListener('input', (event) => onInput(editor, event.target));
  editor.root.addEventListener('change', (event) => onChange(editor, event.target));
  editor.root.addEventListener('click', (event) => {
    const b = event.target.closest('button');
    if (b && editor.root.contains(b)) onClick(editor, b);
  });
}

// ---- typing: the header's text fields, a layer's name, a layer's number, text or list field ----

function onInput(editor, t) {
  const doc = editor.doc();
  if (t.id === 'le-model-name') {
    doc.name = t.value;
    return editor.changed();
  }
  if (t.id === 'le-input') return setInput(editor, t);
  if (t.dataset.name !== undefined) {
    const layer = layerAt(doc, parsePath(t.dataset.name));
    if (t.value) layer.name = t.value;
    else delete layer.name;
    return editor.changed();
  }
  if (t.dataset.field && t.tagName === 'INPUT') return setTypedField(editor, t);
}

// Tokens per sample, or the shape per sample: positive integers, else marked invalid and not taken.
function setInput(editor, t) {
  const doc = editor.doc();
  const parsed = parseList(t.value);
  const bad = parsed === undefined || parsed.invalid || (Array.isArray(parsed) ? parsed : [parsed]).some((x) => !(x >= 1));
  t.setAttribute('aria-invalid', bad ? 'true' : 'false');
  if (bad) return;
  doc.input = doc.input?.shape ? { shape: Array.isArray(parsed) ? parsed : [parsed] } : { tokens: Array.isArray(parsed) ? parsed[0] : parsed };
  return editor.changed();
}

// An emptied field goes back to its default (the attribute is removed); an unreadable list is marked, not taken.
function setTypedField(editor, t) {
  const layer = layerAt(editor.doc(), parsePath(t.dataset.path));
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
  return editor.changed();
}

// ---- choosing: the domain, the input's kind, an example, a layer's type, an enum or boolean field ----

function onChange(editor, t) {
  const doc = editor.doc();
  if (t.id === 'le-domain') {
    doc.domain = t.value;
    return editor.changed();
  }
  if (t.id === 'le-input-kind') {
    doc.input = t.value === 'shape' ? { shape: [3, 224, 224] } : { tokens: 512 };
    editor.render('#le-input-kind');
    return editor.changed();
  }
  if (t.id === 'le-example') return startFrom(editor, t.value);
  if (t.dataset.type !== undefined) return changeType(editor, parsePath(t.dataset.type), t.value);
  if (t.dataset.field && t.tagName === 'SELECT') {
    const layer = layerAt(doc, parsePath(t.dataset.path));
    const key = t.dataset.field;
    if (t.value === '') delete layer[key];
    else layer[key] = t.dataset.kind === 'boolean' ? t.value === 'true' : t.value;
    return editor.changed();
  }
}

function startFrom(editor, pick) {
  if (!pick) return;
  const next = pick === 'blank' ? BLANK_DOC() : structuredClone(editor.examples[pick]);
  delete next.$schema;
  editor.setDoc(next);
  editor.root.querySelector('#le-example')?.focus();
  return editor.changed();
}

// A new layer of the type in place of the old one, keeping its name (and a group's members, group to group).
function changeType(editor, path, type) {
  const doc = editor.doc();
  const old = layerAt(doc, path);
  const next = newLayer(editor.types, type, old.name ?? freshName(doc, type));
  if (GROUPS.has(type) && GROUPS.has(old.type)) next.layers = old.layers;
  parentList(doc, path)[path[path.length - 1]] = next;
  editor.render(`#${editor.idOf(next)}-type`);
  return editor.changed();
}

// ---- buttons: download, add, move, duplicate, remove; focus stays on the layer acted on ----

function onClick(editor, b) {
  if (b.id === 'le-download') return download(editor.doc());
  if (b.dataset.add !== undefined) return addLayer(editor, b.dataset.add);
  if (b.dataset.move !== undefined) return moveLayer(editor, parsePath(b.dataset.move), Number(b.dataset.dir));
  if (b.dataset.dup !== undefined) return duplicateLayer(editor, parsePath(b.dataset.dup));
  if (b.dataset.del !== undefined) return removeLayer(editor, parsePath(b.dataset.del));
}

function download(doc) {
  const blob = new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: 'application/json' });
  const a = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: `${doc.name || 'model'}.json` });
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// At the end of the top list, or of the group at `pathText`, of the type its select shows.
function addLayer(editor, pathText) {
  const doc = editor.doc();
  const path = parsePath(pathText);
  const type = editor.root.querySelector(`[data-add-type="${pathText}"]`).value;
  const layer = newLayer(editor.types, type, freshName(doc, type));
  const list = path.length ? layerAt(doc, path).layers : doc.layers;
  list.push(layer);
  editor.render(`#${editor.idOf(layer)}-type`);
  return editor.changed();
}

function moveLayer(editor, path, dir) {
  const list = parentList(editor.doc(), path);
  const i = path[path.length - 1];
  const j = i + dir;
  if (j < 0 || j >= list.length) return;
  [list[i], list[j]] = [list[j], list[i]];
  const moved = list[j];
  editor.render('#none');
  const same = editor.root.querySelector(`#${editor.idOf(moved)}-${dir < 0 ? 'up' : 'down'}`);
  (same && !same.disabled ? same : editor.root.querySelector(`#${editor.idOf(moved)}-type`))?.focus();
  return editor.changed();
}

// The copy goes right after the original, renamed so that every name stays unique.
function duplicateLayer(editor, path) {
  const doc = editor.doc();
  const list = parentList(doc, path);
  const copy = structuredClone(layerAt(doc, path));
  renameCopy(doc, copy);
  list.splice(path[path.length - 1] + 1, 0, copy);
  editor.render(`#${editor.idOf(copy)}-type`);
  return editor.changed();
}

function removeLayer(editor, path) {
  const list = parentList(editor.doc(), path);
  const i = path[path.length - 1];
  list.splice(i, 1);
  const next = list[Math.min(i, list.length - 1)];
  editor.render(next ? `#${editor.idOf(next)}-del` : '#le-add-root');
  return editor.changed();
}
