// The build's precomputed first replies (dist/startup.json, web/startup-replies.mjs): what the page's first
// requests are, that the file holds the wasm module's own answers to them (a stale or hand-edited file fails),
// and that a request the module refuses is left to the worker. The page's use of the file is tested in
// tests/browser/web.test.mjs ("precomputed first result").
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as S from '../../web/js/state.js';
import { startupReplies, startupRequests } from '../../web/startup-replies.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const modulePath = resolve(root, process.env.PRENET_WASM_NODE ?? 'build-wasm/prenet_node.mjs');
const startupFile = resolve(root, process.env.PRENET_DIST ?? 'dist', 'startup.json');

let prenet;
const ask = (request) => JSON.parse(prenet.handleRequest(JSON.stringify(request)));

before(async () => {
  assert.ok(existsSync(modulePath), `${modulePath} not found; run: bash scripts/build.sh wasm`);
  const { default: createPrenet } = await import(pathToFileURL(modulePath).href);
  prenet = await createPrenet();
});

test("the page's first requests: the option table, then its defaults' predict and features", async () => {
  const options = ask({ command: 'options' });
  const [first, predict, features] = await startupRequests(options);
  assert.deepEqual(first, { command: 'options' });
  const table = S.optionTable(options);
  assert.deepEqual(predict, S.predictRequest(S.fresh(table), table));
  assert.deepEqual(features, S.featuresRequest(S.fresh(table), table));
  // The page's defaults (js/state.js PAGE_DEFAULTS), every catalogue accelerator.
  assert.equal(predict.model, 'gpt2');
  assert.equal(predict.hardware, 'all');
  assert.equal(predict.batch, S.PAGE_DEFAULTS.batch);
  assert.equal(predict.precision, S.PAGE_DEFAULTS.precision);
});

test("dist/startup.json is this module's answers to those requests", async () => {
  assert.ok(existsSync(startupFile), `${startupFile} not found; run: npm run build:web`);
  const file = JSON.parse(readFileSync(startupFile, 'utf8'));
  assert.equal(file.version, prenet.version());
  assert.deepEqual(file, await startupReplies(prenet));
  assert.deepEqual(file.replies.map((r) => r.request.command), ['options', 'predict', 'features']);
  const predict = file.replies[1].reply;
  assert.equal(predict.results.length, ask({ command: 'hardware' }).hardware.length, 'every accelerator answered');
});

test('a request the module refuses is left out (the worker answers it, with its error)', async () => {
  const refusing = {
    version: () => prenet.version(),
    handleRequest: (text) => (JSON.parse(text).command === 'predict' ? JSON.stringify({ error: { message: 'no', field: null, code: 'invalid' } }) : prenet.handleRequest(text)),
  };
  const { replies } = await startupReplies(refusing);
  assert.deepEqual(replies.map((r) => r.request.command), ['options', 'features']);
});
