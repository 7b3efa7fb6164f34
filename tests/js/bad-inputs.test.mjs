// The bad-input corpus (tests/fixtures/bad/) against the page's own wasm module (the Node build of it,
// scripts/build.sh wasm; PRENET_WASM_NODE overrides its path) through web/js/engine.js, as the worker runs
// it: every case answers its error (code, field, message) as natively (tests/api-bad-inputs-test.cpp), none
// traps or aborts the module (no restart), and a good request answers afterwards on the same instance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createEngine } from '../../web/js/engine.js';
import { cases, requestText } from '../fixtures/bad/corpus.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const modulePath = resolve(root, process.env.PRENET_WASM_NODE ?? 'build-wasm/prenet_node.mjs');

test('the corpus has every class of the issue and at least 80 cases', () => {
  const all = cases();
  assert.ok(all.length >= 80, `${all.length} cases`);
  const classes = new Set(all.map((c) => c.class));
  for (const c of ['malformed JSON', 'wrong type', 'missing field', 'zero dimension', 'negative dimension', '1e308 dimension', 'count past 64 bits', 'huge count', 'graph', 'unknown kind', 'hostile string', 'generated'])
    assert.ok(classes.has(c), c);
  for (const route of ['model', 'sheet', 'request']) assert.ok(all.some((c) => c.route === route), route);
});

test('every case through the page\'s module: its error, no trap, and the module still answers', { skip: !existsSync(modulePath) && `${modulePath} not built` }, async () => {
  const { default: createPrenet } = await import(pathToFileURL(modulePath).href);
  const engine = createEngine(() => createPrenet());
  let ran = 0;
  for (const c of cases()) {
    // Bytes that are not UTF-8 cannot reach the module from JS (a string crosses Embind as UTF-8); the C++
    // suite sends them (natively and as wasm), and the page refuses such a file before it is sent.
    if (c.bytes) continue;
    const { reply, restarted } = await engine.request(requestText({ route: c.route, input: c.input() }));
    assert.equal(restarted, false, `${c.name}: the module trapped`);
    const error = JSON.parse(reply).error;
    assert.ok(error && typeof error === 'object', `${c.name}: no error: ${reply.slice(0, 300)}`);
    assert.ok(error.message, c.name);
    assert.notEqual(error.code, 'internal', `${c.name}: ${error.message}`);
    if (c.code) assert.equal(error.code, c.code, `${c.name}: ${error.message}`);
    if (c.field !== undefined) assert.equal(error.field, c.field, `${c.name}: ${error.message}`);
    if (c.contains) assert.ok(error.message.includes(c.contains), `${c.name}: "${error.message}" lacks "${c.contains}"`);
    ran++;
  }
  assert.ok(ran >= 80, `${ran} cases ran`);
  assert.equal(engine.restarts, 0);
  const good = JSON.parse((await engine.request(JSON.stringify({ command: 'features', model: 'gpt2', batch: 2 }))).reply);
  assert.equal(good.error, undefined);
  assert.ok(good.params > 1e8);
});
