// The page's requests and command line against the native CLI, without a browser: for several links, the
// state the page reads from the hash (web/js/state.js, on the wasm module's own option table) becomes the
// predict request the page sends to the wasm module (the Node build of the same module the page's worker
// runs) and the command line the page shows; run natively, that command line must print the same numbers.
// Needs build/prenet and build-wasm/prenet_node.mjs (skipped without them). The browser tests check the
// same on the page itself for the default state, an upload, a layers file and a custom accelerator.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isCluster, mergeReplies, splitRequest } from '../../web/js/cluster.js';
import * as S from '../../web/js/state.js';
import { TIME_TOLERANCE, cli, cliBinary, compareReplies, divergences, splitCommand } from './compare.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const modulePath = resolve(root, process.env.PRENET_WASM_NODE ?? 'build-wasm/prenet_node.mjs');
const missing = [cliBinary, modulePath].find((f) => !existsSync(f));

let prenet;
let table;
const request = (body) => JSON.parse(prenet.handleRequest(JSON.stringify(body)));

before(async () => {
  if (missing) return;
  const { default: createPrenet } = await import(pathToFileURL(modulePath).href);
  prenet = await createPrenet();
  table = S.optionTable(request({ command: 'options' }));
});
after(() => {
  if (divergences.length) console.log(`wasm and native differ beyond 1e-9 (within ${TIME_TOLERANCE * 100}%) in ${divergences.length} numbers, e.g.:\n  ${divergences.slice(0, 5).join('\n  ')}`);
});

const CASES = [
  'model=resnet50&batch=64&image=160&precision=fp16&optimizer=sgd&hw=a100-sxm4-80gb,t4,tpu-v4',
  'model=bert-base&batch=16&seq=128&precision=fp32&optimizer=adam&hw=v100-sxm2-32gb,rtx-4090',
  'model=mixtral-8x7b&batch=1&precision=bf16&hw=h100-sxm5-80gb,mi300x,gaudi2',
  'model=vit-b16&batch=32&precision=tf32&hw=a100-sxm4-80gb,l4',
  // The training options of the "more" part and both budget choices.
  'model=gpt2&accum=4&ckpt=1&opt_impl=foreach&mixed=half&attn=flash&input_rate=2000&pph=1.5&hw=h100-sxm5-80gb,l4',
  'model=gpt2&budget=samples&samples=100000&epochs=2&hw=a100-sxm4-80gb',
  'model=resnet50&tokens=2e9&samples=50000&epochs=3&hw=t4',
  // Cluster questions: devices (searched layouts), a fixed layout, nodes, a global batch in tokens, a sheet
  // that cannot form the cluster (refused, the others answered).
  'model=llama2-7b&gpus=8&batch=1&precision=bf16&hw=h100-sxm5-80gb,a100-sxm4-80gb,tpu-v4',
  'model=gpt2&gpus=4&dp=2&tp=2&zero=1&ckpt=selective&hw=h100-sxm5-80gb',
  'model=llama2-13b&gpus=16&gpn=8&pp=2&sched=1f1b&batch=1&gtokens=262144&precision=bf16&hw=h100-sxm5-80gb',
];

for (const hash of CASES)
  test(`the page's request and its command line agree: #${hash}`, async (t) => {
    if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
    const state = await S.fromHash(hash, table);
    const body = S.predictRequest(state, table);
    // A cluster question goes one accelerator at a time, as the page asks it (web/js/cluster.js).
    let reply;
    if (isCluster(body, table)) {
      const chunks = splitRequest(body, []);
      const parts = chunks.map((c) => {
        const doc = request(c);
        return { doc, error: doc.error ?? null };
      });
      reply = mergeReplies(parts, chunks, new Map(request({ command: 'hardware' }).hardware.map((h) => [h.id, h.name]))).doc;
    } else reply = request(body);
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const args = splitCommand(S.commandLine(state, table));
    assert.deepEqual(args.slice(0, 2), ['prenet', 'predict']);
    compareReplies(reply, cli(args.slice(1)), hash);
  });

test('both budgets sent: a language model trains on tokens, any other model on samples × epochs', (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const s = S.fresh(table);
  const gpt2 = request(S.predictRequest({ ...s, hw: ['t4'] }, table));
  assert.equal(gpt2.settings.tokens, S.PAGE_DEFAULTS.tokens);
  assert.equal(gpt2.settings.samples, null);
  const resnet = request(S.predictRequest({ ...s, model: 'resnet50', hw: ['t4'] }, table));
  assert.equal(resnet.settings.tokens, null);
  assert.equal(resnet.settings.samples, S.PAGE_DEFAULTS.samples);
  assert.ok(resnet.model.tokens_per_sample === 0 && gpt2.model.tokens_per_sample > 0);
});
