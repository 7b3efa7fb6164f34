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

test('malformed JSON gives an error, and the module keeps working', () => {
  const reply = request('{"command": "zoo"');
  assert.equal(typeof reply.error, 'string');
  assert.ok(reply.error.length > 0);
  assert.ok(Array.isArray(request({ command: 'zoo' }).models));
});

test('unknown command gives an error', () => {
  const reply = request({ command: 'nope' });
  assert.equal(typeof reply.error, 'string');
  assert.match(reply.error, /nope/);
});

test('a request that is not an object gives an error', () => {
  assert.equal(typeof request('[1, 2]').error, 'string');
  assert.equal(typeof request({ command: 42 }).error, 'string');
});
