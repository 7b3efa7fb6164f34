// data/published/megatron_functional_tests.csv (Megatron-LM functional tests' iteration times) and
// tools/published_rows.mjs: every row is a whole 8-GPU layout that adds up, names its golden values file at a
// commit, is never read by the overhead fit, and becomes a prenet command with that layout pinned. The last test
// runs prenet (skipped without build/prenet).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCsv } from '../../tools/compare_published.mjs';
import { publishedRowArgs, rowCluster } from '../../tools/published_rows.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const prenet = resolve(root, process.env.PRENET ?? 'build/prenet');
const rows = parseCsv(readFileSync(resolve(root, 'data/published/megatron_functional_tests.csv'), 'utf8'));
const n = (x) => Number(x || 1);
const value = (args, flag) => args[args.indexOf(flag) + 1];

test('rows are whole layouts with cited golden values', () => {
  assert.ok(rows.length >= 20, `expected at least 20 rows, got ${rows.length}`);
  assert.ok(rows.filter((r) => r.test_kind === 'speed').length >= 6, 'speed rows');
  for (const r of rows) {
    const where = r.id;
    assert.match(r.id, /^megatron-test-/, where);
    assert.ok(['speed', 'functional'].includes(r.test_kind), `${where}: test_kind ${r.test_kind}`);
    assert.equal(n(r.dp) * n(r.tp) * n(r.pp) * n(r.cp), Number(r.gpus), `${where}: dp x tp x pp x cp = gpus`);
    if (r.ep) assert.equal(n(r.dp) % Number(r.ep), 0, `${where}: ep divides dp`);
    assert.ok(Number(r.iteration_s) > 0, `${where}: iteration_s`);
    assert.equal(Number(r.batch) * n(r.dp) * Number(r.grad_accum) > 0, true, `${where}: batch`);
    assert.match(r.source_url, /^https:\/\/github\.com\/NVIDIA\/Megatron-LM\/blob\/[0-9a-f]{40}\/tests\/functional_tests\/test_cases\/.*golden_values[^/]*\.json$/, `${where}: source_url`);
    assert.ok(r.quote.length > 0 && r.notes.includes('model_config.yaml'), `${where}: quote and the config it read`);
    assert.ok(existsSync(resolve(root, r.model)), `${where}: ${r.model}`);
    // Reserved sources (DEVELOPERS.md) stay out, and so do proxies of reserved runs.
    assert.doesNotMatch(`${r.id} ${r.source_url}`, /llama-?3|deepseek|dsv3|bridge|nemo/i, where);
  }
});

test('the overhead fit never reads this source: every row stays held out', () => {
  assert.doesNotMatch(readFileSync(resolve(root, 'tools/fit_overhead.mjs'), 'utf8'), /megatron_functional_tests/);
});

test('a row becomes its layout, pinned as a --cluster document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prenet-megatron-test-'));
  try {
    const r = { id: 'megatron-test-x', model: 'm.json', hardware: 'h100-sxm5-80gb', precision: 'bf16', mixed: 'half',
      optimizer: 'adamw', optimizer_impl: 'fused', batch: '1', seq: '8192', grad_accum: '4', checkpointing: 'none',
      attention: 'flash', gpus: '8', dp: '2', tp: '1', pp: '4', cp: '1', ep: '', zero: '1', sequence_parallel: 'false',
      vp: '8', framework: 'megatron' };
    const a = publishedRowArgs(dir, r);
    assert.equal(value(a, '--gpus'), '8');
    assert.equal(value(a, '--framework'), 'megatron');
    assert.equal(value(a, '--checkpointing'), 'none');
    assert.deepEqual(JSON.parse(readFileSync(value(a, '--cluster'), 'utf8')),
      { dp: 2, tp: 1, pp: 4, cp: 1, zero: 1, sequence_parallel: false, vp: 8, schedule: 'interleaved' });
    assert.deepEqual(rowCluster({ ...r, tp: '2', pp: '1', vp: '', dp: '4', ep: '2', sequence_parallel: 'true' }),
      { dp: 4, tp: 2, pp: 1, cp: 1, ep: 2, zero: 1, sequence_parallel: true });
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('every row predicts on its own layout', (t) => {
  if (!existsSync(prenet)) { t.skip(`${prenet} not found; build it with: bash scripts/build.sh native`); return; }
  const dir = mkdtempSync(join(tmpdir(), 'prenet-megatron-test-'));
  try {
    for (const r of rows) {
      const out = JSON.parse(execFileSync(prenet, publishedRowArgs(dir, r), { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 }));
      const res = out.results[0]; const plan = res.plan;
      assert.ok(res.step.total_ms > 0, `${r.id}: no step`);
      for (const k of ['dp', 'tp', 'pp', 'cp']) assert.equal(plan[k], n(r[k]), `${r.id}: ${k} not pinned`);
      if (r.ep) assert.equal(plan.ep, Number(r.ep), `${r.id}: ep not pinned`);
      assert.equal(res.framework_used, 'megatron', r.id);
    }
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
