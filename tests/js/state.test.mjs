// web/js/state.js: the page's state, its URL-hash form (links must reproduce the page, old links must keep
// working, damaged ones must fall back to the defaults) and the requests it stands for. Pure: Node only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../web/js/state.js';

const LAYERS = { name: 'tiny', input: { shape: [8] }, layers: [{ type: 'linear', out_features: 8 }, { type: 'cross_entropy' }] };
const SHEET = { id: 'custom-lab', name: 'Lab', vendor: 'custom', kind: 'gpu', peak_tflops: { fp32: 40 }, memory: { capacity_gb: 64, bandwidth_gbps: 2000 } };

test("the defaults: GPT-2 from the zoo, batch 8, bf16, AdamW, every accelerator; each fresh state is its own", () => {
  const s = S.fresh();
  assert.equal(s.source, 'zoo');
  assert.equal(s.model, 'gpt2');
  assert.equal(s.batch, 8);
  assert.equal(s.precision, 'bf16');
  assert.equal(s.optimizer, 'adamw');
  assert.equal(s.hw, null);
  assert.deepEqual(s.custom, []);
  s.custom.push(SHEET);
  s.prices.t4 = 1;
  assert.deepEqual(S.fresh().custom, []);
  assert.deepEqual(S.fresh().prices, {});
});

test('the default state is the empty hash, and the empty hash the default state', async () => {
  assert.equal(await S.toHash(S.fresh()), '');
  assert.deepEqual(await S.fromHash(''), S.fresh());
  assert.deepEqual(await S.fromHash('#'), S.fresh());
});

test('every field survives the round trip through the hash', async () => {
  const s = Object.assign(S.fresh(), {
    model: 'resnet50',
    batch: 32,
    image: 192,
    seq: 256,
    precision: 'fp16',
    optimizer: 'sgd',
    mixed: 'half',
    grad_accum: 4,
    checkpointing: true,
    optimizer_impl: 'foreach',
    samples: 50000,
    epochs: 3,
    input_samples_per_s: 2500,
    price_per_hour: 0,
    hw: ['a100-sxm4-80gb', 'l4'],
    custom: [SHEET],
    prices: { 'rtx-4090': 0.5, l4: 0.8 },
    sort: 'cost',
    dir: -1,
    sel: 'l4',
  });
  const hash = await S.toHash(s);
  assert.match(hash, /^#/);
  assert.deepEqual(await S.fromHash(hash), s);
  // Without the '#', too.
  assert.deepEqual(await S.fromHash(hash.slice(1)), s);
});

test('a model document and custom sheets are deflated into the hash and come back equal', async () => {
  const s = Object.assign(S.fresh(), { source: 'file', doc: LAYERS, docName: 'tiny.json', custom: [SHEET] });
  const hash = await S.toHash(s);
  const p = new URLSearchParams(hash.slice(1));
  assert.equal(p.get('src'), 'file');
  assert.match(p.get('doc'), /^z[\w-]+$/, 'deflated, base64url');
  assert.ok(!hash.includes('linear'), 'not in clear');
  assert.deepEqual(await S.fromHash(hash), s);
  // The uncompressed form ("j" + base64url JSON) reads too.
  const plain = `j${Buffer.from(JSON.stringify(LAYERS)).toString('base64url')}`;
  assert.deepEqual((await S.fromHash(`#src=layers&doc=${plain}`)).doc, LAYERS);
});

test("old links keep working: the hash's short keys", async () => {
  const s = await S.fromHash('#accum=4&ckpt=1&opt_impl=foreach&input_rate=500&pph=2.5&mixed=autocast&hw=none&sort=-memory');
  assert.equal(s.grad_accum, 4);
  assert.equal(s.checkpointing, true);
  assert.equal(s.optimizer_impl, 'foreach');
  assert.equal(s.input_samples_per_s, 500);
  assert.equal(s.price_per_hour, 2.5);
  assert.equal(s.mixed, 'autocast');
  assert.deepEqual(s.hw, []);
  assert.equal(s.sort, 'memory');
  assert.equal(s.dir, -1);
});

test('malformed parts fall back to the defaults; the rest of the hash still counts', async () => {
  const d = S.fresh();
  const s = await S.fromHash('#batch=abc&seq=-3&image=0&tokens=1e400&accum=&epochs=NaN&model=bert-base');
  assert.equal(s.batch, d.batch);
  assert.equal(s.seq, null);
  assert.equal(s.image, null);
  assert.equal(s.tokens, null);
  assert.equal(s.grad_accum, null);
  assert.equal(s.epochs, null);
  assert.equal(s.model, 'bert-base');
  // A damaged document falls back to the zoo; a damaged custom list to none.
  const broken = await S.fromHash('#src=layers&doc=z!!!&custom=jbm90IGpzb24');
  assert.equal(broken.source, 'zoo');
  assert.equal(broken.doc, null);
  assert.deepEqual(broken.custom, []);
  // A document source without a document is the zoo.
  assert.equal((await S.fromHash('#src=file')).source, 'zoo');
  assert.equal((await S.fromHash('#src=elsewhere')).source, 'zoo');
  // Bad price entries are skipped, good ones kept; a price may be 0, not negative.
  assert.deepEqual((await S.fromHash('#price=t4:1.5,nonsense,l4:-1,a100:x,v100:0')).prices, { t4: 1.5, v100: 0 });
  assert.equal((await S.fromHash('#mixed=bogus')).mixed, '');
  assert.equal((await S.fromHash('#ckpt=yes')).checkpointing, false);
});

test('the predict request: the state, the budget by model kind, mixed only for fp16/bf16', () => {
  const s = S.fresh();
  assert.deepEqual(S.predictRequest(s, true), {
    command: 'predict', model: 'gpt2', batch: 8, precision: 'bf16', optimizer: 'adamw', hardware: 'all', tokens: S.DEFAULT_TOKENS,
  });
  assert.deepEqual(S.predictRequest(s, false).samples, S.DEFAULT_SAMPLES);
  assert.equal(S.predictRequest(s, false).epochs, 1);
  Object.assign(s, { mixed: 'half', hw: ['t4'], custom: [SHEET], grad_accum: 2, checkpointing: true });
  const r = S.predictRequest(s, true);
  assert.equal(r.mixed, 'half');
  assert.deepEqual(r.hardware, ['t4']);
  assert.deepEqual(r.custom_hardware, [SHEET]);
  assert.equal(r.grad_accum, 2);
  assert.equal(r.checkpointing, true);
  s.precision = 'fp32';
  assert.equal('mixed' in S.predictRequest(s, true), false);
  // A document goes as it is.
  Object.assign(s, { source: 'layers', doc: LAYERS });
  assert.equal(S.predictRequest(s, false).model, LAYERS);
});

test('the features request carries only what shapes the model', () => {
  const s = Object.assign(S.fresh(), { seq: 128, hw: ['t4'], grad_accum: 4 });
  assert.deepEqual(S.featuresRequest(s), { command: 'features', model: 'gpt2', batch: 8, precision: 'bf16', seq: 128 });
  assert.equal(S.featuresRequest(s, LAYERS).model, LAYERS);
});
