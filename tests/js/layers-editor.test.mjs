// The layer editor's pure parts (web/js/layers-editor/): the document as a tree (paths, names), the layer
// types read from the layers-JSON schema, a field's text as a value, and which layer an API error names. The
// form itself, in a browser, is tests/browser/web.test.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { errorTarget } from '../../web/js/layers-editor/annotate.js';
import { BLANK_DOC, layerTypes, newLayer, parseList } from '../../web/js/layers-editor/layer-types.js';
import { countLayers, freshName, layerAt, nameAll, parentList, parsePath, renameCopy } from '../../web/js/layers-editor/tree.js';

const schema = JSON.parse(readFileSync(new URL('../../schemas/layers.schema.json', import.meta.url), 'utf8'));
const types = layerTypes(schema);

test('paths reach into groups; every group and member counts as a layer', () => {
  const doc = BLANK_DOC();
  assert.equal(countLayers(doc.layers), 11); // 7 at the top or in a group, 4 inside the residuals
  assert.deepEqual(parsePath('1,0,1'), [1, 0, 1]);
  assert.deepEqual(parsePath(''), []);
  assert.equal(layerAt(doc, [1, 0, 1]).name, 'attn');
  assert.equal(parentList(doc, [1, 0, 1]), doc.layers[1].layers[0].layers);
});

test('names: unnamed layers numbered per type, fresh names unused, copies renamed name_2, name_3', () => {
  const doc = { layers: [{ type: 'linear' }, { type: 'linear', name: 'linear2' }, { type: 'residual', layers: [{ type: 'linear' }] }] };
  nameAll(doc);
  assert.deepEqual(doc.layers.map((l) => l.name), ['linear1', 'linear2', 'residual1']);
  assert.equal(doc.layers[2].layers[0].name, 'linear3');
  assert.equal(freshName(doc, 'linear'), 'linear4');
  const copy = structuredClone(doc.layers[2]);
  renameCopy(doc, copy);
  assert.deepEqual([copy.name, copy.layers[0].name], ['residual1_2', 'linear3_2']);
  const again = structuredClone(copy);
  renameCopy({ layers: [...doc.layers, copy] }, again);
  assert.equal(again.name, 'residual1_3');
});

test('layer types from the schema; a new layer has its starter values and a value for every required field', () => {
  assert.ok(types.linear.fields.some((f) => f.key === 'out_features' && f.required && f.kind === 'integer'));
  assert.ok(!types.repeat.fields.some((f) => f.key === 'layers' || f.key === 'name'));
  assert.deepEqual(newLayer(types, 'linear', 'fc'), { type: 'linear', name: 'fc', out_features: 128 });
  for (const [type, spec] of Object.entries(types)) {
    const layer = newLayer(types, type, 'x');
    for (const f of spec.fields) if (f.required) assert.notEqual(layer[f.key], undefined, `${type}.${f.key}`);
  }
});

test("a list field's text: a number, a list, 'same', empty, or invalid", () => {
  assert.equal(parseList(' 3 '), 3);
  assert.deepEqual(parseList('3, 224 x 224'), [3, 224, 224]);
  assert.equal(parseList('same'), 'same');
  assert.equal(parseList('  '), undefined);
  assert.deepEqual(parseList('3, a'), { invalid: true });
});

test('an error names its layer by path (into groups) and its attribute; none when the path leads nowhere', () => {
  const doc = BLANK_DOC();
  assert.deepEqual(errorTarget(doc, { path: 'layers[1][0][1]', attr: 'heads' }), { layer: doc.layers[1].layers[0].layers[1], field: 'heads' });
  assert.deepEqual(errorTarget(doc, { path: 'layers[0]' }), { layer: doc.layers[0], field: null });
  assert.equal(errorTarget(doc, { path: 'layers[9]' }), null);
  assert.equal(errorTarget(doc, { message: 'no path' }), null);
});
