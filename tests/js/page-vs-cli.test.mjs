// The page's requests and command line against the native CLI, without a browser: for several links, the
// state the page reads from the hash (web/js/state.js, on the wasm module's own option table) becomes the
// predict request the page sends to the wasm module (the Node build of the same module the page's worker
// runs) and the command line the page shows; run natively, that command line must print the same numbers.
// Needs build/prenet and build-wasm/prenet_node.mjs (skipped without them). The browser tests check the
// same on the page itself for the default state, an upload, a layers file and a custom accelerator.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isCluster, layoutPatch, mergeReplies, splitRequest } from '../../web/js/cluster.js';
import { assumptionsHtml } from '../../web/js/results/assumptions.js';
import { buildRows, refusedRows } from '../../web/js/results/rows.js';
import * as S from '../../web/js/state.js';
import { TIME_TOLERANCE, cli, cliBinary, close, compareReplies, divergences, splitCommand } from './compare.mjs';

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
  // Cluster questions: devices (searched layouts, a TPU v4 torus slice among switched nodes), a fixed layout,
  // nodes, a global batch in tokens.
  'model=llama2-7b&gpus=8&batch=1&precision=bf16&hw=h100-sxm5-80gb,a100-sxm4-80gb,tpu-v4',
  'model=gpt2&gpus=4&dp=2&tp=2&zero=1&ckpt=selective&hw=h100-sxm5-80gb',
  'model=llama2-13b&gpus=16&gpn=8&pp=2&sched=1f1b&batch=1&gtokens=262144&precision=bf16&hw=h100-sxm5-80gb',
  // Rules the page takes from the API (web/js/state.js, cluster.js read the option table and the replies):
  // 12 devices fill no node of 8 (h100 refused: its error names it), but GB200's nodes of 72 and T4's of 4.
  'model=llama2-7b&gpus=12&hw=h100-sxm5-80gb,gb200,t4',
  // The run (steps from the global batch: grad-accum × dp; energy from the matmul share) is the API's.
  'model=gpt2&gpus=4&accum=2&tokens=5e8&hw=h100-sxm5-80gb,a100-sxm4-80gb',
  // Cluster questions on one device: nodes given, selective recomputation.
  'model=gpt2&gpn=4&hw=h100-sxm5-80gb,a100-sxm4-80gb',
  'model=gpt2&ckpt=selective&hw=h100-sxm5-80gb,t4',
  // Rows that do not apply are not sent: the recipe under LoRA and fp32, quantisation under QLoRA, LoRA rows
  // without LoRA.
  'model=gpt2&ft=lora&rank=16&mixed=autocast&quant=int8&hw=a100-sxm4-80gb',
  'model=gpt2&ft=qlora&quant=int8&mixed=half&hw=a100-sxm4-80gb',
  'model=gpt2&precision=fp32&mixed=half&hw=t4',
  'model=gpt2&ft=full&rank=8&freeze=head&hw=t4',
];

// The page's reply for a request: a cluster question one accelerator at a time, merged as the page merges
// it (web/js/cluster.js); any other in one go.
function pageReply(body) {
  if (!isCluster(body, table)) return request(body);
  const chunks = splitRequest(body, []);
  const parts = chunks.map((c) => {
    const doc = request(c);
    return { doc, error: doc.error ?? null };
  });
  const merged = mergeReplies(parts, chunks, new Map(request({ command: 'hardware' }).hardware.map((h) => [h.id, h.name])));
  return merged.error ? { error: merged.error } : merged.doc;
}

for (const hash of CASES)
  test(`the page's request and its command line agree: #${hash}`, async (t) => {
    if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
    const state = await S.fromHash(hash, table);
    const body = S.predictRequest(state, table);
    const reply = pageReply(body);
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    // The page asks one accelerator at a time exactly when the API reads a cluster question.
    assert.equal(isCluster(body, table), reply.settings.layout !== 'one device', 'cluster question');
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

const fromCase = async (hash) => {
  const state = await S.fromHash(hash, table);
  return { state, body: S.predictRequest(state, table), args: splitCommand(S.commandLine(state, table)).slice(1) };
};

test('12 devices on h100, gb200 and t4: the page, like the CLI, answers gb200 and t4 and refuses h100 alone', async (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const { body, args } = await fromCase('model=llama2-7b&gpus=12&hw=h100-sxm5-80gb,gb200,t4');
  // Asked alone, the API's refusal names the accelerator: a refusal of it, not of the request.
  const alone = request({ ...body, hardware: ['h100-sxm5-80gb'] });
  assert.equal(alone.error.hardware, 'h100-sxm5-80gb');
  assert.equal(request({ ...body, hardware: ['t4'], tp: 3 }).error?.hardware, undefined, 'an error of the layout is the request\'s');
  const reply = pageReply(body);
  const native = cli(args);
  const refused = (r) => r.results.filter((x) => x.error).map((x) => x.hardware);
  assert.deepEqual(refused(reply), ['h100-sxm5-80gb']);
  assert.deepEqual(refused(reply), refused(native));
  assert.deepEqual(buildRows(reply, { hardware: new Map() }).map((r) => r.id), ['gb200', 't4']);
  assert.deepEqual(refusedRows(reply).map((r) => r.id), ['h100-sxm5-80gb']);
});

test("the page's rows carry the API's run: steps over the global batch, energy from the matmul share", async (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const { body, args } = await fromCase('model=gpt2&gpus=4&accum=2&tokens=5e8&hw=h100-sxm5-80gb,a100-sxm4-80gb');
  const rows = buildRows(pageReply(body), { hardware: new Map() });
  const native = new Map(cli(args).results.map((r) => [r.hardware, r.run]));
  assert.equal(rows.length, 2);
  for (const row of rows) {
    for (const key of ['steps', 'hours', 'gpu_hours', 'cost_usd', 'energy_kwh']) close(row.run[key], native.get(row.id)[key], `${row.id} run.${key}`, 1e-6);
    assert.equal(row.energy, row.run.energy_kwh);
  }
});

test('choice labels are the option table\'s: every optimizer is named in the assumptions', async (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const optimizer = table.byName.get('optimizer');
  for (const choice of optimizer.choices) {
    const { state, body } = await fromCase(`model=gpt2&optimizer=${choice}&hw=t4`);
    const reply = pageReply(body);
    const html = assumptionsHtml(reply, buildRows(reply, { hardware: new Map() }), { state, table });
    assert.ok(optimizer.choice_labels[choice], `${choice} has a label`);
    assert.ok(html.includes(`with the ${optimizer.choice_labels[choice]} optimizer`), `${choice}: ${html.slice(0, 300)}`);
  }
});

test('the assumptions name the other settings by their field and choice labels, and a LoRA base as what it is', async (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const words = async (hash) => {
    const { state, body } = await fromCase(hash);
    const reply = pageReply(body);
    return assumptionsHtml(reply, buildRows(reply, { hardware: new Map() }), { state, table });
  };
  const qlora = await words('model=llama2-7b&ft=qlora&precision=bf16&hw=rtx-4090');
  const label = (name, value) => `${table.byName.get(name).label} ${table.byName.get(name).choice_labels?.[value] ?? value}`;
  for (const part of [label('finetune', 'qlora'), label('quantization', 'nf4'), label('lora_rank', 8), label('lora_targets', 'q,v')])
    assert.ok(qlora.includes(part), `${part}: ${qlora}`);
  // The frozen base has no fp32 master weights (the adapters train beside it): not the half recipe's general words.
  assert.ok(qlora.includes('the frozen base in half precision'), qlora);
  assert.ok(!qlora.includes(table.byName.get('mixed').choice_labels.half), qlora);
  // Settings at their field's default (expert-parallel overlap, the loss, the framework) say nothing of this run.
  const pretrain = await words('model=gpt2&hw=t4');
  for (const name of ['ep_overlap', 'loss', 'framework']) assert.ok(!pretrain.includes(table.byName.get(name).label), `${name}: ${pretrain}`);
  assert.ok(!pretrain.includes(table.byName.get('finetune').choice_labels.none), pretrain);
  assert.ok(!/ep overlap|finetune none/.test(pretrain), pretrain);
});

test('a pinned plan fixes the layout rows the table marks: asked again, the CLI answers that plan, not searched', async (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const { state } = await fromCase('model=llama2-7b&gpus=8&hw=h100-sxm5-80gb');
  const plan = pageReply(S.predictRequest(state, table)).results[0].plan;
  assert.ok(plan.searched);
  const pinned = { ...state, ...layoutPatch(plan, table) };
  for (const row of table.rows.filter((r) => r.layout)) assert.ok(pinned[row.name] != null || !plan[row.name], `${row.name} pinned`);
  const again = cli(splitCommand(S.commandLine(pinned, table)).slice(1)).results[0].plan;
  for (const row of table.rows.filter((r) => r.layout)) assert.deepEqual(again[row.name], plan[row.name], row.name);
  assert.equal(again.searched, false);
});

test("a custom sheet is checked by the API's rules: the page's check and the CLI refuse the same sheet alike", (t) => {
  if (missing) return t.skip(`${missing} not found; run: bash scripts/build.sh native wasm`);
  const sheet = { id: 'custom-x', name: 'X', peak_tflops: { bf16: 100 }, memory: { capacity_gb: 0, bandwidth_gbps: 1000 } };
  const checked = request({ command: 'hardware', custom_hardware: [sheet] });
  assert.equal(checked.error.field, 'custom_hardware');
  assert.match(checked.error.message, /capacity_gb/);
  const file = join(mkdtempSync(join(tmpdir(), 'prenet-')), 'custom-x.json');
  writeFileSync(file, JSON.stringify(sheet));
  assert.throws(() => cli(['predict', '--model', 'gpt2', '--hardware', file, '--json']), /capacity_gb/);
  const good = { ...sheet, memory: { capacity_gb: 80, bandwidth_gbps: 1000 } };
  assert.equal(request({ command: 'hardware', custom_hardware: [good] }).hardware[0].id, 'custom-x');
});
