// The pure parts of the page's answers to #14: cluster requests split and merged (web/js/cluster.js), the
// plan in words and as fields, what makes a row fit (results/fixes.js, in the page's words), the LLM defaults,
// exports neutralised, pinned scenarios in the hash, the widget's words and the embed snippets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { achievedTflops, isCluster, layoutPatch, mergeReplies, planText, splitRequest } from '../../web/js/cluster.js';
import { differences } from '../../web/js/panels/compare.js';
import { llmDefaults } from '../../web/js/results/assumptions.js';
import { neutralised } from '../../web/js/results/export.js';
import { fitSuggestions, fixes } from '../../web/js/results/fixes.js';
import { buildRows } from '../../web/js/results/rows.js';
import { pickBest, verdictHtml } from '../../web/js/results/verdict.js';
import { embedSnippets } from '../../web/js/snippets.js';
import * as S from '../../web/js/state.js';
import { budgetWords, queryProblems, widgetMessage } from '../../web/js/widget-words.js';

const table = S.optionTable(JSON.parse(readFileSync(new URL('./fixtures/options.json', import.meta.url), 'utf8')));
// Cluster rows as the options reply serves them: each a cluster question when given (gpus above 1), the layout's
// dimensions marked `layout`.
const row = (name, extra) => ({ name, page: 'cluster', cluster_question: 'given', ...extra });
const dim = (name, url, type = 'count') => row(name, { type, url, advanced: true, layout: true });
const cluster = S.optionTable({ limits: table.limits, options: [...table.rows.filter((r) => r.name !== 'checkpointing'), row('gpus', { type: 'count', integer: true, url: 'gpus', min: 1, label: 'Accelerators', cluster_question: { above: 1 } }), row('gpus_per_node', { type: 'count', url: 'gpn' }), dim('dp', 'dp'), dim('tp', 'tp'), dim('pp', 'pp'), dim('zero', 'zero'), dim('sequence_parallel', 'sp', 'flag'), row('global_batch_tokens', { type: 'count', url: 'gtokens' }), row('global_batch', { type: 'count', url: 'gbatch' }), { name: 'attention', page: 'training', type: 'choice', choices: ['flash', 'eager'], url: 'attn' }, { name: 'checkpointing', page: 'training', type: 'flag', switch_values: ['full', 'selective', 'none'], url: 'ckpt', cluster_question: { is: 'selective' } }] });

test('a cluster question, as the rows’ cluster_question says: more devices, any cluster option, selective recompute', () => {
  assert.equal(isCluster({ gpus: 1 }, cluster), false);
  assert.equal(isCluster({ gpus: 1, attention: 'flash', checkpointing: 'full' }, cluster), false);
  assert.equal(isCluster({ gpus: 1, gpus_per_node: 4 }, cluster), true);
  assert.equal(isCluster({ gpus: 8 }, cluster), true);
  assert.equal(isCluster({ tp: 2 }, cluster), true);
  assert.equal(isCluster({ global_batch_tokens: 1 << 20 }, cluster), true);
  assert.equal(isCluster({ sequence_parallel: false }, cluster), true, 'given is given, as the API reads it');
  assert.equal(isCluster({ checkpointing: 'selective' }, cluster), true);
});

test('asked one accelerator at a time, answered as one reply; a refused sheet is a row, any other error the request’s', () => {
  const request = { command: 'predict', model: 'm', hardware: 'all', gpus: 8, custom_hardware: [{ id: 'custom-x', name: 'X' }] };
  const chunks = splitRequest(request, ['a', 'b', 'c']);
  assert.deepEqual(chunks.map((c) => [c.hardware, c.custom_hardware?.map((s) => s.id)]), [[['a'], undefined], [['b'], undefined], [['c'], undefined], [[], ['custom-x']]]);
  assert.ok(chunks.every((c) => c.gpus === 8 && c.model === 'm'));
  assert.deepEqual(splitRequest({ hardware: ['a', 'b', 'c'] }, [], 2).map((c) => c.hardware), [['a', 'b'], ['c']]);
  const ok = (id) => ({ doc: { settings: { gpus: 8 }, model: { name: 'm' }, results: [{ hardware: id }] }, error: null });
  // The API names the accelerator it refused (error.hardware), whatever the error's code and field.
  const refused = { doc: {}, error: { code: 'invalid_value', field: 'gpus', message: '12 devices do not fill whole nodes of 8', hardware: 'b' } };
  const merged = mergeReplies([ok('a'), refused, ok('c')], chunks.slice(0, 3), new Map([['b', 'B']]));
  assert.equal(merged.error, null);
  assert.deepEqual(merged.doc.results.map((r) => r.hardware), ['a', 'b', 'c']);
  assert.deepEqual(merged.doc.results[1], { error: { code: 'invalid_value', field: 'gpus', message: refused.error.message }, hardware: 'b', name: 'B' });
  assert.deepEqual(merged.doc.settings, { gpus: 8 });
  assert.equal(mergeReplies([refused], chunks.slice(1, 2)).error, refused.error, 'every part refused: the request’s error');
  const layout = { doc: {}, error: { code: 'invalid_value', field: 'tp', message: 'tp 3 does not divide the 8 devices' } };
  assert.equal(mergeReplies([ok('a'), layout], chunks.slice(0, 2)).error, layout.error);
});

test('a plan in words, pinned as the fields that fix it; achieved TFLOP/s', () => {
  const plan = { gpus: 16, dp: 4, tp: 2, pp: 2, cp: 1, ep: 1, vp: 1, zero: 1, sequence_parallel: true, schedule: '1f1b', micro_batch: 1, grad_accum: 8, checkpointing: 'selective', searched: true };
  assert.equal(planText(plan), 'dp 4 · tp 2 · pp 2 · ZeRO 1 (sequence parallel, 1f1b, micro-batch 1 × 8, selective checkpointing)');
  assert.equal(planText({ ...plan, zero: 0, pp: 1, sequence_parallel: false, checkpointing: 'none', grad_accum: 1 }), 'dp 4 · tp 2 · pp 1 · DDP (micro-batch 1)');
  // One replica: no data parallelism to name (a pipeline on 8 devices, or one device).
  assert.equal(planText({ ...plan, dp: 1, zero: 0, pp: 8, tp: 1, sequence_parallel: false, checkpointing: 'full', grad_accum: 256 }), 'dp 1 · tp 1 · pp 8 (1f1b, micro-batch 1 × 256, full checkpointing)');
  assert.deepEqual(layoutPatch(plan, cluster), { dp: 4, tp: 2, pp: 2, zero: 1, sequence_parallel: true, batch: 1, checkpointing: 'selective' });
  assert.equal(achievedTflops(0.5, { bf16: 989 }, 'bf16'), 494.5);
  assert.equal(achievedTflops(null, { bf16: 989 }, 'bf16'), null);
  // The checkpointing flag takes its words too (from a link, from a pinned plan), and writes them back.
  const state = S.fresh(cluster);
  state.checkpointing = 'selective';
  assert.equal(S.parseValue(cluster.byName.get('checkpointing'), 'selective').value, 'selective');
});

// The memory advice of llama2-7b, batch 8, bf16 on a B200 (from the CLI).
const advice = {
  checkpointing: { fits: true, micro_batch: null, peak_bytes: 157.7e9 },
  fsdp_devices: null,
  micro_batch: { batch: 1, grad_accum: 8, largest_fitting_batch: 1, peak_bytes: 155.3e9 },
  over_bytes: 246e9,
  smallest_hardware: { batch: 1, capacity_bytes: 128e9, checkpointing: true, grad_accum: 8, id: 'mi250', peak_bytes: 120e9, price_per_hour: 0 },
  summary: 'needs 438.0 GB; fits with --batch 1 --grad-accum 8 (same global batch), with --checkpointing (157.7 GB), or on mi250',
};
const nofit = (id, extra = {}) => ({ hardware: id, name: id.toUpperCase(), step: { total_ms: 10 }, throughput: {}, memory: { fits: false, peak_bytes_per_device: 438e9, capacity_bytes: 192e9, advice, ...extra }, price_per_hour: 1 });

test('what makes a row fit, in the page’s words (names, no flags), each a state change', () => {
  const [b200] = buildRows({ settings: { batch: 8 }, model: {}, results: [nofit('b200')] }, { hardware: new Map() });
  const nameOf = (id) => ({ mi250: 'AMD Instinct MI250' })[id] ?? id;
  const list = fixes(b200, { nameOf });
  // The API names only accelerators the request asked about, so a change never adds one to the list.
  assert.deepEqual(list.map((f) => f.patch), [{ batch: 1, grad_accum: 8 }, { checkpointing: true }, { batch: 1, grad_accum: 8, checkpointing: true }]);
  assert.deepEqual(list.map((f) => f.text), [
    'micro-batch 1 with 8× gradient accumulation (the same samples per step)',
    'activation checkpointing',
    'AMD Instinct MI250 (119 GiB) with micro-batch 1 × 8 accumulation and activation checkpointing',
  ]);
  for (const f of list) assert.doesNotMatch(f.text, /--|mi250/);
  // The verdict offers the same changes as buttons, and says nothing fits only when nothing does.
  const rows = buildRows({ settings: { batch: 8 }, model: {}, results: [nofit('b200'), nofit('h100', { advice: { ...advice, micro_batch: null, checkpointing: { fits: false } } })] }, { hardware: new Map() });
  const html = verdictHtml(rows, pickBest(rows), { nameOf, hw: null });
  assert.match(html, /Nothing fits with these settings/);
  // Several changes, each of which alone makes it fit: the words say so (not "One change").
  assert.match(html, /Any of these changes makes it fit:/);
  assert.doesNotMatch(html, /One change/);
  assert.match(html, /data-apply="\{&quot;checkpointing&quot;:true\}">Use activation checkpointing<\/button> <span class="hint">fits on B200/);
  assert.doesNotMatch(html.replace(/data-apply="[^"]*"/g, ''), /--|mi250/);
  assert.equal(fitSuggestions(rows, { nameOf })[0].names.length, 1);
  // A cluster's advice: the devices it fits on.
  const [c] = buildRows({ settings: {}, model: {}, results: [nofit('h100', { advice: { fits_on: { gpus: 32, dp: 8, tp: 4, pp: 1, zero: 3, checkpointing: 'full', micro_batch: 8 } } })] }, { hardware: new Map() });
  assert.deepEqual(fixes(c).map((f) => [f.text, f.patch]), [['32 devices (for example dp 8 · tp 4 · pp 1 · ZeRO 3 (micro-batch 8, full checkpointing))', { gpus: 32 }]]);
});

test('ranked changes: the cheapest first, each applied as its option values, in the page’s words', () => {
  const changes = [
    { flags: '--loss chunked', options: { loss: 'chunked' }, peak_reserved_bytes: 70e9, step_ms: 100, step_increase: 0 },
    { flags: '--checkpointing full', options: { checkpointing: 'full' }, peak_reserved_bytes: 60e9, step_ms: 128, step_increase: 0.28 },
    { flags: '--batch 2 --grad-accum 4', options: { batch: 2, grad_accum: 4 }, peak_reserved_bytes: 75e9, step_ms: 110, step_increase: 0.1 },
  ];
  const [row] = buildRows({ settings: { batch: 8 }, model: {}, results: [nofit('h100', { advice: { ...advice, changes } })] }, { hardware: new Map() });
  const list = fixes(row);
  // The reply's order is kept (the API ranks); the old micro-batch and checkpointing entries give way to it.
  assert.deepEqual(list.slice(0, 3).map((f) => f.patch), changes.map((c) => c.options));
  assert.deepEqual(list.slice(0, 3).map((f) => f.text), [
    'chunked cross-entropy loss (65.2 GiB reserved, step +0%)',
    'full activation checkpointing (55.9 GiB reserved, step +28%)',
    'micro-batch 2 × 4 accumulation (69.8 GiB reserved, step +10%)',
  ]);
  assert.ok(!list.some((f) => f.key === JSON.stringify({ checkpointing: true })));
  // A micro-batch below the largest that fits says why: only a divisor keeps the global batch (issue #26).
  const awkward = { flags: '--batch 11 --grad-accum 9090909', options: { batch: 11, grad_accum: 9090909 }, peak_reserved_bytes: 19e9, step_ms: 90, step_increase: -0.11, largest_fitting_batch: 15 };
  const [odd] = fixes(buildRows({ settings: { batch: 99999999 }, model: {}, results: [nofit('rtx-4090', { advice: { ...advice, changes: [awkward] } })] }, { hardware: new Map() })[0]);
  assert.equal(odd.text, 'micro-batch 11 × 9,090,909 accumulation (17.7 GiB reserved, step −11%; 11 is the largest micro-batch that divides the global batch of 99,999,999, up to 15 fit)');
  // Over several accelerators: the most accelerators first, then the cheaper change.
  const other = nofit('b200', { advice: { ...advice, changes: [changes[2], changes[1]] } });
  const rows = buildRows({ settings: { batch: 8 }, model: {}, results: [nofit('h100', { advice: { ...advice, changes } }), other] }, { hardware: new Map() });
  assert.deepEqual(fitSuggestions(rows).slice(0, 3).map((f) => f.patch), [{ batch: 2, grad_accum: 4 }, { checkpointing: 'full' }, { loss: 'chunked' }]);
  const html = verdictHtml(rows, pickBest(rows), {});
  assert.match(html, /data-apply="\{&quot;batch&quot;:2,&quot;grad_accum&quot;:4\}">Use micro-batch 2 × 4 accumulation/);
});

test('fine-tuning advice: the LoRA / QLoRA change that fits, as option values, in the page’s words', () => {
  const ft = (finetune) => nofit('rtx-4090', { advice: { over_bytes: 95e9, finetune } });
  const nameOf = (id) => ({ 'rtx-a6000': 'NVIDIA RTX A6000' })[id] ?? id;
  const [here] = buildRows({ settings: {}, model: {}, results: [ft({ fits: true, setting: 'QLoRA rank 16', flags: '--finetune qlora --lora-rank 16', options: { finetune: 'qlora', lora_rank: 16 }, peak_bytes: 11e9, hardware: null })] }, { hardware: new Map() });
  assert.deepEqual(fixes(here, { nameOf }).map((f) => [f.text, f.patch]), [['QLoRA rank 16 (10.2 GiB)', { finetune: 'qlora', lora_rank: 16 }]]);
  const [there] = buildRows({ settings: {}, model: {}, results: [ft({ fits: false, setting: 'QLoRA rank 16 and checkpointing', flags: '--finetune qlora --lora-rank 16 --checkpointing', options: { finetune: 'qlora', lora_rank: 16, checkpointing: true }, peak_bytes: 44.8e9, hardware: 'rtx-a6000' })] }, { hardware: new Map() });
  const [f] = fixes(there, { nameOf });
  assert.equal(f.text, 'QLoRA rank 16 and checkpointing on NVIDIA RTX A6000 (41.7 GiB)');
  assert.deepEqual(f.patch, { finetune: 'qlora', lora_rank: 16, checkpointing: true });
  // One change alone: "One change makes it fit:".
  assert.match(verdictHtml([there], pickBest([there]), { nameOf }), /One change makes it fit:<ul/);
  assert.doesNotMatch(f.text, /--/);
});

test('the LLM defaults for an upload: flash, at most 4,096 tokens, micro-batch 1, about a million tokens per step', () => {
  assert.deepEqual(llmDefaults(8192, cluster), { preset: 'llm', batch: null, seq: 4096, attention: 'flash', global_batch_tokens: 1048576 });
  assert.deepEqual(llmDefaults(2048, cluster), { preset: 'llm', batch: null, seq: null, attention: 'flash', global_batch_tokens: 1048576 });
  assert.deepEqual(llmDefaults(1500, cluster), { preset: 'llm', batch: null, seq: null, attention: 'flash', global_batch: 699 });
  // Micro-batch 1 is the preset's default, not a typed value: the global batch it sets is a plan question, so the
  // search chooses the micro-batch that keeps it (on 64 devices too); without a global batch, micro-batch 1.
  const batch = cluster.byName.get('batch');
  const uploaded = { ...S.fresh(cluster), ...llmDefaults(8192, cluster) };
  assert.equal(S.effective(uploaded, batch, cluster), null);
  assert.equal(S.effective({ ...uploaded, gpus: 64 }, batch, cluster), null);
  assert.equal(S.effective({ ...uploaded, global_batch_tokens: null }, batch, cluster), 1);
  assert.equal(S.effective(S.fresh(cluster), batch, cluster), 8);
});

test('exports: formula-leading strings neutralised (OWASP), numbers and keys as they were', () => {
  const doc = { name: '=HYPERLINK("x")', list: ['+1', '-2', '@a', '\tb', '\rc', 'ok'], n: -3, '=key': 1 };
  assert.deepEqual(neutralised(doc), { name: `'=HYPERLINK("x")`, list: ["'+1", "'-2", "'@a", "'\tb", "'\rc", 'ok'], n: -3, '=key': 1 });
});

test('pinned scenarios, the log scale and the preset live in the hash; what differs between two states', async () => {
  const s = S.fresh(cluster);
  const pinned = await S.toHash({ ...s, batch: 4 }, cluster);
  Object.assign(s, { pins: [pinned], log: true, preset: 'llm', gpus: 8, checkpointing: 'selective' });
  const hash = await S.toHash(s, cluster);
  assert.match(hash, /gpus=8/);
  assert.match(hash, /ckpt=selective/);
  const back = await S.fromHash(hash, cluster);
  assert.deepEqual([back.pins, back.log, back.preset, back.gpus, back.checkpointing], [[pinned], true, 'llm', 8, 'selective']);
  // A pin holding pins of its own, or too many pins, is not taken from a link.
  const nested = await S.fromHash(`pins=${await S.pack(['pins=zzz', 'batch=2', 'batch=3', 'batch=4', 'batch=5', 'batch=6'])}`, cluster);
  assert.deepEqual(nested.pins, ['batch=2', 'batch=3', 'batch=4', 'batch=5']);
  const diff = differences(await S.fromHash(pinned, cluster), back, cluster);
  // The current state is a cluster (8 devices) with a blank batch: the plan search's, not the page's 8.
  assert.equal(diff[0], `${cluster.byName.get('batch').label} 4 → ${cluster.byName.get('batch').cluster_default_text}`);
  assert.equal(diff[0], 'Batch size 4 → searched with the layout');
  // On one device a blank batch is the page's default 8.
  assert.equal(differences({ ...S.fresh(cluster), batch: 4 }, S.fresh(cluster), cluster)[0], 'Batch size 4 → 8');
  assert.ok(diff.some((d) => d.endsWith('→ selective')), diff.join('; '));
});

test('the widget: attributes it cannot read are reported, errors in its words, the budget named', () => {
  const problems = queryProblems(new URLSearchParams('model=gpt2&batch=-3&gpus=1.5&colour=red&hardware=a,b c'), cluster);
  assert.deepEqual(problems, [
    `batch=-3: ${cluster.byName.get('batch').label} must be at least 1`,
    'gpus=1.5: Accelerators must be a whole number',
    'colour: not an attribute the widget knows',
    'hardware=a,b c: a comma-separated list of accelerator ids, or all',
  ]);
  assert.deepEqual(queryProblems(new URLSearchParams('model=gpt2&hardware=all&batch=4&gpus=8'), cluster), []);
  const q = new URLSearchParams('model=nope');
  assert.equal(widgetMessage({ field: 'model', code: 'invalid_value', message: "unknown model 'nope'; `prenet zoo` lists them" }, q), 'Unknown model “nope”: the widget takes a model id from the calculator\'s zoo, such as gpt2 or llama2-7b.');
  assert.equal(widgetMessage({ field: 'batch', code: 'invalid_value', message: '--batch must be a positive integer, got 0' }, q), 'The widget could not compute this: batch must be a positive integer, got 0');
  assert.equal(budgetWords({ settings: { tokens: 1e9 } }), '1B tokens');
  assert.equal(budgetWords({ settings: { samples: 1281167, epochs: 2 } }), '1.28M samples × 2 epochs');
});

test('the embed snippets: the script tag and the iframe with its resize listener, attributes escaped', () => {
  const { script, iframe, src } = embedSnippets('https://example.org/prenet', { model: 'gpt2', hardware: 'h100-sxm5-80gb', gpus: '8', batch: '', x: '"><b>' });
  assert.equal(src, 'https://example.org/prenet/widget.html?model=gpt2&hardware=h100-sxm5-80gb&gpus=8&x=%22%3E%3Cb%3E');
  assert.equal(script, '<script src="https://example.org/prenet/embed.js" data-model="gpt2" data-hardware="h100-sxm5-80gb" data-gpus="8" data-x="&quot;>&lt;b>" async></script>');
  assert.match(iframe, /^<iframe src="https:\/\/example\.org\/prenet\/widget\.html\?model=gpt2&amp;hardware=h100-sxm5-80gb&amp;gpus=8&amp;x=%22%3E%3Cb%3E" title=/);
  assert.match(iframe, /e\.origin !== 'https:\/\/example\.org'/);
  assert.match(iframe, /f\.contentWindow === e\.source/);
});

test('the best choice’s warnings (a batch past published runs) show in the verdict, escaped', () => {
  const warning = 'a global batch of 200,000 sequences (819 million tokens) per step is larger than published training runs use <b>';
  const result = (id, warnings) => ({ hardware: id, name: id.toUpperCase(), step: { total_ms: 10 }, throughput: {}, memory: { fits: true, peak_bytes_per_device: 1e9, capacity_bytes: 80e9 }, warnings });
  const rows = buildRows({ settings: {}, model: {}, results: [result('h100', [warning]), result('a100', 'not a list')] }, { hardware: new Map() });
  assert.deepEqual(rows.map((r) => r.warnings), [[warning], []]);
  const html = verdictHtml(rows, pickBest(rows), {});
  assert.match(html, /<span class="verdict-warning">Note: a global batch of 200,000 sequences \(819 million tokens\) per step is larger than published training runs use &lt;b&gt;\.<\/span>/);
  assert.doesNotMatch(verdictHtml([rows[1]], pickBest([rows[1]]), {}), /verdict-warning/);
});
