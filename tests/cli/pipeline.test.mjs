// The pipeline contract of `prenet predict` (docs/parallel.md, "Pipeline parallelism"): uneven first and last
// stages as Megatron-Core builds them, interleaving where the blocks do not divide the chunks, and the zb-h1 and
// dualpipe schedules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const binary = resolve(root, process.env.PRENET ?? 'build/prenet');
const run = (...args) => spawnSync(binary, args, { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 });

function predict(...args) {
  const r = run('predict', '--json', ...args);
  assert.equal(r.status, 0, `prenet predict ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout).results[0];
}

function refused(...args) {
  const r = run('predict', ...args);
  assert.equal(r.status, 2, `prenet predict ${args.join(' ')} exited ${r.status}`);
  return r.stderr;
}

// Llama 3.1 405B (126 blocks) on its published layout: tp 8, pp 16, dp 128 on 16,384 H100s, 8,192 tokens, 16
// micro-batches of 1 per replica. Only that it runs is checked here, never its time.
const llama405b = ['--model', resolve(root, 'tests/fixtures/hf/llama-3.1-405b.json'), '--hardware', 'h100-sxm5-80gb',
  '--precision', 'bf16', '--attention', 'flash', '--seq', '8192', '--gpus', '16384', '--tp', '8', '--pp', '16',
  '--dp', '128', '--cp', '1', '--zero', '1', '--batch', '1', '--grad-accum', '16', '--checkpointing', 'selective'];

test('the 405B layout runs interleaved although 126 blocks do not divide 16 x vp', () => {
  for (const vp of ['2', '4']) {
    const r = predict(...llama405b, '--vp', vp);
    assert.equal(r.plan.vp, Number(vp));
    assert.equal(r.plan.schedule, 'interleaved');
    // The embedding and the loss count as a block each: 128 slots, the first and last chunk one block fewer.
    assert.equal(r.plan.uneven_stages, true);
    assert.ok(r.step.bubble_ms > 0);
  }
});

test('first and last stage blocks are Megatron-Core\'s, echoed in the plan, and refused when they do not add up', () => {
  const r = predict(...llama405b, '--vp', '2', '--first-stage-blocks', '8', '--last-stage-blocks', '6');
  assert.equal(r.plan.first_stage_blocks, 8);
  assert.equal(r.plan.last_stage_blocks, 6);
  const even = predict(...llama405b, '--vp', '1', '--first-stage-blocks', '7', '--last-stage-blocks', '7');
  assert.equal(even.plan.first_stage_blocks, 7);
  assert.match(refused(...llama405b, '--vp', '2', '--first-stage-blocks', '7', '--last-stage-blocks', '7'),
    /first_stage_blocks 7 must split into the stage's vp = 2 equal chunks/);
  assert.match(refused(...llama405b, '--vp', '1', '--first-stage-blocks', '7', '--last-stage-blocks', '6'),
    /leave 113 of the 126 blocks/);
});

const small = (pp = '4', accum = '8') => ['--model', 'gpt2-large', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16',
  '--attention', 'flash', '--gpus', pp, '--dp', '1', '--tp', '1', '--pp', pp, '--cp', '1', '--zero', '0', '--batch', '1',
  '--grad-accum', accum, '--checkpointing', 'none'];

test('zb-h1 and dualpipe are accepted, and their bubbles are smaller than 1F1B\'s', () => {
  const bubble = (schedule) => {
    const r = predict(...small(), '--schedule', schedule);
    assert.equal(r.plan.schedule, schedule);
    return r.step.bubble_ms;
  };
  const oneFOneB = bubble('1f1b'), zb = bubble('zb-h1'), dual = bubble('dualpipe');
  assert.ok(zb < oneFOneB, `${zb} ${oneFOneB}`);
  assert.ok(dual < zb, `${dual} ${zb}`);
});

test('dualpipe refuses an odd pipeline and fewer than 2 pp micro-batches, naming the field', () => {
  assert.match(refused(...small('4', '6'), '--schedule', 'dualpipe'), /at least 2 x pp = 8/);
  assert.match(refused(...small('3', '6'), '--schedule', 'dualpipe'), /pp must be even/);
});

// memory.stages: every pipeline stage's peak, first to last (frameworks log one rank's; Megatron the last stage's).
// GPT-2's head is tied to its token embedding: the last stage keeps a copy of the table, so with 1F1B's one
// micro-batch in flight there it is still the fullest at 1024 tokens. One stage, no list.
test('memory.stages lists each stage peak; the fullest is the one judged, and a tied head is a copy on its stage', () => {
  const common = ['--model', 'gpt2', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16', '--seq', '1024',
    '--gpus', '4', '--tp', '1', '--cp', '1', '--zero', '0', '--batch', '1'];
  const r = predict(...common, '--pp', '4', '--dp', '1', '--grad-accum', '8');
  const stages = r.memory.stages;
  assert.equal(stages.length, 4);
  const peaks = stages.map((s) => s.peak_allocated_bytes);
  assert.equal(Math.max(...peaks), r.memory.peak_allocated_bytes);
  assert.equal(peaks.indexOf(Math.max(...peaks)), r.plan.fullest_stage);
  for (const s of stages) assert.ok(s.peak_reserved_bytes >= s.peak_allocated_bytes);
  // The last stage holds the head's own copy of the 50257 x 768 table (bf16 weights, fp32 master, gradients and
  // AdamW's two moments under autocast: at least 16 bytes a parameter) beyond the middle stages.
  assert.ok(peaks[3] - peaks[1] > 16 * 50257 * 768, `${peaks}`);
  assert.equal(predict(...common, '--pp', '1', '--dp', '4', '--grad-accum', '2').memory.stages, undefined);
  // The table's breakdown prints them under the fullest stage's timeline, in GiB.
  const text = run('predict', ...common, '--pp', '4', '--dp', '1', '--grad-accum', '8', '--breakdown');
  assert.equal(text.status, 0, text.stderr);
  const line = text.stdout.split('\n').find((l) => l.startsWith("Each pipeline stage's peak"));
  assert.ok(line, text.stdout);
  const gib = line.split(':')[1].trim().split(' ').slice(0, 4).map(Number);
  assert.deepEqual(gib, peaks.map((b) => Number((b / 2 ** 30).toFixed(2))));
  assert.match(line, new RegExp(`the fullest, stage ${r.plan.fullest_stage + 1}`));
});
