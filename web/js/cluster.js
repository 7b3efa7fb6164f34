// Cluster questions (docs/parallel.md): whether a request spans several devices, how the page asks it one
// accelerator at a time (so the worker's plan search reports progress between accelerators, and a newer input
// cancels the rest), how the parts make one reply again, and a plan in words and as the fields that pin it.
// Pure: no DOM, so Node's tests import it.

/**
 * Whether a predict request is a cluster question, as the API decides it: a row's `cluster_question` (options
 * reply) says when giving it makes one: "given", {above: N} or {is: word}.
 */
export function isCluster(request, table) {
  return table.rows.some((row) => asksCluster(row.cluster_question, request[row.name]));
}

function asksCluster(when, value) {
  if (when == null || value == null) return false;
  if (when === 'given') return true;
  if (when.above != null) return typeof value === 'number' && value > when.above;
  return when.is != null && value === when.is;
}

/**
 * The request as one request per accelerator (or per `size` of them): the catalogue ones (`ids`: the
 * request's list, or the whole catalogue for "all"), then each custom sheet alone.
 */
export function splitRequest(request, ids, size = 1) {
  const list = request.hardware === 'all' ? ids : (request.hardware ?? []);
  const { custom_hardware: customs = [], ...rest } = request;
  const groups = [];
  for (let i = 0; i < list.length; i += size) groups.push({ ...rest, hardware: list.slice(i, i + size) });
  return [...groups, ...customs.map((sheet) => ({ ...rest, hardware: [], custom_hardware: [sheet] }))];
}

/**
 * One reply from the parts' replies ({doc, error} each, in order), as the API answers several accelerators at
 * once: a part whose error names its accelerator (`error.hardware`: the API refused that accelerator, e.g. a
 * sheet that cannot form the cluster) is a row {hardware, name, error}; any other error is the whole request's
 * (every part fails the same way), and so is the first refusal when every part is refused. `names`: id ->
 * display name for refused rows. Returns {doc, error}.
 */
export function mergeReplies(parts, chunks, names = new Map()) {
  let base = null;
  const results = [];
  let refusal = null;
  for (const [i, part] of parts.entries()) {
    if (part.error) {
      if (part.error.hardware == null) return { doc: part.doc, error: part.error };
      refusal ??= part;
      const id = part.error.hardware;
      const name = names.get(id) ?? chunks[i].custom_hardware?.[0]?.name ?? id;
      results.push({ error: { code: part.error.code, field: part.error.field, message: part.error.message }, hardware: id, name });
      continue;
    }
    base ??= part.doc;
    results.push(...(part.doc.results ?? []));
  }
  if (!base) return refusal ? { doc: refusal.doc, error: refusal.error } : { doc: { results: [] }, error: null };
  return { doc: { ...base, results }, error: null };
}

/** A plan in a few words: "dp 8 · tp 2 · pp 1 · ZeRO 3", then the micro-batches and checkpointing. */
export function planText(plan) {
  if (!plan) return '';
  const dims = [`dp ${plan.dp}`, `tp ${plan.tp}`, `pp ${plan.pp}`];
  if (plan.cp > 1) dims.push(`cp ${plan.cp}`);
  if (plan.ep > 1) dims.push(`ep ${plan.ep}`);
  if (plan.vp > 1) dims.push(`vp ${plan.vp}`);
  if (plan.first_stage_blocks) dims.push(`first stage ${plan.first_stage_blocks} blocks`);
  if (plan.last_stage_blocks) dims.push(`last stage ${plan.last_stage_blocks} blocks`);
  // Data parallelism's kind only where there is data parallelism: one replica has no DDP and no ZeRO.
  if (plan.dp > 1) dims.push(plan.zero ? `ZeRO ${plan.zero}` : 'DDP');
  const extra = [];
  if (plan.sequence_parallel) extra.push('sequence parallel');
  if (plan.pp > 1) extra.push(plan.schedule);
  if (plan.micro_batch != null) extra.push(`micro-batch ${plan.micro_batch}${plan.grad_accum > 1 ? ` × ${plan.grad_accum}` : ''}`);
  if (plan.checkpointing && plan.checkpointing !== 'none') extra.push(`${plan.checkpointing} checkpointing`);
  return `${dims.join(' · ')}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}

/**
 * The state patch that pins a plan's layout (every dimension, the schedule, the micro-batch and checkpointing),
 * for the fields the option table has.
 */
export function layoutPatch(plan, table) {
  const patch = {};
  const has = (name) => table.byName.has(name);
  // The rows a plan's layout pins (the options reply's `layout`), each the plan's key of the same name.
  for (const row of table.rows) if (row.layout && plan[row.name] != null) patch[row.name] = plan[row.name];
  if (has('sequence_parallel')) patch.sequence_parallel = plan.sequence_parallel ? true : null;
  if (plan.micro_batch != null && has('batch')) patch.batch = plan.micro_batch;
  if (has('checkpointing') && plan.checkpointing != null) {
    const row = table.byName.get('checkpointing');
    // The flag takes full, selective or none as well (its switch_values): pinned as the plan has it.
    if (row.switch_values?.includes(plan.checkpointing)) patch.checkpointing = plan.checkpointing;
    else patch.checkpointing = plan.checkpointing !== 'none' ? true : null;
  }
  return patch;
}

/** Achieved TFLOP/s per device: MFU × the device's dense matrix peak at the precision it ran (TFLOPS), or null. */
export function achievedTflops(mfu, peaks, precision) {
  const peak = peaks?.[precision];
  return Number.isFinite(mfu) && Number.isFinite(peak) ? mfu * peak : null;
}
