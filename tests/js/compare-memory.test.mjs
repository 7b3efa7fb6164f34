// tools/compare_memory.mjs: a row's layout becomes the --cluster document (virtual stages run interleaved), and a
// figure logged by the last pipeline stage is compared with that stage's peak, not the fullest's. Pure: no prenet run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../../tools/compare_published.mjs';
import { compareRow } from '../../tools/compare_memory.mjs';
import { rowCluster } from '../../tools/published_rows.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MiB = 2 ** 20;

test('a vp column runs the interleaved schedule; no vp, no schedule', () => {
  const row = { dp: '2', tp: '1', pp: '4', cp: '1', zero: '1', sequence_parallel: 'false', vp: '8' };
  assert.deepEqual(rowCluster(row), { dp: 2, tp: 1, pp: 4, cp: 1, zero: 1, sequence_parallel: false, vp: 8, schedule: 'interleaved' });
  assert.deepEqual(rowCluster({ ...row, vp: '' }), { dp: 2, tp: 1, pp: 4, cp: 1, zero: 1, sequence_parallel: false });
});

test('logged_stage last compares with the last stage; empty with the fullest', () => {
  const memory = { fits: true, peak_allocated_bytes: 300 * MiB,
    stages: [{ peak_allocated_bytes: 300 * MiB }, { peak_allocated_bytes: 200 * MiB }] };
  const row = { id: 'r', measure: 'allocated', published_mib: '100', logged_stage: 'last' };
  assert.equal(compareRow(row, memory).predicted_mib, 200);
  assert.equal(compareRow({ ...row, logged_stage: '' }, memory).predicted_mib, 300);
  assert.equal(compareRow(row, { fits: true, peak_allocated_bytes: 50 * MiB }).predicted_mib, 50);  // one stage
  assert.throws(() => compareRow({ ...row, logged_stage: 'first' }, memory), /logged_stage/);
});

test('every pipelined Megatron functional-test row names the stage that logged it', () => {
  const rows = parseCsv(readFileSync(resolve(root, 'data/published/peak_memory.csv'), 'utf8'));
  const tests = rows.filter((r) => r.id.startsWith('megatron-test-') && Number(r.pp) > 1);
  assert.ok(tests.length >= 4);
  for (const r of tests) assert.equal(r.logged_stage, 'last', r.id);
  for (const r of rows) if (r.vp) assert.ok(Number(r.pp) > 1 && Number(r.vp) > 1, r.id);
});
