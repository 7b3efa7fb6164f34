// web/js/engine.js: a request that traps or aborts the wasm module is answered as an error for that request,
// and the next request runs on a fresh instance. First with a stand-in module (no build needed), then with the
// real one (the Node build, scripts/build.sh wasm; PRENET_WASM_NODE overrides its path), broken for real by
// the same test hook the worker has (breakModule: the wasm stack pointer moved out of memory, so the module
// traps inside handleRequest, and keeps trapping on every later call, as an aborted module does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { breakModule, createEngine, engineFailure } from '../../web/js/engine.js';
import { apiError } from '../../web/js/errors.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const modulePath = resolve(root, process.env.PRENET_WASM_NODE ?? 'build-wasm/prenet_node.mjs');

test('a stand-in module that throws: an error reply for that request, a new instance for the next', async () => {
  let made = 0;
  const instantiate = async () => {
    const n = ++made;
    return {
      handleRequest: (text) => {
        if (text === 'trap') throw new WebAssembly.RuntimeError('unreachable');
        return JSON.stringify({ instance: n, text });
      },
      version: () => '1',
    };
  };
  const engine = createEngine(instantiate);
  assert.deepEqual(JSON.parse((await engine.request('a')).reply), { instance: 1, text: 'a' });
  const failed = await engine.request('trap');
  assert.equal(failed.restarted, true);
  const error = apiError(JSON.parse(failed.reply));
  assert.equal(error.code, 'internal');
  assert.equal(error.field, null);
  assert.match(error.message, /engine failed on this request \(unreachable\); it has been restarted/);
  assert.deepEqual(JSON.parse((await engine.request('b')).reply), { instance: 2, text: 'b' });
  assert.equal(engine.restarts, 1);
  assert.match(JSON.parse(engineFailure('boom')).error.message, /\(boom\)/);
});

test('a module that cannot be instantiated rejects the request (the page shows "could not start")', async () => {
  const engine = createEngine(() => Promise.reject(new Error('no wasm')));
  await assert.rejects(engine.request('{}'), /no wasm/);
});

const PREDICT = JSON.stringify({ command: 'predict', model: 'gpt2', hardware: 'a100-sxm4-80gb', batch: 8 });

test('the real module: a request that traps it is an error for that request; a good request afterwards answers', { skip: !existsSync(modulePath) && `${modulePath} not built` }, async () => {
  const { default: createPrenet } = await import(pathToFileURL(modulePath).href);
  // Without the engine: once broken, the module fails this and every later request.
  const bare = await createPrenet();
  assert.ok(JSON.parse(bare.handleRequest(PREDICT)).results);
  breakModule(bare);
  assert.throws(() => bare.handleRequest(PREDICT));
  assert.throws(() => bare.handleRequest(JSON.stringify({ command: 'version' })), 'still broken');
  // With it: that one request fails, as data; the next one runs on a fresh instance.
  const engine = createEngine(() => createPrenet());
  const before = JSON.parse((await engine.request(PREDICT)).reply);
  const broken = await engine.request(PREDICT, { before: breakModule });
  assert.equal(broken.restarted, true);
  const error = apiError(JSON.parse(broken.reply));
  assert.equal(error.code, 'internal');
  assert.match(error.message, /engine failed on this request/);
  const after = JSON.parse((await engine.request(PREDICT)).reply);
  assert.equal(after.error, undefined);
  assert.deepEqual(after.results, before.results, 'the fresh instance gives the same numbers');
  assert.equal(engine.restarts, 1);
});
