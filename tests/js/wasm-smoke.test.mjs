// Smoke test of the wasm module under Node: loads the single-file build (scripts/build.sh wasm) and checks
// the JSON request/response contract of handleRequest. PRENET_WASM_NODE overrides the module path.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const modulePath = resolve(root, process.env.PRENET_WASM_NODE ?? 'build-wasm/prenet_node.mjs');

let prenet;
const request = (body) => JSON.parse(prenet.handleRequest(typeof body === 'string' ? body : JSON.stringify(body)));

before(async () => {
  assert.ok(existsSync(modulePath), `${modulePath} not found; run: bash scripts/build.sh wasm`);
  const { default: createPrenet } = await import(pathToFileURL(modulePath).href);
  prenet = await createPrenet();
});

test('version() and the version command agree', () => {
  assert.equal(typeof prenet.version(), 'string');
  const reply = request({ command: 'version' });
  assert.equal(typeof reply.version, 'string');
  assert.equal(reply.version, prenet.version());
});

test('zoo lists models', () => {
  const reply = request({ command: 'zoo' });
  assert.equal(reply.error, undefined);
  assert.ok(Array.isArray(reply.models), 'models is an array');
});

// An error reply: {"error": {"message", "field", "code"}} (src/api/api.hpp).
function assertError(reply, code, field = null) {
  assert.equal(typeof reply.error, 'object', JSON.stringify(reply).slice(0, 200));
  assert.equal(typeof reply.error.message, 'string');
  assert.ok(reply.error.message.length > 0);
  assert.equal(reply.error.code, code);
  assert.equal(reply.error.field, field);
}

test('malformed JSON gives an error, and the module keeps working', () => {
  assertError(request('{"command": "zoo"'), 'bad_request');
  assert.ok(Array.isArray(request({ command: 'zoo' }).models));
});

test('unknown command gives an error', () => {
  const reply = request({ command: 'nope' });
  assertError(reply, 'unknown_command', 'command');
  assert.match(reply.error.message, /nope/);
});

test('a request that is not an object gives an error', () => {
  assertError(request('[1, 2]'), 'bad_request');
  assertError(request({ command: 42 }), 'bad_request');
});

test('a bad option names its field, and the module keeps working', () => {
  assertError(request({ command: 'predict', model: 'gpt2', hardware: 't4', batch: 0 }), 'invalid_value', 'batch');
  assertError(request({ command: 'predict', model: 'gpt2', hardware: 't4', bacth: 2 }), 'unknown_option', 'bacth');
  assertError(request({ command: 'predict', model: 'no-such-model', hardware: 't4' }), 'invalid_model', 'model');
  assertError(request({ command: 'predict', model: 'gpt2', hardware: [] }), 'missing', 'hardware');
  assert.equal(request({ command: 'predict', model: 'gpt2', hardware: 't4' }).results.length, 1);
});

test('the option table is served, and every row the page shows is a predict option', () => {
  const { options } = request({ command: 'options' });
  assert.ok(options.length > 10);
  for (const row of options.filter((r) => r.page)) assert.ok(row.commands.includes('predict') || row.commands.includes('features'), row.name);
});
