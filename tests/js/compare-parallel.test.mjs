// tools/compare_parallel.mjs: each dataset row becomes the prenet command of issue #17's CLI contract with the
// row's exact settings, and a prenet without the multi-GPU options is recognised. Pure: no prenet run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../../tools/compare_published.mjs';
import { bigscienceArgs, dataParallelArgs, foundryArgs, foundryMfuPercent, neusightArgs, largeRunArgs, missingOptions, modelTflops, NEEDED_OPTIONS, offBy, median, percent } from '../../tools/compare_parallel.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const csv = (path) => parseCsv(readFileSync(resolve(root, path), 'utf8'));
// The value after a flag ('' for a bare flag, undefined when absent).
const value = (args, flag) => { const i = args.indexOf(flag); return i < 0 ? undefined : (args[i + 1]?.startsWith('--') ? '' : args[i + 1]); };

test('llm-foundry rows: FSDP stage, micro and global batch, precision, checkpointing, hardware', () => {
  const rows = csv('data/published/llm_foundry_mpt_a100.csv');
  assert.equal(rows.length, 139);
  const [first] = rows;  // 70b, 64 x a100_80gb, mb 8, ga 4, global 2048, bf16 PURE, FULL_SHARD, checkpointing
  const a = foundryArgs(first, '/tmp/mpt-70b-2048.json');
  assert.deepEqual(a.slice(0, 3), ['predict', '--model', '/tmp/mpt-70b-2048.json']);
  assert.equal(value(a, '--hardware'), 'a100-sxm4-80gb');
  assert.equal(value(a, '--gpus'), '64');
  assert.equal(value(a, '--dp'), '64');
  assert.equal(value(a, '--tp'), '1');
  assert.equal(value(a, '--pp'), '1');
  assert.equal(value(a, '--zero'), '3');
  assert.equal(value(a, '--batch'), '8');
  assert.equal(value(a, '--global-batch'), '2048');
  assert.equal(value(a, '--seq'), '2048');
  assert.equal(value(a, '--precision'), 'bf16');
  assert.equal(value(a, '--mixed'), 'half');
  assert.equal(value(a, '--checkpointing'), 'full');
  assert.equal(a.at(-1), '--json');
  const amp = rows.find((r) => r.precision === 'amp_bf16' && r.checkpointing === 'False');
  const b = foundryArgs(amp, 'm.json');
  // Composer's FSDP mixed precision gathers and computes in bf16 under DEFAULT too (param_dtype = bf16).
  assert.equal(value(b, '--mixed'), 'half');
  assert.equal(value(b, '--framework'), 'fsdp');
  assert.throws(() => foundryArgs({ ...amp, mp_mode: 'FULL' }, 'm.json'), /no prenet precision/);
  assert.equal(value(b, '--hardware'), { a100_40gb: 'a100-sxm4-40gb', a100_80gb: 'a100-sxm4-80gb' }[amp.gpu]);
  assert.equal(value(foundryArgs({ ...amp, gpu: 'a100_40gb' }, 'm.json'), '--hardware'), 'a100-sxm4-40gb');
  assert.equal(value(b, '--checkpointing'), 'none');  // pinned: the plan search would otherwise choose
  assert.equal(value(b, '--zero'), { FULL_SHARD: '3', SHARD_GRAD_OP: '2' }[amp.sharding]);
  assert.equal(value(foundryArgs({ ...amp, sharding: 'SHARD_GRAD_OP' }, 'm.json'), '--zero'), '2');
  // Every row translates, and its micro-batch x accumulation x GPUs is its global batch (no partial micro-batch).
  for (const r of rows) {
    const x = foundryArgs(r, 'm.json');
    assert.equal(Number(value(x, '--batch')) * Number(r.grad_accum) * Number(value(x, '--gpus')), Number(value(x, '--global-batch')));
  }
  assert.throws(() => foundryArgs({ ...amp, precision: 'fp16' }, 'm.json'), /no prenet precision/);
  assert.throws(() => foundryArgs({ ...amp, cpu_offload: 'True' }, 'm.json'), /offload/);
});

test('NeuSight 4-GPU rows: dp4 splits the global batch, tp4 and pp4_1 keep it, one micro-batch, fp32', () => {
  const rows = csv('data/neusight/e2e.csv').filter((r) => r.layout !== 'single');
  assert.deepEqual(rows.map((r) => r.layout).sort(), ['dp4', 'pp4_1', 'tp4']);
  const by = Object.fromEntries(rows.map((r) => [r.layout, neusightArgs(r)]));
  for (const a of Object.values(by)) {
    assert.equal(value(a, '--gpus'), '4');
    assert.equal(value(a, '--precision'), 'fp32');
    assert.equal(value(a, '--global-batch'), '4');
    assert.equal(value(a, '--model'), 'data/neusight/model_configs/gpt2_large.json');
    assert.equal(value(a, '--hardware'), 'a100-sxm4-40gb');
  }
  assert.deepEqual(['--dp', '--tp', '--pp', '--batch'].map((f) => value(by.dp4, f)), ['4', '1', '1', '1']);
  assert.deepEqual(['--dp', '--tp', '--pp', '--batch'].map((f) => value(by.tp4, f)), ['1', '4', '1', '4']);
  assert.deepEqual(['--dp', '--tp', '--pp', '--batch'].map((f) => value(by.pp4_1, f)), ['1', '1', '4', '4']);
  assert.equal(value(by.dp4, '--zero'), '0');  // DDP
});

test('large runs: published layout passed, the rest left to the plan search, tokens for run.gpu_hours', () => {
  const rows = csv('data/published/large_runs.csv');
  const forbidden = /llama-?3|deepseek-v3|palm|gopher|starcoder|falcon|tinyllama/i;
  for (const r of rows) {
    assert.ok(!forbidden.test(r.id) && !forbidden.test(r.model), `${r.id} is reserved for the independent check`);
    assert.match(r.source_url, /^https:\/\//, r.id);
    assert.ok(r.quote.length > 20, `${r.id} quotes its source`);
    assert.ok(['published_gpu_hours', 'published_tokens_per_s_per_gpu', 'published_tflops_per_gpu'].some((c) => Number(r[c]) > 0),
      `${r.id} has a published figure`);
    const a = largeRunArgs(r);
    assert.equal(value(a, '--gpus'), r.gpus);
    assert.equal(value(a, '--tokens'), r.tokens);
    if (r.global_batch_tokens) assert.equal(value(a, '--global-batch-tokens') % r.seq, 0, `${r.id}: the global batch is whole sequences`);
    else assert.equal(value(a, '--global-batch-tokens'), undefined);
  }
  const mpt = largeRunArgs(rows.find((r) => r.id === 'mpt-7b'));
  assert.deepEqual(['--dp', '--tp', '--pp', '--zero'].map((f) => value(mpt, f)), ['440', '1', '1', '3']);
  const llama = largeRunArgs(rows.find((r) => r.id === 'llama2-70b'));
  assert.equal(value(llama, '--dp'), undefined);  // not published: searched
  assert.equal(value(largeRunArgs(rows.find((r) => r.id === 'opt-175b')), '--mixed'), 'half');
});

test('BLOOM runs on its published layout; its TFLOP/s count the recompute', () => {
  const bloom = csv('data/published/large_runs.csv').find((r) => r.id === 'bloom-176b');
  const a = largeRunArgs(bloom);
  assert.deepEqual(['--dp', '--tp', '--pp', '--zero', '--batch', '--checkpointing', '--framework', '--sequence-parallel',
    '--first-stage-blocks', '--last-stage-blocks', '--network'].map((f) => value(a, f)),
  ['8', '4', '12', '1', '2', 'full', 'deepspeed', 'off', '5', '5', '4x100g-ib']);
  assert.equal(modelTflops(bloom), 150 * 3 / 4);
  const mpt = csv('data/published/large_runs.csv').find((r) => r.id === 'mpt-7b');
  assert.equal(value(largeRunArgs(mpt), '--batch'), undefined);  // not published: searched
});

test('BigScience rows: whole layouts of 8-GPU nodes, stages that add up, the scripts\' settings', () => {
  const rows = csv('data/published/bigscience_megatron_deepspeed_a100.csv');
  assert.ok(rows.length >= 90);
  assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
  for (const r of rows) {
    const [dp, tp, pp, mbs, gbs, layers] = ['dp', 'tp', 'pp', 'mbs', 'global_batch', 'layers'].map((k) => Number(r[k]));
    assert.equal(dp * tp * pp, Number(r.gpus), r.id);
    assert.equal(Number(r.gpus) % 8, 0, r.id);
    assert.equal(gbs % (dp * mbs), 0, `${r.id}: the global batch is whole micro-batches per replica`);
    assert.ok(r.sec_per_iteration !== '' || r.memory_gb === 'OOM', `${r.id}: a time or an out-of-memory`);
    assert.match(r.source_url, /^https:\/\/github\.com\/bigscience-workshop\/bigscience\/blob\/[0-9a-f]{40}\//);
    if (r.first_stage_blocks !== '') {
      const middle = layers - Number(r.first_stage_blocks) - Number(r.last_stage_blocks);
      assert.equal(middle % (pp - 2), 0, `${r.id}: the middle stages split evenly`);
      // 'type:transformer|embedding': each embedding takes one block's place on the first and the last stage.
      if (r.partition === 'transformer|embedding') assert.equal(Number(r.first_stage_blocks) + 1, middle / (pp - 2), r.id);
    } else {
      assert.equal(layers % pp, 0, r.id);
    }
    const a = bigscienceArgs(r, '/tmp/bigscience.json');
    assert.deepEqual(['--dp', '--tp', '--pp', '--batch', '--global-batch'].map((f) => value(a, f)), [r.dp, r.tp, r.pp, r.mbs, r.global_batch]);
    assert.deepEqual(['--zero', '--checkpointing', '--framework', '--attention', '--precision'].map((f) => value(a, f)),
      ['1', 'full', 'deepspeed', 'eager', r.precision]);
    assert.equal(value(a, '--sequence-parallel'), tp > 1 ? 'off' : undefined);
  }
  // BLOOM's own step: its final layout, 104.70 s.
  const step = rows.find((r) => r.section.startsWith('BLOOM training'));
  assert.deepEqual([step.hidden, step.layers, step.heads, step.dp, step.tp, step.pp, step.mbs, step.sec_per_iteration],
    ['14336', '70', '112', '8', '4', '12', '2', '104.7']);
});

test('an old prenet (no --gpus) is recognised from its option table', () => {
  const old = JSON.parse(readFileSync(resolve(root, 'tests/js/fixtures/options.json'), 'utf8'));
  assert.equal(missingOptions(old)[0], 'gpus');
  const all = { options: NEEDED_OPTIONS.map((n) => ({ flag: `--${n}` })) };
  assert.deepEqual(missingOptions(all), []);
});

test('error measures', () => {
  assert.equal(offBy(50, 100), 2);
  assert.equal(offBy(200, 100), 2);
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(percent(0.45), 45);
  assert.equal(percent(45), 45);
});

test("llm-foundry's MFU formula: 6 x params + 12 x layers x d_model x seq per token over 312 TFLOP/s", () => {
  // 1e9 params, 24 layers of 2048 at 2048 tokens: 6e9 + 12 x 24 x 2048 x 2048 = 7,207,959,552 FLOPs per token;
  // at 1000 tokens/s per GPU: 7.207959552e12 / 312e12 = 2.3102 %.
  const r = { gpu: 'a100_80gb', seq: '2048', params: '1000000000' };
  assert.ok(Math.abs(foundryMfuPercent(r, { n_layers: 24, d_model: 2048 }, 1000) - 2.31024) < 1e-4);
  // The published 7b row at 65,536 tokens: 6 x 6,918,905,856 + 12 x 32 x 4096 x 65536 = 144,592,650,240 FLOPs per
  // token x 1013 tokens/s / 312e12 = 46.95 %, published 46.97 (its tokens/s is rounded to an integer).
  const row = csv('data/published/llm_foundry_mpt_a100.csv').find((x) => x.model === '7b' && x.seq === '65536');
  const seven = JSON.parse(readFileSync(resolve(root, 'data/published/mpt/mpt-7b.json'), 'utf8'));
  const got = foundryMfuPercent(row, seven, Number(row.tokens_per_s_per_gpu));
  assert.ok(Math.abs(got - 46.946) < 0.01, String(got));
  assert.ok(Math.abs(got - Number(row.mfu)) < 0.05);
  assert.throws(() => foundryMfuPercent({ ...r, gpu: 'h100_80gb' }, seven, 1), /no llm-foundry peak/);
});

test('data-parallel rows: one host of `gpus` replicas, batch per GPU, channels-last TensorFlow', () => {
  const rows = csv('data/published/data_parallel.csv');
  assert.equal(rows.length, 20);
  const r = rows.find((x) => x.hardware === 'rtx-3090' && x.gpus === '8' && x.batch === '64');
  assert.equal(r.samples_per_s, '4039.44');
  const a = dataParallelArgs(r);
  assert.equal(value(a, '--gpus'), '8');
  assert.equal(value(a, '--gpus-per-node'), '8');
  assert.equal(value(a, '--dp'), '8');
  assert.equal(value(a, '--zero'), '0');
  assert.equal(value(a, '--batch'), '64');
  assert.equal(value(a, '--global-batch'), '512');
  assert.equal(value(a, '--image'), '224');
  assert.equal(value(a, '--channels-last'), '');
  assert.equal(value(a, '--checkpointing'), 'none');
  assert.equal(a.at(-1), '--json');
  assert.equal(value(dataParallelArgs({ ...r, framework: 'PyTorch' }), '--channels-last'), undefined);
});
