// The layer-by-layer form: a layers-JSON document (docs/layers-json.md) edited as a list of layers whose
// attribute fields come from the layers-JSON schema. Every edit calls onChange(doc) with a fresh copy; the
// page answers with the `features` reply (or the error), which annotate() shows beside each layer: its
// output shape and parameter count, or the error message on the layer it names.
// Its parts, in layers-editor/: layer-types.js (the types and their fields, new layers), tree.js (paths and
// names in the document), render.js (the HTML), edits.js (what each control changes), annotate.js (the reply
// beside each row).
import { annotate, errorTarget } from './layers-editor/annotate.js';
import { listenForEdits } from './layers-editor/edits.js';
import { BLANK_DOC, layerTypes } from './layers-editor/layer-types.js';
import { activeSelector, editorHtml, tooLongHtml } from './layers-editor/render.js';
import { countLayers, nameAll } from './layers-editor/tree.js';

export { BLANK_DOC, layerTypes, countLayers };

/** The most layers the editor shows (every group and its members counted). */
export const EDITOR_LIMIT = 2000;

let uid = 0;

export function createLayersEditor(root, { schema, examples = {}, onChange }) {
  const types = layerTypes(schema);
  const typeNames = Object.keys(types);
  let doc = BLANK_DOC();
  // A model longer than EDITOR_LIMIT layers is not edited here (each layer is a row of fields): the editor
  // says so; the model itself is computed in full wherever it came from.
  let tooLong = 0;
  const ids = new WeakMap(); // layer object -> row id, stable across renders
  const idOf = (layer) => {
    if (!ids.has(layer)) ids.set(layer, `le${++uid}`);
    return ids.get(layer);
  };

  function render(focusSelector = null) {
    const active = focusSelector ?? activeSelector(root);
    root.innerHTML = editorHtml({ doc, types, typeNames, idOf, examples });
    if (active) root.querySelector(active)?.focus();
  }

  function setDoc(next) {
    const n = countLayers(next?.layers);
    if (n > EDITOR_LIMIT) {
      tooLong = n;
      doc = next;
      root.innerHTML = tooLongHtml(n, EDITOR_LIMIT);
      return;
    }
    tooLong = 0;
    doc = structuredClone(next);
    if (!Array.isArray(doc.layers)) doc.layers = [];
    if (!doc.input) doc.input = { tokens: 512 };
    // Every layer gets a name, so the features reply and the errors can be matched to their row.
    nameAll(doc);
    render();
  }

  listenForEdits({ root, types, examples, doc: () => doc, setDoc, render, changed: () => onChange(structuredClone(doc)), idOf });
  setDoc(doc);
  return {
    setDoc,
    getDoc: () => (tooLong ? doc : structuredClone(doc)),
    annotate: (features, error) => (tooLong ? undefined : annotate(root, doc, idOf, features, error)),
    errorTarget: (error) => errorTarget(doc, error),
    tooLong: () => tooLong,
  };
}
