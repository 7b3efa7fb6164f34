// web/js/state.js: the page's state, its URL-hash form (links must reproduce the page, old links must keep
// working, damaged ones must fall back to the defaults) and the requests it stands for, all driven by the
// API's option table (here a hand-made one in fixtures/options.json, shaped like {"command": "options"}'s
// reply; tests/browser checks the page against the real table). Pure: Node only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as S from '../../web/js/state.js';

const table = S.optionTable(JSON.parse(readFileSync(new URL('./fixtures/options.json', import.meta.url), 'utf8')));
const row = (name) => table.byName.get(name);
const LAYERS = { name: 'tiny', input: { shape: [8] }, layers: [{ type: 'linear', out_features: 8 }, { type: 'cross_entropy' }] };
const SHEET = { id: 'custom-lab', name: 'Lab', vendor: 'custom', kind: 'gpu', peak_tflops: { fp32: 40 }, memory: { capacity_gb: 64, bandwidth_gbps: 2000 } };

test('the table: training rows in table order, indexed by name', () => {
  assert.deepEqual(table.training.map((r) => r.name).slice(0, 4), ['batch', 'seq', 'image', 'precision']);
  assert.ok(!table.training.some((r) => r.page !== 'training'));
  assert.equal(row('grad_accum').url, 'accum');
  assert.deepEqual(S.optionTable(table.rows).rows, table.rows, 'a bare list reads too');
  assert.deepEqual(S.optionTable(null).rows, []);
});

test('the defaults: GPT-2 from the zoo, every row blank (its default), every accelerator; each fresh state is its own', () => {
  const s = S.fresh(table);
  assert.equal(s.source, 'zoo');
  assert.equal(s.model, 'gpt2');
  assert.equal(s.hw, null);
  for (const r of table.training) assert.equal(s[r.name], null, r.name);
  // Blank is the page's default where it has one, else the API's.
  assert.equal(S.effective(s, row('batch')), 8);
  assert.equal(S.effective(s, row('precision')), 'bf16');
  assert.equal(S.effective(s, row('optimizer')), 'adamw');
  assert.equal(S.effective(s, row('seq')), null);
  s.custom.push(SHEET);
  s.prices.t4 = 1;
  assert.deepEqual(S.fresh(table).custom, []);
  assert.deepEqual(S.fresh(table).prices, {});
});

test('the default state is the empty hash, and the empty hash the default state', async () => {
  assert.equal(await S.toHash(S.fresh(table), table), '');
  assert.deepEqual(await S.fromHash('', table), S.fresh(table));
  assert.deepEqual(await S.fromHash('#', table), S.fresh(table));
});

test('every training row survives the round trip through the hash, under its url key', async () => {
  const s = Object.assign(S.fresh(table), {
    model: 'resnet50',
    batch: 32,
    image: 192,
    seq: 256,
    precision: 'fp16',
    optimizer: 'sgd',
    mixed: 'half',
    attention: 'math',
    grad_accum: 4,
    checkpointing: true,
    optimizer_impl: 'foreach',
    samples: 50000,
    epochs: 3,
    input_samples_per_s: 2500,
    price_per_hour: 0,
    predictor: 'roofline',
    budget: 'samples',
    hw: ['a100-sxm4-80gb', 'l4'],
    custom: [SHEET],
    prices: { 'rtx-4090': 0.5, l4: 0.8 },
    sort: 'cost',
    dir: -1,
    sel: 'l4',
  });
  for (const r of table.training) if (r.name !== 'tokens') assert.notEqual(s[r.name], null, `the test sets ${r.name}`);
  const hash = await S.toHash(s, table);
  const p = new URLSearchParams(hash.slice(1));
  for (const r of table.training) if (s[r.name] != null) assert.ok(p.has(r.url), `${r.name} as ${r.url}`);
  assert.deepEqual(await S.fromHash(hash, table), s);
  assert.deepEqual(await S.fromHash(hash.slice(1), table), s, "without the '#'");
});

test('a model document and custom sheets are deflated into the hash and come back equal', async () => {
  const s = Object.assign(S.fresh(table), { source: 'file', doc: LAYERS, docName: 'tiny.json', custom: [SHEET] });
  const hash = await S.toHash(s, table);
  const p = new URLSearchParams(hash.slice(1));
  assert.equal(p.get('src'), 'file');
  assert.match(p.get('doc'), /^z[\w-]+$/, 'deflated, base64url');
  assert.ok(!hash.includes('linear'), 'not in clear');
  assert.deepEqual(await S.fromHash(hash, table), s);
  // The uncompressed form ("j" + base64url JSON) reads too.
  const plain = `j${Buffer.from(JSON.stringify(LAYERS)).toString('base64url')}`;
  assert.deepEqual((await S.fromHash(`#src=layers&doc=${plain}`, table)).doc, LAYERS);
});

test("old links keep working: the earlier page's short keys", async () => {
  const s = await S.fromHash('#batch=8&accum=4&ckpt=1&opt_impl=foreach&input_rate=500&pph=2.5&mixed=autocast&tokens=2e9&hw=none&sort=-memory', table);
  assert.equal(s.batch, 8);
  assert.equal(s.grad_accum, 4);
  assert.equal(s.checkpointing, true);
  assert.equal(s.optimizer_impl, 'foreach');
  assert.equal(s.input_samples_per_s, 500);
  assert.equal(s.price_per_hour, 2.5);
  assert.equal(s.mixed, 'autocast');
  assert.equal(s.tokens, 2e9);
  assert.equal(s.budget, '', 'tokens alone: both budgets are sent, the API picks');
  assert.deepEqual(s.hw, []);
  assert.equal(s.sort, 'memory');
  assert.equal(s.dir, -1);
  // Samples without tokens was the samples budget.
  assert.equal((await S.fromHash('#samples=50000&epochs=2', table)).budget, 'samples');
});

test("malformed parts fall back to the defaults, checked by each row's type, range and choices", async () => {
  const s = await S.fromHash('#batch=abc&seq=-3&image=0&tokens=1e400&accum=2.5&epochs=0&precision=fp64&ckpt=yes&input_rate=0&model=bert-base', table);
  for (const name of ['batch', 'seq', 'image', 'tokens', 'grad_accum', 'epochs', 'precision', 'checkpointing', 'input_samples_per_s']) assert.equal(s[name], null, name);
  assert.equal(s.model, 'bert-base');
  assert.equal((await S.fromHash('#batch=2000000000', table)).batch, null, 'above max');
  assert.equal((await S.fromHash('#pph=0', table)).price_per_hour, 0, 'min 0 included');
  // A damaged document falls back to the zoo; a damaged custom list to none.
  const broken = await S.fromHash('#src=layers&doc=z!!!&custom=jbm90IGpzb24', table);
  assert.equal(broken.source, 'zoo');
  assert.equal(broken.doc, null);
  assert.deepEqual(broken.custom, []);
  assert.equal((await S.fromHash('#src=file', table)).source, 'zoo', 'a document source without a document');
  assert.equal((await S.fromHash('#src=elsewhere', table)).source, 'zoo');
  // Bad price entries are skipped, good ones kept; a price may be 0, not negative or blank.
  assert.deepEqual((await S.fromHash('#price=t4:1.5,nonsense,l4:-1,a100:x,v100:0,h100:', table)).prices, { t4: 1.5, v100: 0 });
  assert.equal((await S.fromHash('#budget=weeks', table)).budget, '');
});

test('parseValue: what a field or a URL may hold, by row', () => {
  assert.deepEqual(S.parseValue(row('batch'), ' 16 '), { value: 16 });
  assert.deepEqual(S.parseValue(row('batch'), ''), { value: null });
  assert.ok(S.parseValue(row('batch'), '1.5').error);
  assert.ok(S.parseValue(row('batch'), '0').error);
  assert.deepEqual(S.parseValue(row('tokens'), '2.5e9'), { value: 2.5e9 });
  assert.ok(S.parseValue(row('tokens'), '0').error, 'min excluded');
  assert.deepEqual(S.parseValue(row('price_per_hour'), '0'), { value: 0 });
  assert.deepEqual(S.parseValue(row('optimizer'), 'lion'), { value: 'lion' });
  assert.ok(S.parseValue(row('optimizer'), 'LION').error);
  assert.deepEqual(S.parseValue(row('checkpointing'), '1'), { value: true });
  assert.deepEqual(S.parseValue(row('checkpointing'), '0'), { value: null });
});

test('a cluster question leaves a blank micro-batch to the plan search (the row\'s cluster_default_text); a typed one is sent', () => {
  const s = { ...S.fresh(table), checkpointing: 'selective' }; // selective checkpointing: a cluster question (its cluster_question)
  assert.equal('batch' in S.predictRequest(s, table), false);
  assert.equal(S.effective(s, row('batch'), table), null);
  assert.equal(S.searched(s, row('batch'), table), true);
  assert.doesNotMatch(S.commandLine(s, table), /--batch/);
  assert.equal(S.predictRequest({ ...s, batch: 4 }, table).batch, 4);
  // One device: the page's own batch.
  assert.equal(S.predictRequest(S.fresh(table), table).batch, 8);
  assert.equal(S.searched(S.fresh(table), row('batch'), table), false);
});

test('the command line leaves out the budget the reply says the API did not use', () => {
  const s = S.fresh(table);
  assert.match(S.commandLine(s, table), /--tokens 1000000000 --samples 1281167 --epochs 1/);
  const llm = S.commandLine(s, table, { tokens: 1e9 });
  assert.doesNotMatch(llm, /--samples|--epochs/);
  assert.match(llm, /--tokens 1000000000/);
  const cnn = S.commandLine(s, table, { samples: 1281167, epochs: 1 });
  assert.doesNotMatch(cnn, /--tokens/);
  assert.match(cnn, /--samples 1281167 --epochs 1/);
});

test('the predict request: model, accelerators, every set row, the page defaults, both budgets', () => {
  const s = S.fresh(table);
  assert.deepEqual(S.predictRequest(s, table), {
    command: 'predict', model: 'gpt2', hardware: 'all', batch: 8, precision: 'bf16', tokens: 1e9, samples: 1281167, epochs: 1,
  });
  // One budget when the page chose it.
  assert.deepEqual(Object.keys(S.predictRequest({ ...s, budget: 'tokens' }, table)).filter((k) => k in S.PAGE_DEFAULTS), ['batch', 'precision', 'tokens']);
  const samples = S.predictRequest({ ...s, budget: 'samples', samples: 5000 }, table);
  assert.equal('tokens' in samples, false);
  assert.equal(samples.samples, 5000);
  assert.equal(samples.epochs, 1);
  Object.assign(s, { mixed: 'half', hw: ['t4'], custom: [SHEET], grad_accum: 2, checkpointing: true, attention: 'math' });
  const r = S.predictRequest(s, table);
  assert.equal(r.mixed, 'half');
  assert.deepEqual(r.hardware, ['t4']);
  assert.deepEqual(r.custom_hardware, [SHEET]);
  assert.equal(r.grad_accum, 2);
  assert.equal(r.checkpointing, true);
  assert.equal(r.attention, 'math');
  // Every key is a row of the table (the API rejects any other).
  for (const key of Object.keys(r)) if (key !== 'command') assert.ok(table.byName.has(key), key);
  // mixed is a choice with fp16/bf16 only: the row's choice_with, as the option table serves it.
  s.precision = 'fp32';
  assert.equal('mixed' in S.predictRequest(s, table), false);
  // A document goes as it is.
  Object.assign(s, { source: 'layers', doc: LAYERS });
  assert.equal(S.predictRequest(s, table).model, LAYERS);
});

test("a row's default_with wins over the page's own default while its condition holds (a fine-tune's micro-batch)", () => {
  const rows = [
    { name: 'finetune', page: 'training', type: 'choice', choices: ['none', 'full', 'lora'], default: 'none', commands: ['predict'] },
    { name: 'batch', page: 'training', type: 'count', default: 1, default_with: { when: { finetune: ['full', 'lora'] }, value: 1 }, commands: ['predict'] },
  ];
  const t = S.optionTable({ options: rows });
  const s = S.fresh(t);
  const batch = t.byName.get('batch');
  // Pre-training: the page's own batch (8), sent so the command line shows it.
  assert.equal(S.effective(s, batch, t), S.PAGE_DEFAULTS.batch);
  assert.equal(S.predictRequest(s, t).batch, S.PAGE_DEFAULTS.batch);
  // A fine-tune: the table's value; a typed value still wins.
  s.finetune = 'lora';
  assert.equal(S.pageDefault(s, batch, t), 1);
  assert.equal(S.predictRequest(s, t).batch, 1);
  s.batch = 4;
  assert.equal(S.predictRequest(s, t).batch, 4);
});

test("whether a row applies is the option table's: every condition of its applies_with and choice_with", () => {
  const rows = [
    { name: 'finetune', page: 'training', type: 'choice', choices: ['none', 'lora', 'qlora'], default: 'none' },
    { name: 'precision', page: 'training', type: 'choice', choices: ['fp32', 'bf16'], default: 'fp32' },
    { name: 'lora_rank', page: 'training', type: 'count', applies_with: { finetune: ['lora', 'qlora'] } },
    { name: 'mixed', page: 'training', type: 'choice', choices: ['autocast', 'half'], choice_with: { precision: ['bf16'], finetune: ['none'] } },
    { name: 'gone', page: 'training', type: 'count', applies_with: { absent: ['x'] } },
  ];
  const t = S.optionTable({ options: rows });
  const s = S.fresh(t);
  const row = (name) => t.byName.get(name);
  assert.equal(S.applies(s, row('lora_rank'), t), false);
  assert.equal(S.applies({ ...s, finetune: 'qlora' }, row('lora_rank'), t), true);
  assert.equal(S.applies(s, row('mixed'), t), true, 'bf16 is the page default');
  assert.equal(S.applies({ ...s, precision: 'fp32' }, row('mixed'), t), false);
  assert.equal(S.applies({ ...s, finetune: 'lora' }, row('mixed'), t), false);
  assert.equal(S.applies(s, row('gone'), t), true, 'a condition on a row the table lacks holds');
  assert.deepEqual(['finetune', 'lora_rank', 'mixed'].map((n) => S.conditional(row(n))), [false, true, true]);
});

test('the features request carries only the rows the features command takes', () => {
  const s = Object.assign(S.fresh(table), { seq: 128, hw: ['t4'], grad_accum: 4, optimizer: 'sgd' });
  assert.deepEqual(S.featuresRequest(s, table), { command: 'features', model: 'gpt2', batch: 8, seq: 128, precision: 'bf16' });
  assert.equal(S.featuresRequest(s, table, LAYERS).model, LAYERS);
});

test("the CLI's own option table: every training row round-trips through the hash and reaches the command line", async (t) => {
  const prenet = new URL('../../build/prenet', import.meta.url).pathname;
  const { existsSync } = await import('node:fs');
  if (!existsSync(prenet)) return t.skip(`${prenet} not found; build it with: bash scripts/build.sh native`);
  const { execFileSync } = await import('node:child_process');
  const real = S.optionTable(JSON.parse(execFileSync(prenet, ['options', '--json'], { encoding: 'utf8' })));
  assert.ok(real.training.length >= 10);
  // A value each row allows, other than its default (a text row's from the tests' examples).
  const examples = JSON.parse(readFileSync(new URL('../fixtures/option-examples.json', import.meta.url), 'utf8')).rows;
  const sample = (r) =>
    r.type === 'flag' ? true : r.type === 'choice' ? r.choices.find((c) => c !== r.default && c !== S.PAGE_DEFAULTS[r.name])
      : r.type === 'text' ? examples[r.name]?.value ?? 'x' : r.min_exclusive ? r.min + 0.5 : r.min + 1;
  const s = S.fresh(real);
  for (const r of real.training) {
    assert.ok(r.url, `${r.name} has a URL key`);
    s[r.name] = sample(r);
    assert.deepEqual(S.parseValue(r, String(s[r.name])), { value: s[r.name] }, `${r.name}: its own value reads back`);
  }
  s.precision = 'bf16'; // mixed applies to fp16/bf16 only
  s.budget = '';
  assert.deepEqual(await S.fromHash(await S.toHash(s, real), real), s);
  // Rows that apply only with some fine-tuning modes (the LoRA rows, the frozen parts) reach the line with them.
  const shown = new Set();
  for (const finetune of ['lora', 'freeze']) {
    s.finetune = finetune;
    const line = S.commandLine(s, real);
    for (const r of real.training)
      if (r.commands.includes('predict') && r.flag && S.applies(s, r, real)) {
        assert.ok(line.includes(` ${r.flag}`), `${r.flag} in ${line}`);
        shown.add(r.name);
      }
  }
  for (const r of real.training) if (r.commands.includes('predict') && r.flag) assert.ok(shown.has(r.name), r.name);
});

test('hostile hashes: huge, markup, bad numbers and inflation bombs fall back to the defaults', async () => {
  const defaults = await S.toHash(S.fresh(table), table);
  // A hash past the limit is ignored as a whole.
  const huge = await S.fromHash(`#batch=16&model=${'a'.repeat(S.LIMITS.hash)}`, table);
  assert.equal(await S.toHash(huge, table), defaults);
  // Markup and control characters in ids, names and keys are dropped.
  const markup = await S.fromHash(
    `#${new URLSearchParams({
      model: '<img src=x onerror=alert(1)>',
      hw: 'a100-sxm4-80gb,"><script>alert(1)</script>,t4,t4',
      sel: '<b>x</b>',
      sort: 'step;background:url(x)',
      price: '<i>:1,t4:2,t4"onmouseover=x:3',
      src: 'file',
      doc: 'j' + Buffer.from(JSON.stringify(LAYERS)).toString('base64url'),
      name: `evil\u0000\u001b[31m${'x'.repeat(300)}`,
    })}`,
    table,
  );
  assert.equal(markup.model, 'gpt2');
  assert.deepEqual(markup.hw, ['a100-sxm4-80gb', 't4']);
  assert.equal(markup.sel, null);
  assert.equal(markup.sort, S.fresh(table).sort);
  assert.deepEqual(markup.prices, { t4: 2 });
  assert.equal(markup.docName, '', 'a name past the limit');
  assert.equal((await S.fromHash(`#src=file&doc=${await S.pack(LAYERS)}&name=a%00b%1Bc.json`, table)).docName, 'abc.json');
  // Bad numbers: each row's parser refuses them.
  for (const bad of ['1e999', 'NaN', 'Infinity', '-Infinity', '0x10', '1e', '--1', '9'.repeat(400), '<b>8</b>'])
    assert.equal((await S.fromHash(`#batch=${encodeURIComponent(bad)}`, table)).batch, null, bad);
  // An inflation bomb (a few kB of deflate, 20 MB of JSON) is refused like a damaged document.
  const bomb = await S.pack({ name: 'x'.repeat(20_000_000) });
  assert.ok(bomb.length < 100_000, `${bomb.length}`);
  const bombed = await S.fromHash(`#src=layers&doc=${bomb}&custom=${bomb}`, table);
  assert.equal(bombed.source, 'zoo');
  assert.equal(bombed.doc, null);
  assert.deepEqual(bombed.custom, []);
  await assert.rejects(S.unpack(bomb, table.limits), /longer than/);
  // A document must be an object; custom sheets need a well-formed id and a clean name; at most LIMITS.custom.
  assert.equal((await S.fromHash(`#src=layers&doc=${await S.pack([1, 2])}`, table)).source, 'zoo');
  const sheets = [SHEET, { ...SHEET, id: '<x>' }, { ...SHEET, id: 'custom-b', name: '\u0007bell' }, { ...SHEET, name: 7 }, null, 'x'];
  assert.deepEqual((await S.fromHash(`#custom=${await S.pack(sheets)}`, table)).custom, [SHEET]);
  const many = Array.from({ length: 100 }, (_, i) => ({ ...SHEET, id: `custom-${i}` }));
  assert.equal((await S.fromHash(`#custom=${await S.pack(many)}`, table)).custom.length, S.LIMITS.custom);
  // Invalid UTF-8 in a packed value and a bad packing tag.
  assert.equal((await S.fromHash(`#src=layers&doc=j${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}`, table)).source, 'zoo');
  assert.equal((await S.fromHash(`#src=layers&doc=q${Buffer.from(JSON.stringify(LAYERS)).toString('base64url')}`, table)).source, 'zoo');
  // Many ids: at most LIMITS.ids.
  assert.equal(S.hardwareIds(Array.from({ length: 5000 }, (_, i) => `hw${i}`).join(',')).length, S.LIMITS.ids);
});

test('what a link carries but the page cannot use is said in notes, in the page\'s words', async () => {
  // Nested past the API's limit: refused before anything recurses over it (JSON.stringify would overflow).
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const deepDoc = `{"input": {"shape": [4]}, "layers": [{"type": "linear", "out_features": ${deep}}]}`;
  const packed = 'j' + Buffer.from(deepDoc).toString('base64url');
  await assert.rejects(S.unpack(packed, table.limits), /nested more than 64 levels deep/);
  let notes = [];
  const s = await S.fromHash(`#src=layers&doc=${packed}`, table, notes);
  assert.equal(s.source, 'zoo');
  assert.equal(notes.length, 1);
  assert.match(notes[0], /^The link's model could not be used \(it is nested more than 64 levels deep \(the limit on JSON nesting\)\)/);
  // Custom sheets: the ones left out are counted; a list that is not one is said as such.
  notes = [];
  const sheets = [SHEET, { ...SHEET, id: '<x>' }, { ...SHEET, name: 7 }];
  assert.deepEqual((await S.fromHash(`#custom=${await S.pack(sheets)}`, table, notes)).custom, [SHEET]);
  assert.match(notes.join(), /2 of the link's 3 custom accelerators were left out/);
  notes = [];
  await S.fromHash(`#custom=${await S.pack({ not: 'a list' })}`, table, notes);
  assert.deepEqual(notes, ["The link's custom accelerators could not be used (it is not a list)."]);
  // A good link says nothing.
  notes = [];
  await S.fromHash(`#src=layers&doc=${await S.pack(LAYERS)}&custom=${await S.pack([SHEET])}`, table, notes);
  assert.deepEqual(notes, []);
});

test('a link\'s values the page refuses and ids the catalogues lack are each said in a note; the rest are kept', async () => {
  let notes = [];
  const s = await S.fromHash('#batch=abc&seq=512&precision=fp7&hw=zzz,h100-sxm5-80gb,<x>', table, notes);
  assert.equal(s.batch, null);
  assert.equal(s.precision, null);
  assert.equal(s.seq, 512);
  assert.equal(notes.length, 2, notes.join(' | '));
  assert.match(notes[0], /Batch size \(batch=abc\) must be a number; Precision \(precision=fp7\) must be one of /);
  assert.match(notes[1], /does not know \(<x>\): left out, the others are shown/);
  // Once the catalogues are known: zzz goes, the H100 stays; a model the zoo lacks becomes the default.
  assert.deepEqual(s.hw, ['zzz', 'h100-sxm5-80gb']);
  const meta = { zooById: new Map([['gpt2', {}], ['bert-base', {}]]), hardwareById: new Map([['h100-sxm5-80gb', {}], ['t4', {}]]) };
  notes = [];
  assert.equal(S.keepKnown(s, meta, notes), true);
  assert.deepEqual(s.hw, ['h100-sxm5-80gb']);
  assert.deepEqual(notes, ['The link names an accelerator the page does not know (zzz): left out, the others are shown.']);
  notes = [];
  const only = await S.fromHash('#model=nosuch&hw=zzz', table, notes);
  assert.equal(S.keepKnown(only, meta, notes), true);
  assert.equal(only.model, 'gpt2');
  assert.equal(only.hw, null);
  assert.match(notes.join(' '), /model nosuch is not a built-in model: the page shows its default, gpt2, instead/);
  assert.match(notes.join(' '), /\(zzz\): every accelerator is shown instead/);
  // Known ids: nothing changes, nothing is said.
  notes = [];
  const good = await S.fromHash('#model=bert-base&hw=t4', table, notes);
  assert.equal(S.keepKnown(good, meta, notes), false);
  assert.deepEqual([good.model, good.hw, notes], ['bert-base', ['t4'], []]);
});
