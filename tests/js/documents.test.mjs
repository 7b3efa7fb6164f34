// web/js/documents.js: a document read within the API's limits before the page holds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromBase64, isOnnxDoc, jsonTextDepth, readJson, toBase64, utf8 } from '../../web/js/documents.js';

const LIMITS = { json_depth: 64, document_bytes: 1000 };

test('nesting depth of JSON text: brackets in strings and escaped quotes do not count', () => {
  assert.equal(jsonTextDepth('1'), 0);
  assert.equal(jsonTextDepth('[]'), 1);
  assert.equal(jsonTextDepth('{"a": [1, {"b": []}]}'), 4);
  assert.equal(jsonTextDepth('["[[[[", "\\"[[["]'), 1);
  assert.equal(jsonTextDepth('[[]][[[]]]'), 3, 'the deepest of siblings');
  assert.equal(jsonTextDepth('['.repeat(1e6), 64), 65, 'stops past the limit');
});

test('readJson: the size, nesting and syntax limits, in the API\'s words', () => {
  assert.deepEqual(readJson('{"a": [1]}', LIMITS, 'x.json'), { value: { a: [1] } });
  assert.deepEqual(readJson(`${'['.repeat(64)}${']'.repeat(64)}`, LIMITS, 'x.json').error, undefined, 'at the limit');
  assert.equal(readJson(`${'['.repeat(65)}${']'.repeat(65)}`, LIMITS, 'x.json').error, 'x.json is nested more than 64 levels deep (the limit on JSON nesting)');
  assert.match(readJson(`"${'é'.repeat(600)}"`, LIMITS, 'x.json').error, /^x\.json is 1202 bytes, more than the limit of 0 MiB$/, 'bytes, not characters');
  assert.match(readJson('{"a": ', LIMITS, 'x.json').error, /^x\.json is not valid JSON \(/);
});

test('utf8: text, or null for bytes that are not UTF-8', () => {
  assert.equal(utf8(new TextEncoder().encode('{"é": 1}')), '{"é": 1}');
  assert.equal(utf8(Uint8Array.from([0x7b, 0xff, 0x7d])), null);
});

test('an ONNX file as the API takes it: base64 both ways, across chunk boundaries', () => {
  assert.equal(toBase64(new TextEncoder().encode('hello')), 'aGVsbG8=');
  const bytes = new Uint8Array(100_003).map((_, i) => (i * 7919) & 0xff);
  const text = toBase64(bytes.buffer);
  assert.equal(text, Buffer.from(bytes).toString('base64'));
  assert.deepEqual(fromBase64(text), bytes);
  assert.ok(isOnnxDoc({ onnx_base64: text, name: 'm.onnx' }));
  assert.ok(!isOnnxDoc({ layers: [] }) && !isOnnxDoc(null) && !isOnnxDoc({ onnx_base64: 3 }));
});
