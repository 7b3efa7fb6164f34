// The many-accelerators contract of `prenet predict` (docs/parallel.md): --gpus and the layout options, the
// plan and its alternatives, communication, bubble, MFU and memory per device, and clear errors for layouts
// that cannot be.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const binary = resolve(root, process.env.PRENET ?? 'build/prenet');
const run = (...args) => spawnSync(binary, args, { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });

function predict(...args) {
  const r = run('predict', '--json', ...args);
  assert.equal(r.status, 0, `prenet predict ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function refused(...args) {
  const r = run('predict', ...args);
  assert.equal(r.status, 2, `prenet predict ${args.join(' ')} exited ${r.status}`);
  assert.equal(r.stdout, '');
  return r.stderr;
}

const llm = ['--model', 'gpt2-large', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16', '--attention', 'flash'];

test('--gpus 8 searches a plan whose dimensions multiply to the devices', () => {
  const r = predict(...llm, '--gpus', '8', '--global-batch', '64').results[0];
  const p = r.plan;
  assert.equal(p.dp * p.tp * p.pp * p.cp, 8);
  assert.equal(p.micro_batch * p.grad_accum * p.dp, 64);
  assert.equal(p.global_batch, 64);
  assert.equal(p.nodes, 1);
  assert.ok(p.searched);
  assert.ok(p.layouts_searched > 10 && p.layouts_timed >= 1);
  for (const a of p.alternatives) {
    assert.ok(a.step_ms * 64 / a.global_batch >= r.step.total_ms * 0.999 || !a.fits, JSON.stringify(a));
    assert.ok(['memory', 'bubble', 'exposed communication', 'compute'].includes(a.loses_on), a.loses_on);
  }
  const s = r.step;
  const sum = s.forward_ms + s.backward_ms + s.optimizer_ms + s.communication_ms + s.bubble_ms + s.overhead_ms +
    s.input_stall_ms;
  assert.ok(Math.abs(sum - s.total_ms) < 1e-6 * s.total_ms);
  assert.ok(s.communication_total_ms >= s.communication_ms);
  assert.ok(r.throughput.mfu > 0.05 && r.throughput.mfu < 1, String(r.throughput.mfu));
  const perDevice = r.throughput.tokens_per_s / 8;
  assert.ok(Math.abs(r.throughput.tokens_per_s_per_device - perDevice) < 1e-6 * perDevice);
  assert.ok(r.memory.fits);
});

test('a given layout is kept, and GPU-hours count every device', () => {
  const args = [...llm, '--gpus', '8', '--dp', '2', '--tp', '2', '--pp', '2', '--cp', '1', '--zero', '1', '--batch', '2',
    '--global-batch', '32', '--checkpointing', 'selective', '--tokens', '1e9'];
  const r = predict(...args).results[0];
  assert.deepEqual([r.plan.dp, r.plan.tp, r.plan.pp, r.plan.zero, r.plan.micro_batch, r.plan.grad_accum, r.plan.checkpointing],
    [2, 2, 2, 1, 2, 8, 'selective']);
  assert.ok(r.step.bubble_ms > 0);
  // Every kind of communication in words (docs/parallel.md), and each the layout splits over moves data.
  assert.deepEqual(Object.keys(r.step.communication).sort(),
    ['context parallel', 'data parallel', 'expert parallel', 'pipeline parallel', 'tensor parallel']);
  for (const kind of ['tensor parallel', 'data parallel', 'pipeline parallel'])
    assert.ok(r.step.communication[kind].total_ms > 0, kind);
  assert.ok(Math.abs(r.run.gpu_hours - r.run.hours * 8) < 1e-9 * r.run.gpu_hours);
});

test('interleaving sends each micro-batch at every chunk boundary', () => {
  // Llama 2 7B (hidden 4096, head untied) at 1024 tokens, micro-batch 1, bf16: a send is 1 x 1024 x 4096 x 2 B, the
  // same for vp 1 and 2; the steady state sends 2 x vp x m of them, so vp 2 moves twice what vp 1 does
  // (docs/parallel.md). A tied head adds the same once-a-step all-reduce to both (below).
  const at = (model, vp) => predict('--model', model, ...llm.slice(2), '--gpus', '2', '--dp', '1', '--tp', '1', '--pp', '2',
    '--cp', '1', '--vp', String(vp), '--schedule', vp > 1 ? 'interleaved' : '1f1b', '--zero', '0', '--batch', '1',
    '--global-batch', '8', '--seq', '1024', '--checkpointing', 'full').results[0].step.communication['pipeline parallel'];
  const one = at('llama2-7b', 1), two = at('llama2-7b', 2);
  assert.ok(one.exposed_ms > 0);
  assert.ok(Math.abs(two.exposed_ms - 2 * one.exposed_ms) < 1e-9 * two.exposed_ms, `${one.exposed_ms} ${two.exposed_ms}`);
  // gpt2-large's head shares its token embedding: both schedules add the same all-reduce of the two copies'
  // gradients (docs/parallel.md, "Memory per device"), so vp 2 moves the sends' share twice, not the whole.
  const tiedOne = at('gpt2-large', 1), tiedTwo = at('gpt2-large', 2);
  const allReduce = 2 * tiedOne.exposed_ms - tiedTwo.exposed_ms;  // sends(2) = 2 sends(1)
  assert.ok(allReduce > 0 && allReduce < tiedOne.exposed_ms, `${tiedOne.exposed_ms} ${tiedTwo.exposed_ms}`);
});

test('ZeRO shards expert states over the ranks that hold the same experts only', () => {
  // Mixtral 8x7B, dp 8 with ep 8: each device's experts (5.64 G parameters) have no other replica, so their
  // 8 B of AdamW states stay whole: ~46.7 GB per device, not 7.2 GB (docs/parallel.md, "Data parallelism").
  const r = predict('--model', 'mixtral-8x7b', '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16', '--gpus', '8',
    '--dp', '8', '--tp', '1', '--pp', '1', '--cp', '1', '--ep', '8', '--zero', '1', '--batch', '1', '--global-batch', '8',
    '--checkpointing', 'full', '--seq', '512').results[0];
  assert.ok(Math.abs(r.memory.optimizer_state_bytes / 1e9 - 46.7) < 0.3, String(r.memory.optimizer_state_bytes));
});

test('--framework is echoed and changes what a ZeRO-3 step recomputes', () => {
  // FSDP checkpoints whole blocks where Megatron's selective recomputation reruns the attention core only
  // (docs/parallel.md, "Framework presets"): the same layout recomputes more under fsdp than under generic.
  const at = (framework) => predict(...llm, '--gpus', '8', '--dp', '8', '--tp', '1', '--pp', '1', '--cp', '1', '--zero', '3',
    '--batch', '1', '--global-batch', '8', '--checkpointing', 'selective', '--framework', framework);
  const generic = at('generic'), fsdp = at('fsdp');
  assert.equal(generic.settings.framework, 'generic');
  assert.equal(fsdp.settings.framework, 'fsdp');
  assert.equal(fsdp.results[0].plan.zero, 3);
  assert.ok(fsdp.results[0].step.recompute_ms > generic.results[0].step.recompute_ms,
    `${fsdp.results[0].step.recompute_ms} ${generic.results[0].step.recompute_ms}`);
  assert.ok(fsdp.results[0].step.total_ms > generic.results[0].step.total_ms);
});

test('--ep-overlap full hides the expert all-to-alls behind compute; none, the default, exposes them', () => {
  // Mixtral 8x7B on two H800 nodes of 4, ep 8 across them: the all-to-alls are the same either way, and full
  // leaves only what exceeds a micro-batch's compute exposed (docs/parallel.md, "Expert parallel").
  const at = (...more) => predict('--model', 'mixtral-8x7b', '--hardware', 'h800-sxm5', '--precision', 'bf16',
    '--gpus', '8', '--gpus-per-node', '4', '--dp', '8', '--tp', '1', '--pp', '1', '--cp', '1', '--ep', '8', '--zero', '3',
    '--batch', '1', '--global-batch', '8', '--checkpointing', 'full', '--seq', '2048', ...more);
  const none = at(), full = at('--ep-overlap', 'full');
  assert.equal(none.settings.ep_overlap, 'none');
  assert.equal(full.settings.ep_overlap, 'full');
  const a = none.results[0].step.communication['expert parallel'], b = full.results[0].step.communication['expert parallel'];
  assert.ok(a.total_ms > 0 && a.exposed_ms === a.total_ms, JSON.stringify(a));
  assert.equal(b.total_ms, a.total_ms);
  assert.ok(b.exposed_ms < a.exposed_ms, JSON.stringify(b));
  assert.ok(full.results[0].step.total_ms < none.results[0].step.total_ms);
});

test('--tp-comm-overlap hides every tensor-parallel collective behind the matrix work, with sequence parallelism only', () => {
  // Llama 2 7B on one 8-GPU H100 node at tp 8: the same collectives either way; with the overlap only what exceeds
  // the micro-batch's matrix work stays exposed (docs/parallel.md "Framework presets"), under any framework.
  const at = (...more) => predict('--model', 'llama2-7b', '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16',
    '--gpus', '8', '--dp', '1', '--tp', '8', '--pp', '1', '--cp', '1', '--zero', '0', '--batch', '1', '--global-batch', '8',
    '--seq', '4096', '--checkpointing', 'none', '--overhead', 'none', ...more);
  for (const framework of ['generic', 'megatron']) {
    const off = at('--framework', framework), on = at('--framework', framework, '--tp-comm-overlap');
    assert.equal(off.settings.tp_comm_overlap, false);
    assert.equal(on.settings.tp_comm_overlap, true);
    const a = off.results[0].step.communication['tensor parallel'], b = on.results[0].step.communication['tensor parallel'];
    assert.ok(a.total_ms > 0 && a.exposed_ms > 0, JSON.stringify(a));
    assert.equal(b.total_ms, a.total_ms);
    assert.ok(b.exposed_ms < a.exposed_ms, `${framework}: ${JSON.stringify(b)}`);
    // exposed = max(0, collectives - matrix work): never below it, and the step shorter by what it hid.
    assert.ok(b.exposed_ms >= Math.max(0, b.total_ms - on.results[0].step.matmul_ms) - 1e-9, JSON.stringify(b));
    const faster = off.results[0].step.total_ms - on.results[0].step.total_ms;
    assert.ok(Math.abs(faster - (a.exposed_ms - b.exposed_ms)) < 1e-6 * off.results[0].step.total_ms, `${framework}: ${faster}`);
  }
  // Megatron asserts --sequence-parallel with it: given off, a conflict naming the option.
  assert.match(refused('--model', 'llama2-7b', '--gpus', '8', '--tp', '8', '--sequence-parallel', 'off', '--tp-comm-overlap'),
    /--tp-comm-overlap .*needs sequence parallelism/);
});

test('an H800 cluster defaults to its node\'s 8 x 400 Gb/s InfiniBand, not 100 Gb Ethernet', () => {
  const out = predict('--model', 'gpt2', '--hardware', 'h800-sxm5', '--gpus', '16').results[0].plan.scale_out;
  assert.equal(out.kind, 'infiniband');
  assert.equal(out.gbps_per_node, 400);
});

test('one device stays the single-device prediction', () => {
  const one = predict(...llm, '--batch', '4').results[0];
  const also = predict(...llm, '--batch', '4', '--gpus', '1').results[0];
  assert.equal(also.step.total_ms, one.step.total_ms);
  assert.equal(one.plan, undefined);
});

test('more devices with the same global batch are faster; FSDP fits what one device cannot', () => {
  const at = (gpus) => predict('--model', 'llama2-7b', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16', '--attention',
    'flash', '--seq', '2048', '--gpus', String(gpus), '--global-batch', '64').results[0];
  const eight = at(8), sixteen = at(16);
  assert.ok(sixteen.step.total_ms < eight.step.total_ms);
  const alone = predict('--model', 'llama2-7b', '--hardware', 'a100-sxm4-80gb', '--precision', 'bf16').results[0];
  assert.equal(alone.memory.fits, false);
  assert.ok(eight.memory.fits);
});

test('impossible layouts are clear errors naming the dimension', () => {
  assert.match(refused(...llm, '--gpus', '8', '--tp', '3'), /tp 3 does not divide the 8 devices/);
  assert.match(refused(...llm, '--gpus', '40', '--tp', '8', '--pp', '5'), /tp 8 does not divide the 20 attention heads/);
  assert.match(refused(...llm, '--gpus', '64', '--pp', '64'), /pp 64 is more pipeline stages than the 36 blocks/);
  assert.match(refused(...llm, '--gpus', '8', '--dp', '2', '--tp', '2', '--pp', '4', '--cp', '2'), /does not match the 8 devices/);
  assert.match(refused(...llm, '--gpus', '8', '--dp', '8', '--global-batch', '12'), /does not split over dp 8/);
  assert.match(refused(...llm, '--gpus', '8', '--ep', '2'), /dense/);
  assert.match(refused(...llm, '--gpus', '8', '--network', '12 carrier pigeons'), /network/);
  assert.match(refused(...llm, '--gpus', '8', '--checkpointing=some'), /checkpointing/);
});

// Issue #27: 8 NICs of 10^-31 Gb/s answered a step of 9.7e35 ms, and a sign before the NIC count was dropped; the
// refusal names the option as given (not the spec sheet) and the plausible range.
test('a network outside the plausible range or with a sign is refused as --network', () => {
  const tiny = refused(...llm, '--gpus', '16', '--network', '8x0.0000000000000000000000000000001g-ib');
  assert.match(tiny, /^prenet: error: --network '8x0\.0+1g-ib' is slower than any network: .* 0\.001 to 100000/);
  assert.match(refused(...llm, '--gpus', '16', '--network', '-8x400g-ib'), /--network '-8x400g-ib' has an empty part/);
  assert.match(refused(...llm, '--gpus', '16', '--network', '0x400g-ib'), /--network '0x400g-ib' must have at least one NIC/);
  // The slowest plausible network is an answer, with finite times.
  const slow = predict(...llm, '--gpus', '16', '--network', 'ib-0.008g').results[0];
  assert.ok(Number.isFinite(slow.step.total_ms) && slow.step.total_ms > 0, JSON.stringify(slow.step));
});

test('on every accelerator, those whose sheets cannot form the cluster are listed, the others answer', () => {
  const doc = predict('--model', 'gpt2', '--gpus', '8');
  const refused = doc.results.filter((r) => r.error);
  const answered = doc.results.filter((r) => r.plan);
  assert.ok(answered.length > 20);
  for (const r of refused) assert.ok(r.error.message && r.error.field, JSON.stringify(r));
  const table = run('predict', '--model', 'gpt2', '--gpus', '8');
  assert.equal(table.status, 0, table.stderr);
  for (const r of refused) assert.ok(table.stdout.includes(`${r.hardware}: `), r.hardware);
});

test('the plan search answers DeepSeek-V3 on 2,048 H800s (61 blocks: uneven pipeline ends too) within its budget', () => {
  // Only the layout space is checked here: how long the search takes is bench/'s and docs/limits.md's business.
  const out = predict('--model', resolve(root, 'tests/fixtures/hf/deepseek-v3.json'), '--hardware', 'h800-sxm5', '--gpus', '2048');
  const plan = out.results[0].plan;
  assert.ok(plan.layouts_searched > 20000, String(plan.layouts_searched));
  assert.equal(plan.gpus, 2048);
  assert.ok(out.results[0].step.total_ms > 0);
});

test('--sequence-parallel off: every tp rank runs the norms on all tokens (Megatron without it, Megatron-DeepSpeed)', () => {
  const layout = [...llm, '--gpus', '8', '--dp', '2', '--tp', '4', '--pp', '1', '--batch', '4', '--global-batch', '8'];
  const on = predict(...layout).results[0];
  const off = predict(...layout, '--sequence-parallel', 'off').results[0];
  const asked = predict(...layout, '--sequence-parallel').results[0];
  assert.equal(on.plan.sequence_parallel, true);  // tp > 1 and not given: on
  assert.equal(asked.plan.sequence_parallel, true);
  assert.equal(off.plan.sequence_parallel, false);
  // The norms run on 4x the tokens per rank (~4x their time), the residual adds and dropouts too.
  const family = (r, f) => r.step.by_family_ms[f];
  assert.ok(family(off, 'norm') > 3 * family(on, 'norm'), `${family(off, 'norm')} vs ${family(on, 'norm')}`);
  assert.ok(family(off, 'elementwise') > family(on, 'elementwise'));
  assert.equal(family(off, 'gemm'), family(on, 'gemm'));
  // Without sequence parallelism the activations of those layers are whole on every rank.
  assert.ok(off.memory.peak_allocated_bytes > on.memory.peak_allocated_bytes);
  assert.match(refused(...layout, '--sequence-parallel', 'maybe'), /unexpected argument 'maybe'/);
  assert.match(refused(...layout, '--sequence-parallel=maybe'), /--sequence-parallel takes no value or one of its words/);
});

test('--framework auto runs each accelerator under its usual framework and says which', () => {
  // XLA on a TPU, a graph compiler's fusion on Gaudi and Trainium, PyTorch eager (generic) on a GPU
  // (run/framework.hpp usual_framework); an explicit framework applies to every accelerator alike.
  const gpt2 = ['--model', 'gpt2-large', '--attention', 'flash', '--seq', '512', '--precision', 'bf16'];
  const ask = (...extra) => predict(...gpt2, '--hardware', 'tpu-v4,gaudi2,trainium2,h100-sxm5-80gb', ...extra);
  const auto = ask();
  assert.equal(auto.settings.framework, 'auto');
  const used = Object.fromEntries(auto.results.map((r) => [r.hardware, [r.framework_used, r.compile_used]]));
  assert.deepEqual(auto.results.map((r) => r.framework_chosen), [true, true, true, false]);
  assert.deepEqual(used, { 'tpu-v4': ['xla', true], gaudi2: ['graph', true], trainium2: ['graph', true],
                           'h100-sxm5-80gb': ['generic', false] });
  const generic = ask('--framework', 'generic');
  for (const r of generic.results) {
    assert.deepEqual([r.framework_used, r.compile_used], ['generic', false], r.hardware);
    assert.equal(r.framework_chosen, false, r.hardware);
  }
  // The fused chains are the difference: the same Gaudi step under graph is faster than under generic, and the
  // H100's is the same either way.
  const at = (reply, id) => reply.results.find((r) => r.hardware === id).step.total_ms;
  assert.ok(at(auto, 'gaudi2') < at(generic, 'gaudi2'), `${at(auto, 'gaudi2')} ${at(generic, 'gaudi2')}`);
  assert.equal(at(auto, 'h100-sxm5-80gb'), at(generic, 'h100-sxm5-80gb'));
  // A cluster question too: the TPU's plan is searched under XLA.
  const cluster = predict(...gpt2, '--hardware', 'tpu-v4,h100-sxm5-80gb', '--gpus', '8');
  assert.deepEqual(cluster.results.map((r) => r.framework_used), ['xla', 'generic']);
  // The table names it beside the accelerator, as the page's badge does.
  const table = run('predict', ...gpt2, '--hardware', 'tpu-v4,h100-sxm5-80gb');
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /^tpu-v4 \[xla\] /m);
  assert.match(table.stdout, /^h100-sxm5-80gb {2,}\d/m);
});
