import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A published row's prenet arguments, for the tables that share peak_memory.csv's columns (model, hardware,
// precision, mixed, optimizer, optimizer_impl, batch, seq, grad_accum, checkpointing, attention, framework, gpus and
// the layout): data/published/peak_memory.csv (tools/compare_memory.mjs) and
// data/published/megatron_functional_tests.csv (tools/compare_parallel.mjs). Node 20.

// The prenet arguments of one row. A row with `gpus` runs that many devices in the layout its dp, tp, pp, cp, ep,
// zero and sequence_parallel columns give, passed as a --cluster document so that an explicit `false` (sequence
// parallelism off) is kept rather than searched. `checkpointing` is true (prenet's --checkpointing, full), false or
// empty (none on one device, as before), or a kind (none, attention-core, op-selective, full, offload).
function rowArgs(r, clusterPath) {
  const a = ['predict', '--model', r.model, '--hardware', r.hardware, '--precision', r.precision, '--optimizer',
    r.optimizer, '--optimizer-impl', r.optimizer_impl, '--batch', r.batch, '--seq', r.seq, '--grad-accum', r.grad_accum];
  if (r.mixed) a.push('--mixed', r.mixed);
  if (r.attention) a.push('--attention', r.attention);
  if (r.framework) a.push('--framework', r.framework);
  if (r.checkpointing === 'true') a.push('--checkpointing');
  else if (r.checkpointing && r.checkpointing !== 'false') a.push('--checkpointing', r.checkpointing);
  if (r.gpus) a.push('--gpus', r.gpus, '--cluster', clusterPath);
  return [...a, '--json'];
}

// The --cluster document of a multi-device row (rowArgs). A `vp` (virtual stages per device) runs Megatron's
// interleaved schedule.
export function rowCluster(r) {
  const c = {};
  for (const k of ['dp', 'tp', 'pp', 'cp', 'ep', 'zero']) if (r[k] !== '' && r[k] !== undefined) c[k] = Number(r[k]);
  if (r.sequence_parallel) c.sequence_parallel = r.sequence_parallel === 'true';
  if (r.vp) Object.assign(c, { vp: Number(r.vp), schedule: 'interleaved' });
  return c;
}

// The prenet arguments of one row (rowArgs), with a multi-device row's --cluster document written into `dir`
// as <id>.cluster.json.
export function publishedRowArgs(dir, r) {
  const path = join(dir, `${r.id}.cluster.json`);
  if (r.gpus) writeFileSync(path, JSON.stringify(rowCluster(r)));
  return rowArgs(r, path);
}
