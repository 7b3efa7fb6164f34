// web/js/errors.js: every way an error reaches the page (an API reply's error object, a thrown Error from
// the worker, a bare message) comes out as one {message, field, code, path, attr, hardware}.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiError, noHardware } from '../../web/js/errors.js';

test('a reply without an error is no error', () => {
  assert.equal(apiError({ results: [] }), null);
  assert.equal(apiError({ error: null }), null);
  assert.equal(apiError(null), null);
  assert.equal(apiError(undefined), null);
});

test("the API's error object is passed through, with missing parts filled in", () => {
  const e = { message: "'batch' must be at least 1", field: 'batch', code: 'invalid_value', path: null, attr: null, hardware: null };
  assert.deepEqual(apiError({ error: e }), e);
  const none = { field: null, code: 'internal', path: null, attr: null, hardware: null };
  assert.deepEqual(apiError({ error: { message: 'boom' } }), { message: 'boom', ...none });
  assert.deepEqual(apiError({ error: { field: '', code: '' } }), { message: 'the calculator failed', ...none });
  // A layers-JSON error locates the layer and its attribute.
  const layer = { message: 'x', field: 'model', code: 'invalid_model', path: 'layers[1][0]', attr: 'out_features', hardware: null };
  assert.deepEqual(apiError({ error: layer }), layer);
  // A cluster question's refusal of its one accelerator names it.
  const refusal = { message: '12 devices do not fill whole nodes of 8', field: 'gpus', code: 'invalid_value', path: null, attr: null, hardware: 'h100-sxm5-80gb' };
  assert.deepEqual(apiError({ error: refusal }), refusal);
  // An error object handed on by itself (e.g. kept by the page) reads the same.
  assert.deepEqual(apiError(e), e);
});

test('a thrown Error or a bare message is an internal error without a field', () => {
  const none = { field: null, code: 'internal', path: null, attr: null, hardware: null };
  assert.deepEqual(apiError(new Error('cannot load wasm/prenet.wasm: HTTP 404')), {
    message: 'cannot load wasm/prenet.wasm: HTTP 404',
    ...none,
  });
  assert.deepEqual(apiError('worker died'), { message: 'worker died', ...none });
});

test('"no accelerator" is the code missing on the field hardware, not words in a message', () => {
  assert.equal(noHardware(apiError({ error: { message: 'anything', field: 'hardware', code: 'missing' } })), true);
  assert.equal(noHardware(apiError({ error: { message: 'no hardware selected', field: 'hardware', code: 'invalid_hardware' } })), false);
  assert.equal(noHardware(null), false);
});
