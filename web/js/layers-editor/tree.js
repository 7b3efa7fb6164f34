// Pure: the layers-JSON document as a tree. Groups (repeat, residual) hold layers of their own; a path is the
// list of indices from the top list down to one layer ([1, 0]: the first layer inside the second), written
// "1,0" in the form's data attributes. Layer names are how the features reply and the errors find their row.

export const GROUPS = new Set(['repeat', 'residual']);

/** Calls fn on every layer of `list`, each group before its members. */
export function walk(list, fn) {
  for (const layer of list ?? []) {
    fn(layer);
    if (Array.isArray(layer.layers)) walk(layer.layers, fn);
  }
}

export function countLayers(list) {
  let n = 0;
  walk(list, () => n++);
  return n;
}

export const parsePath = (text) => (text === '' ? [] : text.split(',').map(Number));

/** The list that holds the layer at `path`. */
export function parentList(doc, path) {
  let list = doc.layers;
  for (const i of path.slice(0, -1)) list = list[i].layers;
  return list;
}

export const layerAt = (doc, path) => parentList(doc, path)[path[path.length - 1]];

export function usedNames(doc) {
  const names = new Set();
  walk(doc.layers, (l) => l.name && names.add(l.name));
  return names;
}

/** The first of type1, type2, ... that no layer has. */
export function freshName(doc, type) {
  const names = usedNames(doc);
  for (let i = 1; ; i++) if (!names.has(`${type}${i}`)) return `${type}${i}`;
}

/** Names every unnamed layer (type1, type2, ...), so that each can be matched to its row. */
export function nameAll(doc) {
  const names = usedNames(doc);
  const next = new Map(); // type -> the next number to try (so naming n layers is linear, not quadratic)
  walk(doc.layers, (l) => {
    if (l.name) return;
    let i = next.get(l.type) ?? 1;
    while (names.has(`${l.type}${i}`)) i++;
    next.set(l.type, i + 1);
    l.name = `${l.type}${i}`;
    names.add(l.name);
  });
}

/** Renames a copy of layers already in `doc` (and its members) name_2, name_3, ...: names stay unique. */
export function renameCopy(doc, copy) {
  const names = usedNames(doc);
  walk([copy], (l) => {
    if (!l.name) return;
    let n = 2;
    const stem = l.name.replace(/_\d+$/, '');
    while (names.has(`${stem}_${n}`)) n++;
    l.name = `${stem}_${n}`;
    names.add(l.name);
  });
}
