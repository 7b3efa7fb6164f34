// web/js/results/'s pure parts: rows from a predict reply (the budget the API used, the API's run with the page's
// price edits and nothing worked out in the page), sorting and the best choice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvCell, toCsv } from '../../web/js/results/export.js';
import { budgetOf, buildRows } from '../../web/js/results/rows.js';
import { frameworkBadge, precisionBadge, renderTable, sortRows } from '../../web/js/results/table.js';
import { pickBest } from '../../web/js/results/verdict.js';

const result = (hardware, total_ms, { fits = true, price = 2, run = null } = {}) => ({
  hardware,
  name: hardware.toUpperCase(),
  step: { total_ms },
  throughput: { samples_per_s: 8000 / total_ms },
  memory: { fits, peak_bytes_per_device: 1e9, capacity_bytes: 8e10 },
  price_per_hour: price,
  ...(run ? { run } : {}),
});
const hardware = new Map([['a', { vendor: 'x', tdp_w: 400 }], ['b', { vendor: 'y', tdp_w: 700 }]]);

test('the budget is the one the API used (settings); none when it echoes none', () => {
  assert.deepEqual(budgetOf({ settings: { tokens: 5e8, samples: null } }), { tokens: 5e8 });
  assert.deepEqual(budgetOf({ settings: { tokens: null, samples: 1000, epochs: 2 } }), { samples: 1000, epochs: 2 });
  assert.equal(budgetOf({ settings: {}, model: { tokens_per_sample: 1024 } }), null);
});

test('without a `run` in the reply, a row has no time to train, cost or energy: the page works none out', () => {
  const reply = { settings: { batch: 8, tokens: 8192 * 100, samples: null }, model: { tokens_per_sample: 1024 }, results: [result('a', 360)] };
  const [row] = buildRows(reply, { hardware });
  assert.equal(row.run, null);
  assert.equal(row.hours, undefined);
  assert.equal(row.cost, null);
  assert.equal(row.energy, null);
  assert.equal(row.price, 2, 'the price is still shown');
});

test("the API's run is used as it is; a price edited on the page reprices its GPU-hours", () => {
  const run = { steps: 10, hours: 3, gpu_hours: 3, cost_usd: 6, energy_kwh: 1 };
  const reply = { settings: { batch: 8 }, model: {}, results: [result('a', 10, { run }), result('b', 5, { run: { ...run, cost_usd: 9 } })] };
  const rows = buildRows(reply, { hardware, prices: { b: 1 } });
  assert.equal(rows[0].cost, 6);
  assert.deepEqual(rows[0].run, run);
  assert.equal(rows[1].cost, 3, '3 GPU-hours at the edited $1/h');
  assert.equal(rows[1].energy, 1);
  assert.equal(rows[1].priceEdited, true);
});

test('best choice: the cheapest that fits, else the fastest; missing values sort last either way', () => {
  const run = (cost_usd) => ({ steps: 100, hours: 1, gpu_hours: 1, cost_usd, energy_kwh: 1 });
  const reply = { settings: { batch: 8 }, model: {}, results: [result('a', 10, { price: 1, run: run(1) }), result('b', 5, { price: 4, run: run(4) }), result('c', 1, { fits: false, run: run(0.1) })] };
  const rows = buildRows(reply, { hardware });
  const pick = pickBest(rows);
  assert.equal(pick.fastest.id, 'b', 'c is faster but does not fit');
  assert.equal(pick.best.id, 'a', 'a costs less than b');
  const unpriced = buildRows({ ...reply, results: reply.results.map((r) => ({ ...r, price_per_hour: 0, run: { ...r.run, cost_usd: null } })) }, { hardware });
  assert.equal(pickBest(unpriced).best.id, 'b');
  assert.deepEqual(sortRows(rows, 'step', 1).map((r) => r.id), ['c', 'b', 'a']);
  assert.deepEqual(sortRows(rows, 'step', -1).map((r) => r.id), ['a', 'b', 'c']);
  assert.deepEqual(sortRows(unpriced, 'cost', 1).map((r) => r.cost), [null, null, null]);
});

test('a device predicted at a fallback precision is marked, with the reason as its tooltip', () => {
  const fallback = { requested: 'fp8', used: 'bf16', reason: 'no FP8 units on a (no fp8 peak on its sheet)' };
  const reply = {
    settings: { batch: 8, precision: 'fp8' },
    model: {},
    results: [
      { ...result('a', 10), matmul_precision_used: 'bf16', precision_fallback: fallback },
      { ...result('b', 5), matmul_precision_used: 'fp8', precision_fallback: null },
    ],
  };
  const [a, b] = buildRows(reply, { hardware });
  assert.deepEqual(a.fallback, fallback);
  assert.equal(a.precisionUsed, 'bf16');
  assert.equal(b.fallback, null);
  const badge = precisionBadge(a);
  assert.match(badge, /class="badge fallback"/);
  assert.match(badge, />as bf16</);
  assert.match(badge, /title="a: no FP8 units, predicted as bf16 \(no FP8 units on a/);
  assert.equal(precisionBadge(b), '');
  const csv = toCsv([a, b], reply).trim().split('\n');
  assert.ok(csv[0].endsWith(',matmul_precision_used,framework_used'));
  assert.ok(csv[1].endsWith(',bf16,'));
  assert.ok(csv[2].endsWith(',fp8,'));
});

test('under framework auto, a device run under another framework than generic is marked with it', () => {
  // As the API answers: `framework_chosen` where auto ran a device under another framework than the request's.
  const reply = {
    settings: { batch: 8, precision: 'bf16', framework: 'auto' },
    model: {},
    results: [{ ...result('a', 10), framework_used: 'xla', framework_chosen: true },
              { ...result('b', 5), framework_used: 'generic', framework_chosen: false }],
  };
  const [a, b] = buildRows(reply, { hardware });
  assert.match(frameworkBadge(a), /class="badge framework"[^>]*>xla</);
  assert.match(frameworkBadge(a), /title="a: predicted under xla, its usual framework/);
  assert.equal(frameworkBadge(b), '');
  // An explicit framework is the request's own choice for every device: nothing to mark.
  const [asked] = buildRows({ ...reply, settings: { ...reply.settings, framework: 'xla' },
                              results: [{ ...reply.results[0], framework_chosen: false }] }, { hardware });
  assert.equal(frameworkBadge(asked), '');
  assert.ok(toCsv([a, b], reply).trim().split('\n')[1].endsWith(',xla'));
});

test('CSV cells that a spreadsheet would run as a formula get a leading apostrophe (OWASP CSV injection)', () => {
  for (const hostile of ['=HYPERLINK("http://x","y")', '+1+2', '-2+3', '@SUM(A1)', '\tx', '\rx', '=cmd|\' /C calc\'!A0'])
    assert.equal(csvCell(hostile), `"'${hostile.replace(/"/g, '""')}"`, JSON.stringify(hostile));
  // Numbers stay numbers (negative ones too); ordinary text is as it was.
  assert.equal(csvCell(-1.5), '-1.5');
  assert.equal(csvCell(0), '0');
  assert.equal(csvCell(true), 'true');
  assert.equal(csvCell('a100-sxm4-80gb'), 'a100-sxm4-80gb');
  assert.equal(csvCell('a, "b"'), '"a, ""b"""');
  assert.equal(csvCell('line\nbreak'), '"line\nbreak"');
  assert.equal(csvCell(null), '');
  // Through toCsv: a custom accelerator and a model named like formulas.
  const reply = { settings: { batch: 8, precision: 'bf16' }, model: { name: '@evil' }, results: [{ ...result('=1+1', 10), name: '-2+3' }] };
  const rows = buildRows(reply, { hardware });
  const [, line] = toCsv(rows, reply).trim().split('\n');
  assert.ok(line.startsWith(`"'=1+1","'-2+3","'@evil",8,`), line);
});

test('the results table escapes names and carries no style attribute (the CSP blocks them)', () => {
  const reply = { settings: { batch: 8 }, model: {}, results: [{ ...result('x"><img src=x onerror=alert(1)>', 10), name: '<script>alert(1)</script>' }] };
  const rows = buildRows(reply, { hardware });
  const table = { innerHTML: '' };
  renderTable(table, rows, { sort: 'step', dir: 1, selected: null, best: null, fastest: null, language: false });
  assert.doesNotMatch(table.innerHTML, /<script|<img/);
  assert.match(table.innerHTML, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.doesNotMatch(table.innerHTML, /style=/);
  assert.match(table.innerHTML, /data-width="\d+(\.\d+)?%"/);
});

test('the CSV says what each row ran on: devices, plan, the micro-batch it runs, MFU and fine-tuning', () => {
  const plan = { gpus: 8, dp: 8, tp: 1, pp: 1, cp: 1, zero: 3, micro_batch: 2, grad_accum: 4, global_batch: 64, checkpointing: 'none' };
  const reply = {
    settings: { batch: 8, grad_accum: 1, global_batch: null, devices: 8, finetune: 'lora', lora_rank: 16, precision: 'bf16' },
    model: { name: 'llama2-7b', params: 6.7e9, trainable_params: 8e6 },
    results: [{ ...result('a', 100), plan, throughput: { samples_per_s: 80, mfu: 0.42 } }],
  };
  const [header, line] = toCsv(buildRows(reply, { hardware }), reply).trim().split('\n');
  const cells = Object.fromEntries(header.split(',').map((k, i) => [k, line.split(',')[i]]));
  assert.ok(!header.split(',').includes('batch'), 'no unlabelled batch column');
  assert.equal(cells.micro_batch, '2', 'the plan\'s micro-batch, not the request\'s');
  assert.equal(cells.grad_accum, '4');
  assert.equal(cells.global_batch, '64');
  assert.equal(cells.devices, '8');
  assert.equal(cells.plan, 'dp 8 · tp 1 · pp 1 · ZeRO 3 (micro-batch 2 × 4)');
  assert.equal(cells.mfu, '0.42');
  assert.equal(cells.finetune, 'lora');
  assert.equal(cells.lora_rank, '16');
  assert.equal(cells.trainable_params, '8000000');
  // One device, pre-training: its own words, no rank.
  const single = { settings: { batch: 8, grad_accum: 1, global_batch: 8, precision: 'bf16' }, model: { name: 'gpt2', params: 1.2e8 }, results: [result('a', 10)] };
  const [h1, l1] = toCsv(buildRows(single, { hardware }), single).trim().split('\n');
  const c1 = Object.fromEntries(h1.split(',').map((k, i) => [k, l1.split(',')[i]]));
  assert.deepEqual([c1.micro_batch, c1.devices, c1.plan, c1.finetune, c1.lora_rank, c1.trainable_params], ['8', '1', 'one device', 'none', '', '120000000']);
});
