// Contract tests of the `prenet` command line: JSON shapes and types, consistency of the numbers, and the
// behaviour on bad input (exit status 2, one `prenet: error:` line on stderr, nothing on stdout).
// The binary is $PRENET, or build/prenet under the repository root.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const binary = resolve(root, process.env.PRENET ?? 'build/prenet');

// ---- helpers ----------------------------------------------------------------------------------------------

function prenet(...args) {
  const r = spawnSync(binary, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

// Runs a command that must succeed and print one JSON document.
function json(...args) {
  const r = prenet(...args);
  assert.equal(r.signal, null, `prenet ${args.join(' ')} died of ${r.signal}`);
  assert.equal(r.status, 0, `prenet ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  assert.equal(r.stderr, '', `prenet ${args.join(' ')} wrote to stderr: ${r.stderr}`);
  try {
    return JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`prenet ${args.join(' ')} printed invalid JSON (${e.message}): ${r.stdout.slice(0, 500)}`);
  }
}

const predict = (...args) => json('predict', ...args, '--json');

// A command that must fail through the error path: exit 2, empty stdout, one line on stderr.
function assertFails(args, pattern) {
  const r = prenet(...args);
  const what = `prenet ${args.join(' ')}`;
  assert.equal(r.signal, null, `${what} died of ${r.signal}`);
  assert.equal(r.status, 2, `${what} exited ${r.status} (want 2); stderr: ${r.stderr}`);
  assert.equal(r.stdout, '', `${what} printed to stdout: ${r.stdout.slice(0, 300)}`);
  assert.match(r.stderr, /^prenet: error: \S.*\n$/, `${what}: stderr is not one 'prenet: error:' line: ${r.stderr}`);
  assert.equal(r.stderr.split('\n').length, 2, `${what}: stderr has more than one line: ${r.stderr}`);
  if (pattern) assert.match(r.stderr, pattern, `${what}: message does not match ${pattern}: ${r.stderr}`);
  return r.stderr;
}

const isFinitePositive = (x) => typeof x === 'number' && Number.isFinite(x) && x > 0;
const isFiniteNonNegative = (x) => typeof x === 'number' && Number.isFinite(x) && x >= 0;

function assertPositive(x, what) {
  assert.ok(isFinitePositive(x), `${what} must be a finite positive number, got ${JSON.stringify(x)}`);
}
function assertNonNegative(x, what) {
  assert.ok(isFiniteNonNegative(x), `${what} must be a finite non-negative number, got ${JSON.stringify(x)}`);
}
function assertClose(actual, expected, rel, what) {
  const scale = Math.max(Math.abs(actual), Math.abs(expected), Number.MIN_VALUE);
  assert.ok(Math.abs(actual - expected) <= rel * scale, `${what}: ${actual} != ${expected} (relative ${rel})`);
}

// Checks every field the contract names in one `predict --json` result.
function checkResult(r, { language } = {}) {
  assert.equal(typeof r.hardware, 'string');
  assert.ok(r.hardware.length > 0);
  const where = `result for ${r.hardware}`;
  const s = r.step;
  assert.equal(typeof s, 'object', `${where}: step`);
  assertPositive(s.forward_ms, `${where}: step.forward_ms`);
  assertPositive(s.backward_ms, `${where}: step.backward_ms`);
  assertPositive(s.optimizer_ms, `${where}: step.optimizer_ms`);
  assertNonNegative(s.communication_ms, `${where}: step.communication_ms`);
  assertPositive(s.total_ms, `${where}: step.total_ms`);
  // input_stall_ms (added with issue #4) is 0 unless --input-samples-per-s limits the step.
  assertNonNegative(s.input_stall_ms ?? 0, `${where}: step.input_stall_ms`);
  // overhead_ms: the framework's fitted step overhead (issue #24 item 5), a part of its own.
  assertNonNegative(s.overhead_ms, `${where}: step.overhead_ms`);
  assertClose(s.total_ms, s.forward_ms + s.backward_ms + s.optimizer_ms + s.communication_ms + s.overhead_ms +
    (s.input_stall_ms ?? 0), 1e-9, `${where}: total_ms is the sum of its parts`);
  const t = r.throughput;
  assert.equal(typeof t, 'object', `${where}: throughput`);
  assertPositive(t.samples_per_s, `${where}: throughput.samples_per_s`);
  assert.ok('tokens_per_s' in t, `${where}: throughput.tokens_per_s is missing`);
  if (language) assertPositive(t.tokens_per_s, `${where}: throughput.tokens_per_s`);
  else assert.ok(t.tokens_per_s === null || isFinitePositive(t.tokens_per_s), `${where}: tokens_per_s`);
  const m = r.memory;
  assert.equal(typeof m, 'object', `${where}: memory`);
  assertPositive(m.peak_bytes_per_device, `${where}: memory.peak_bytes_per_device`);
  assertPositive(m.capacity_bytes, `${where}: memory.capacity_bytes`);
  assert.equal(typeof m.fits, 'boolean', `${where}: memory.fits`);
  assert.equal(m.fits, m.peak_bytes_per_device <= m.capacity_bytes, `${where}: fits agrees with the byte counts`);
  // PyTorch's three measures: allocated <= reserved (the allocator's hold) <= the device's (plus context, NCCL).
  assertPositive(m.peak_allocated_bytes, `${where}: memory.peak_allocated_bytes`);
  assert.ok(m.peak_allocated_bytes <= m.peak_reserved_bytes && m.peak_reserved_bytes < m.peak_bytes_per_device,
    `${where}: allocated ${m.peak_allocated_bytes} <= reserved ${m.peak_reserved_bytes} < device ${m.peak_bytes_per_device}`);
  if ('advice' in m) assert.equal(m.advice === null, m.fits, `${where}: memory.advice exactly when it does not fit`);
}

function checkPrediction(doc, opts) {
  assert.equal(typeof doc.model, 'object');
  assert.equal(typeof doc.model.name, 'string');
  assert.ok(doc.model.name.length > 0);
  assert.ok(Number.isInteger(doc.model.params) && doc.model.params > 0, `model.params ${doc.model.params}`);
  assert.equal(typeof doc.settings, 'object');
  assert.ok(Number.isInteger(doc.settings.batch) && doc.settings.batch >= 1, 'settings.batch');
  assert.ok(['fp32', 'tf32', 'fp16', 'bf16', 'fp8'].includes(doc.settings.precision), 'settings.precision');
  assert.ok(['sgd', 'adam', 'adamw', 'adafactor', 'lion'].includes(doc.settings.optimizer), 'settings.optimizer');
  assert.ok(Array.isArray(doc.results) && doc.results.length > 0, 'results is a non-empty array');
  for (const r of doc.results) checkResult(r, opts);
}

const byId = (doc) => Object.fromEntries(doc.results.map((r) => [r.hardware, r]));

// ---- fixtures written to a temporary directory -------------------------------------------------------------

let dir;
const file = (name) => join(dir, name);
const mlp = {
  name: 'mlp',
  input: { shape: [784] },
  layers: [
    { type: 'linear', out_features: 256 },
    { type: 'activation', function: 'relu' },
    { type: 'linear', out_features: 10 },
    { type: 'cross_entropy' },
  ],
};
const mlpParams = 784 * 256 + 256 + 256 * 10 + 10;
const gpt2Config = {
  model_type: 'gpt2',
  n_embd: 128,
  n_layer: 2,
  n_head: 4,
  vocab_size: 1000,
  n_positions: 256,
};
// GPT-2 with tied LM head: token + position embeddings, per block 2 LayerNorms, c_attn, c_proj, c_fc, mlp
// c_proj (all with biases), and the final LayerNorm.
const gpt2Params = (() => {
  const d = 128, v = 1000, p = 256, L = 2;
  const block = 2 * (2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
  return v * d + p * d + L * block + 2 * d;
})();
const customSheet = {
  id: 'my-test-accel',
  name: 'Test Accelerator',
  peak_tflops: { fp32: 20 },
  memory: { capacity_gb: 24, bandwidth_gbps: 900 },
};

before(() => {
  assert.ok(existsSync(binary), `${binary} not found; build it (ninja -C build) or set PRENET`);
  dir = mkdtempSync(join(tmpdir(), 'prenet-cli-'));
  writeFileSync(file('mlp.json'), JSON.stringify(mlp));
  writeFileSync(file('config.json'), JSON.stringify(gpt2Config));
  writeFileSync(file('accel.json'), JSON.stringify(customSheet));
  writeFileSync(file('malformed.json'), '{"name": "mlp", "layers": [');
  writeFileSync(file('bad-layer.json'),
    JSON.stringify({ name: 'bad', input: { shape: [784] }, layers: [{ type: 'linear', out_features: -5 }] }));
  writeFileSync(file('unknown-layer.json'),
    JSON.stringify({ name: 'bad', input: { shape: [784] }, layers: [{ type: 'warp_drive' }] }));
  writeFileSync(file('bad-sheet.json'),
    JSON.stringify({ id: 'broken', peak_tflops: { fp32: 10 }, memory: { capacity_gb: 16, bandwidth_gbps: -1 } }));
  // Valid but absurd: the peaks and bandwidth are denormal, so a step would take infinitely long.
  writeFileSync(file('absurd-sheet.json'),
    '{"id": "absurd", "peak_tflops": {"fp32": 1e-320}, "memory": {"capacity_gb": 16, "bandwidth_gbps": 1e-320}}');
  writeFileSync(file('huge.json'), JSON.stringify({
    name: 'huge',
    input: { shape: [4611686018427387904] },
    layers: [{ type: 'linear', out_features: 4611686018427387904 }],
  }));
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---- catalogue commands ------------------------------------------------------------------------------------

let catalogueIds;
const hardwareIds = () => {
  if (!catalogueIds) catalogueIds = json('hardware', '--json').hardware.map((h) => h.id);
  return catalogueIds;
};

describe('hardware', () => {
  test('--json lists the catalogue with ids, names and datasheet figures', () => {
    const doc = json('hardware', '--json');
    assert.ok(Array.isArray(doc.hardware));
    assert.ok(doc.hardware.length >= 33, `only ${doc.hardware.length} accelerators`);
    const ids = new Set();
    for (const h of doc.hardware) {
      assert.match(h.id, /^[a-z0-9][a-z0-9.-]*$/);
      assert.ok(!ids.has(h.id), `duplicate id ${h.id}`);
      ids.add(h.id);
      assert.equal(typeof h.name, 'string');
      assertPositive(h.memory_gb, `${h.id} memory_gb`);
      assertPositive(h.bandwidth_gbps, `${h.id} bandwidth_gbps`);
      assert.equal(typeof h.peak_tflops, 'object');
    }
    for (const id of ['t4', 'a100-sxm4-80gb', 'h100-sxm5-80gb', 'mi300x', 'tpu-v5p', 'gaudi2']) assert.ok(ids.has(id), id);
  });

  test('table output names every accelerator', () => {
    const r = prenet('hardware');
    assert.equal(r.status, 0);
    for (const id of hardwareIds()) assert.ok(r.stdout.includes(id), `table lacks ${id}`);
  });
});

describe('zoo', () => {
  test('--json lists models with ids and domains', () => {
    const doc = json('zoo', '--json');
    assert.ok(Array.isArray(doc.models) && doc.models.length > 10);
    const ids = doc.models.map((m) => m.id);
    for (const id of ['resnet18', 'gpt2', 'llama2-70b', 'llama3.1-405b']) assert.ok(ids.includes(id), id);
    for (const m of doc.models) {
      assert.equal(typeof m.id, 'string');
      assert.equal(typeof m.domain, 'string');
      assert.equal(typeof m.description, 'string');
    }
  });

  test('table output names the models', () => {
    const r = prenet('zoo');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /resnet18/);
    assert.match(r.stdout, /gpt2/);
  });
});

// ---- predict -----------------------------------------------------------------------------------------------

describe('predict', () => {
  test('a zoo model on one accelerator has the contract shape', () => {
    const doc = predict('--model', 'gpt2', '--hardware', 'a100-sxm4-80gb');
    checkPrediction(doc, { language: true });
    assert.equal(doc.model.name, 'gpt2');
    assert.equal(doc.results.length, 1);
    assert.equal(doc.results[0].hardware, 'a100-sxm4-80gb');
    const r = doc.results[0];
    assertClose(r.throughput.samples_per_s, doc.settings.batch / (r.step.total_ms / 1e3), 1e-9, 'samples_per_s');
    assertClose(r.throughput.tokens_per_s, r.throughput.samples_per_s * doc.settings.seq, 1e-9, 'tokens_per_s');
    assertClose(r.memory.capacity_bytes, 80 * 2 ** 30, 1e-9, 'A100 80GB capacity (binary GB: 81920 MiB)');
  });

  test('settings report the defaults that were assumed', () => {
    const s = predict('--model', 'gpt2', '--hardware', 't4').settings;
    assert.equal(s.batch, 1);
    assert.equal(s.precision, 'fp32');
    assert.equal(s.optimizer, 'adamw');
    assert.ok(Number.isInteger(s.seq) && s.seq > 0, `settings.seq ${s.seq}`);
    const v = predict('--model', 'resnet18', '--hardware', 't4').settings;
    assert.equal(v.image, 224);
  });

  test('settings echo the options given', () => {
    const s = predict('--model', 'gpt2', '--hardware', 't4', '--batch', '8', '--seq', '512', '--precision', 'bf16',
      '--optimizer', 'sgd').settings;
    assert.equal(s.batch, 8);
    assert.equal(s.seq, 512);
    assert.equal(s.precision, 'bf16');
    assert.equal(s.optimizer, 'sgd');
    assert.equal(predict('--model', 'resnet18', '--hardware', 't4', '--image', '160').settings.image, 160);
  });

  test('a vision model has positive samples/s', () => {
    const doc = predict('--model', 'resnet18', '--hardware', 'a100-sxm4-80gb', '--batch', '32');
    checkPrediction(doc);
    assert.equal(doc.settings.batch, 32);
  });

  test('--hardware all returns every catalogue id, once', () => {
    const doc = predict('--model', 'gpt2', '--hardware', 'all');
    checkPrediction(doc, { language: true });
    const got = doc.results.map((r) => r.hardware).sort();
    assert.deepEqual(got, [...hardwareIds()].sort());
  });

  test('the default hardware is all', () => {
    const doc = predict('--model', 'gpt2');
    assert.deepEqual(doc.results.map((r) => r.hardware).sort(), [...hardwareIds()].sort());
  });

  test('a comma list returns exactly those accelerators in order', () => {
    const doc = predict('--model', 'gpt2', '--hardware', 't4,h100-sxm5-80gb,tpu-v4');
    checkPrediction(doc, { language: true });
    assert.deepEqual(doc.results.map((r) => r.hardware), ['t4', 'h100-sxm5-80gb', 'tpu-v4']);
  });

  test('a faster accelerator predicts a shorter step', () => {
    const r = byId(predict('--model', 'gpt2', '--hardware', 't4,h100-sxm5-80gb', '--batch', '8'));
    assert.ok(r['h100-sxm5-80gb'].step.total_ms < r.t4.step.total_ms);
  });

  test('a custom spec file with plain numbers appears in the results', () => {
    const doc = predict('--model', 'gpt2', '--hardware', file('accel.json'));
    checkPrediction(doc, { language: true });
    assert.equal(doc.results.length, 1);
    const r = doc.results[0];
    assert.equal(r.hardware, 'my-test-accel');
    assertClose(r.memory.capacity_bytes, 24 * 2 ** 30, 1e-9, 'custom capacity (binary GB)');
  });

  test('a comma list may mix catalogue ids and spec files', () => {
    const doc = predict('--model', 'gpt2', '--hardware', `t4,${file('accel.json')},a10`);
    checkPrediction(doc, { language: true });
    assert.deepEqual(doc.results.map((r) => r.hardware), ['t4', 'my-test-accel', 'a10']);
  });

  test('a layers-JSON file is costed with the right parameter count', () => {
    const doc = predict('--model', file('mlp.json'), '--hardware', 't4', '--batch', '64');
    checkPrediction(doc);
    assert.equal(doc.model.name, 'mlp');
    assert.equal(doc.model.params, mlpParams);
  });

  test('a Hugging Face config.json is costed', () => {
    const doc = predict('--model', file('config.json'), '--hardware', 'a10', '--batch', '2');
    checkPrediction(doc, { language: true });
    assert.equal(doc.model.params, gpt2Params);
    assert.equal(doc.settings.seq, 256, 'the default sequence is n_positions');
  });

  test('step time grows with batch and samples/s is reported for each', () => {
    const sizes = [1, 8, 64];
    const results = sizes.map((b) => predict('--model', 'gpt2', '--hardware', 'a100-sxm4-80gb', '--batch', String(b)));
    for (let i = 0; i < sizes.length; ++i) {
      assert.equal(results[i].settings.batch, sizes[i]);
      assertPositive(results[i].results[0].throughput.samples_per_s, `samples_per_s at batch ${sizes[i]}`);
    }
    for (let i = 1; i < sizes.length; ++i) {
      const prev = results[i - 1].results[0], cur = results[i].results[0];
      assert.ok(cur.step.total_ms > prev.step.total_ms, `step at batch ${sizes[i]} not longer than at ${sizes[i - 1]}`);
      assert.ok(cur.step.forward_ms > prev.step.forward_ms, 'forward grows with batch');
      assert.ok(cur.memory.peak_bytes_per_device > prev.memory.peak_bytes_per_device, 'memory grows with batch');
      // The learned efficiency is piecewise (trees), so allow a small wobble, not a real loss.
      assert.ok(cur.throughput.samples_per_s >= prev.throughput.samples_per_s * 0.97,
        'larger batches do not lose throughput');
    }
  });

  test('the sequence length changes the step time', () => {
    const short = predict('--model', 'gpt2', '--hardware', 't4', '--seq', '128').results[0];
    const long = predict('--model', 'gpt2', '--hardware', 't4', '--seq', '1024').results[0];
    assert.ok(long.step.total_ms > short.step.total_ms);
  });

  test('bf16 is faster than fp32 on an H100', () => {
    const args = ['--model', 'gpt2', '--hardware', 'h100-sxm5-80gb', '--batch', '8'];
    const fp32 = predict(...args, '--precision', 'fp32');
    const bf16 = predict(...args, '--precision', 'bf16');
    assert.equal(bf16.settings.precision, 'bf16');
    checkPrediction(bf16, { language: true });
    assert.ok(bf16.results[0].step.total_ms < fp32.results[0].step.total_ms,
      `bf16 ${bf16.results[0].step.total_ms} ms, fp32 ${fp32.results[0].step.total_ms} ms`);
  });

  test('every precision and optimizer is accepted', () => {
    for (const p of ['fp32', 'tf32', 'fp16', 'bf16', 'fp8'])
      checkPrediction(predict('--model', 'gpt2', '--hardware', 'h100-sxm5-80gb', '--precision', p), { language: true });
    for (const o of ['sgd', 'adam', 'adamw', 'adafactor', 'lion'])
      checkPrediction(predict('--model', 'gpt2', '--hardware', 'h100-sxm5-80gb', '--optimizer', o), { language: true });
  });

  test('SGD needs less memory than AdamW', () => {
    const sgd = predict('--model', 'gpt2', '--hardware', 't4', '--optimizer', 'sgd').results[0];
    const adamw = predict('--model', 'gpt2', '--hardware', 't4', '--optimizer', 'adamw').results[0];
    assert.ok(sgd.memory.peak_bytes_per_device < adamw.memory.peak_bytes_per_device);
  });

  test('llama2-70b does not fit on a T4; resnet18 fits on an A100 80GB', () => {
    const llama = predict('--model', 'llama2-70b', '--hardware', 't4').results[0];
    checkResult(llama, { language: true });
    assert.equal(llama.memory.fits, false);
    assert.ok(llama.memory.peak_bytes_per_device > 16e9 * 10);
    const resnet = predict('--model', 'resnet18', '--hardware', 'a100-sxm4-80gb').results[0];
    assert.equal(resnet.memory.fits, true);
  });

  test('the largest zoo models on every accelerator give finite numbers', () => {
    for (const model of ['llama3.1-405b', 'deepseek-v3', 'palm-540b']) {
      const doc = predict('--model', model, '--hardware', 'all');
      checkPrediction(doc, { language: true });
    }
  });

  test('--key=value is accepted', () => {
    const doc = predict('--model=gpt2', '--hardware=t4', '--batch=4');
    assert.equal(doc.settings.batch, 4);
    assert.equal(doc.results[0].hardware, 't4');
  });

  test('scientific notation is accepted for sizes', () => {
    assert.equal(predict('--model', 'gpt2', '--hardware', 't4', '--batch', '1e2').settings.batch, 100);
  });

  test('without --json it prints a readable table', () => {
    const r = prenet('predict', '--model', 'gpt2', '--hardware', 't4,a100-sxm4-80gb');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.throws(() => JSON.parse(r.stdout));
    assert.match(r.stdout, /gpt2/);
    assert.match(r.stdout, /\bt4\b/);
    assert.match(r.stdout, /a100-sxm4-80gb/);
    assert.match(r.stdout, /hardware/);
  });
});

// ---- whole training runs (issue #4) -------------------------------------------------------------------

describe('training runs', () => {
  const h100 = ['--model', 'gpt2', '--hardware', 'h100-sxm5-80gb'];

  test('--compile runs fewer kernels and a shorter step', () => {
    const eager = predict(...h100, '--batch', '8').results[0];
    const compiled = predict(...h100, '--batch', '8', '--compile');
    assert.equal(compiled.settings.compile, true);
    const c = compiled.results[0];
    assert.ok(c.step.kernels < eager.step.kernels, `${c.step.kernels} ${eager.step.kernels}`);
    assert.ok(c.step.by_family_ms.elementwise < eager.step.by_family_ms.elementwise);
    assert.ok(c.step.total_ms < eager.step.total_ms);
  });

  test('settings echo every training assumption with its default', () => {
    const s = predict(...h100).settings;
    assert.equal(s.optimizer, 'adamw');
    assert.equal(s.optimizer_impl, 'fused');
    assert.equal(s.optimizer_impl_used, 'fused');
    assert.equal(s.grad_accum, 1);
    assert.equal(s.global_batch, 1);
    assert.equal(s.checkpointing, false);
    for (const k of ['samples', 'epochs', 'tokens', 'price_per_hour', 'input_samples_per_s']) assert.equal(s[k], null, k);
    assert.equal(s.overhead, 'fitted');
    assert.equal(s.framework, 'auto');  // each accelerator's usual one: generic on an H100
    assert.equal(s.compile, false);
    assert.equal(typeof s.price_source, 'string');
    assert.equal(typeof s.energy_model, 'string');
    assert.equal(s.loss, 'full');
    for (const k of ['cuda_context_bytes', 'library_workspace_bytes', 'rounding_bytes_per_tensor', 'nccl_bytes_per_group'])
      assertPositive(s.memory_reserve[k], `memory_reserve.${k}`);
    assert.ok(s.memory_reserve.fragmentation > 0 && s.memory_reserve.fragmentation < 1, 'memory_reserve.fragmentation');
    assert.equal(typeof s.memory_reserve.assumption, 'string');
    const r = predict(...h100).results[0];
    assert.equal(r.run, null, 'no run without --samples or --tokens');
    assert.equal(r.step.input_bound, false);
    assert.equal(r.step.input_ms, null);
    assert.equal(r.memory.advice, null);
    assertClose(r.step.micro_batch_ms, r.step.forward_ms + r.step.backward_ms, 1e-9, 'one micro-batch');
  });

  test('with both --tokens and --samples each model trains on the budget it counts in', () => {
    const both = ['--hardware', 't4', '--tokens', '1e9', '--samples', '1000', '--epochs', '2'];
    const lm = predict('--model', 'gpt2', ...both);
    assert.equal(lm.settings.tokens, 1e9);
    assert.equal(lm.settings.samples, null);
    assert.equal(lm.settings.epochs, null);
    assert.equal(lm.results[0].run.tokens >= 1e9, true, 'a token budget');
    const tokensOnly = predict('--model', 'gpt2', '--hardware', 't4', '--tokens', '1e9');
    assert.equal(lm.results[0].run.steps, tokensOnly.results[0].run.steps);
    const cnn = predict('--model', 'resnet18', ...both);
    assert.equal(cnn.settings.tokens, null);
    assert.equal(cnn.settings.samples, 1000);
    assert.equal(cnn.settings.epochs, 2);
    assert.equal(cnn.results[0].run.samples, 2000);
  });

  test('the issue example: AdamW, bf16, checkpointing, 4 micro-batches, 2e12 tokens', () => {
    const doc = predict(...h100, '--batch', '8', '--optimizer', 'adamw', '--precision', 'bf16', '--checkpointing',
      '--grad-accum', '4', '--tokens', '2e12');
    checkPrediction(doc, { language: true });
    const s = doc.settings;
    assert.equal(s.grad_accum, 4);
    assert.equal(s.global_batch, 32);
    assert.equal(s.checkpointing, true);
    assert.equal(s.tokens, 2e12);
    const r = doc.results[0];
    const run = r.run;
    const tokensPerStep = 8 * 4 * s.seq;
    assert.equal(run.steps, Math.ceil(2e12 / tokensPerStep));
    assert.ok(run.tokens >= 2e12 && run.tokens < 2e12 + tokensPerStep, `run.tokens ${run.tokens}`);
    assertClose(run.hours, run.steps * r.step.total_ms / 3.6e6, 1e-9, 'hours = steps x step time');
    assertClose(run.gpu_hours, run.hours, 1e-12, 'one device');
    assertClose(run.price_per_hour_used, r.price_per_hour, 1e-12, 'the sheet price');
    assertClose(run.cost_usd, run.gpu_hours * run.price_per_hour_used, 1e-9, 'cost');
    assert.ok(run.power_share_of_tdp >= 0.3 && run.power_share_of_tdp <= 1, 'power share');
    assertClose(run.average_power_w, 700 * run.power_share_of_tdp, 1e-9, 'H100 SXM TDP 700 W');
    assertClose(run.energy_kwh, run.average_power_w * run.hours / 1e3, 1e-9, 'energy');
    assert.ok(r.step.recompute_ms > 0, 'checkpointing recomputes');
    assert.ok(r.step.grad_accumulation_ms > 0, 'accumulation passes');
    assert.equal(r.step.grad_accum, 4);
    assertClose(r.step.total_ms, 4 * r.step.micro_batch_ms + r.step.grad_accumulation_ms + r.step.optimizer_ms +
      r.step.overhead_ms, 1e-9, 'four micro-batches, one optimizer step and the framework overhead');
    assertClose(r.throughput.samples_per_s, 32 / (r.step.total_ms / 1e3), 1e-9, 'samples/s counts the global batch');
    assert.ok(r.memory.checkpointed_blocks > 0);
  });

  test('gradient accumulation: N micro-batches, one optimizer step, the same activations', () => {
    const one = predict(...h100, '--batch', '4').results[0];
    const four = predict(...h100, '--batch', '4', '--grad-accum', '4').results[0];
    assertClose(four.step.forward_ms, 4 * one.step.forward_ms, 1e-9, 'forward x 4');
    assertClose(four.step.optimizer_ms, one.step.optimizer_ms, 1e-12, 'one optimizer step');
    assertClose(four.step.micro_batch_ms, one.step.micro_batch_ms, 1e-12, 'micro-batch time');
    assert.equal(four.memory.activation_bytes, one.memory.activation_bytes);
    assert.ok(four.step.total_ms > 3.5 * one.step.total_ms);
  });

  test('checkpointing trades activations for recompute time', () => {
    const plain = predict(...h100, '--batch', '8').results[0];
    const ckpt = predict(...h100, '--batch', '8', '--checkpointing').results[0];
    assert.ok(ckpt.memory.activation_bytes < 0.5 * plain.memory.activation_bytes,
      `${ckpt.memory.activation_bytes} vs ${plain.memory.activation_bytes}`);
    assert.ok(ckpt.memory.peak_bytes_per_device < plain.memory.peak_bytes_per_device);
    assert.ok(ckpt.step.backward_ms > plain.step.backward_ms);
    assertClose(ckpt.step.forward_ms, plain.step.forward_ms, 1e-12, 'forward unchanged');
    assertClose(ckpt.step.recompute_ms, ckpt.step.backward_ms - plain.step.backward_ms, 1e-9, 'recompute');
    assert.equal(plain.step.recompute_ms, 0);
  });

  test('each checkpointing kind runs on one device: per-op between none and full, offload recomputes nothing', () => {
    const run = (kind) => predict(...h100, '--batch', '8', '--checkpointing', kind);
    const [none, op, full, offload] = ['none', 'op-selective', 'full', 'offload'].map(run);
    assert.equal(op.settings.checkpointing, 'op-selective');
    const act = (d) => d.results[0].memory.activation_bytes, recompute = (d) => d.results[0].step.recompute_ms;
    assert.ok(act(full) < act(op) && act(op) < act(none), `${act(full)} < ${act(op)} < ${act(none)}`);
    assert.ok(recompute(op) > 0 && recompute(op) < recompute(full));
    assert.equal(recompute(offload), 0);
    assert.ok(act(offload) < act(full));
  });

  test('memory parts add up to the peak', () => {
    for (const args of [[], ['--precision', 'bf16', '--optimizer-impl', 'foreach'], ['--optimizer', 'sgd']]) {
      const m = predict(...h100, '--batch', '2', ...args).results[0].memory;
      const sum = m.weights_bytes + m.gradients_bytes + m.optimizer_state_bytes + m.activation_bytes +
        m.temporary_bytes + m.framework_reserve_bytes;
      assertClose(sum, m.peak_bytes_per_device, 1e-9, `parts of the peak with ${args.join(' ')}`);
      assert.ok(['forward_backward', 'optimizer'].includes(m.peak_phase));
      assertPositive(m.framework_reserve_bytes, 'framework reserve');
    }
  });

  test('a chunked loss frees the logits the full loss keeps', () => {
    const args = ['--model', 'llama3-8b', '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16', '--seq', '8192'];
    const full = predict(...args).results[0].memory, chunked = predict(...args, '--loss', 'chunked').results[0].memory;
    // 8192 tokens x 128256 words: 6 bytes a logit saved (fp32 log-probabilities and the bf16 logits).
    assertClose(full.activation_bytes - chunked.activation_bytes, 6 * 8192 * 128256, 1e-9, 'logits saved');
    assert.ok(chunked.loss_temporary_bytes < full.loss_temporary_bytes / 10);
    assert.equal(predict(...args, '--loss', 'chunked').settings.loss, 'chunked');
  });

  test('mixed-precision AdamW keeps 16 bytes per parameter of weights, gradients and states', () => {
    const doc = predict(...h100, '--precision', 'bf16');
    const m = doc.results[0].memory;
    assertClose(m.weights_bytes + m.gradients_bytes + m.optimizer_state_bytes, 16 * doc.model.params, 1e-12, '16 B/param');
    const lion = predict(...h100, '--precision', 'bf16', '--optimizer', 'lion');
    const l = lion.results[0].memory;
    assertClose(l.weights_bytes + l.gradients_bytes + l.optimizer_state_bytes, 12 * doc.model.params, 1e-12, 'Lion 12 B');
    const ada = predict(...h100, '--precision', 'bf16', '--optimizer', 'adafactor').results[0].memory;
    assert.ok(ada.optimizer_state_bytes < 0.05 * m.optimizer_state_bytes, 'Adafactor factors its states');
  });

  test('optimizer implementations: foreach moves more bytes than fused; Adafactor runs tensor by tensor', () => {
    const fused = predict(...h100, '--precision', 'bf16').results[0];
    const foreach = predict(...h100, '--precision', 'bf16', '--optimizer-impl', 'foreach');
    assert.equal(foreach.settings.optimizer_impl, 'foreach');
    assert.ok(foreach.results[0].step.optimizer_ms > fused.step.optimizer_ms);
    assert.ok(foreach.results[0].memory.optimizer_scratch_bytes > 0);
    assert.equal(fused.memory.optimizer_scratch_bytes, 0);
    const ada = predict(...h100, '--optimizer', 'adafactor').settings;
    assert.equal(ada.optimizer_impl, 'fused');
    assert.equal(ada.optimizer_impl_used, 'single_tensor');
    const fp16 = predict(...h100, '--precision', 'fp16').results[0];
    assert.ok(fp16.step.by_family_ms.optimizer > fused.step.by_family_ms.optimizer * 0.99, 'fp16 adds the unscale pass');
  });

  test('--samples and --epochs give the steps; a price override sets the cost', () => {
    const doc = predict('--model', 'resnet50', '--hardware', 'a100-sxm4-80gb', '--batch', '256',
      '--samples', '1281167', '--epochs', '90', '--price-per-hour', '2.5');
    checkPrediction(doc);
    assert.equal(doc.settings.samples, 1281167);
    assert.equal(doc.settings.epochs, 90);
    assert.equal(doc.settings.price_per_hour, 2.5);
    const run = doc.results[0].run;
    assert.equal(run.steps, Math.ceil(1281167 * 90 / 256));
    assert.equal(run.tokens, null);
    assert.equal(run.price_per_hour_used, 2.5);
    assertClose(run.cost_usd, 2.5 * run.gpu_hours, 1e-12, 'override price');
    const free = predict('--model', 'resnet50', '--hardware', 'a100-sxm4-80gb', '--samples', '1000',
      '--price-per-hour', '0').results[0].run;
    assert.equal(free.cost_usd, 0);
    assert.equal(predict('--model', 'resnet50', '--hardware', 'a100-sxm4-80gb', '--samples', '1000').settings.epochs, 1);
  });

  test('an accelerator without a price or TDP gives null cost and energy', () => {
    const run = predict('--model', 'gpt2', '--hardware', file('accel.json'), '--tokens', '1e9').results[0].run;
    assertPositive(run.hours, 'hours');
    assert.equal(run.price_per_hour_used, null);
    assert.equal(run.cost_usd, null);
    assert.equal(run.energy_kwh, null);
    assert.equal(run.average_power_w, null);
  });

  test('a slow input pipeline bounds the step and says so', () => {
    const free = predict(...h100, '--batch', '8', '--grad-accum', '2').results[0];
    assert.equal(free.step.input_bound, false);
    const rate = 16 / (3 * free.step.total_ms / 1e3);  // delivers a step's samples in 3 x the compute time
    const slow = predict(...h100, '--batch', '8', '--grad-accum', '2', '--input-samples-per-s', String(rate));
    const r = slow.results[0];
    checkResult(r, { language: true });
    assertClose(slow.settings.input_samples_per_s, rate, 1e-12, 'settings echo');
    assert.equal(r.step.input_bound, true);
    assertClose(r.step.total_ms, 16 / rate * 1e3, 1e-9, 'step time >= batch x grad_accum / R');
    assertClose(r.step.input_stall_ms, r.step.total_ms - free.step.total_ms, 1e-9, 'stall');
    const fast = predict(...h100, '--batch', '8', '--grad-accum', '2', '--input-samples-per-s', '1e9').results[0];
    assert.equal(fast.step.input_bound, false);
    assert.equal(fast.step.input_stall_ms, 0);
    const table = prenet('predict', ...h100, '--batch', '8', '--grad-accum', '2', '--input-samples-per-s', String(rate));
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /\*/);
    assert.match(table.stdout, /input-bound/);
  });

  test('memory advice when a step does not fit', () => {
    const doc = predict('--model', 'gpt2-xl', '--hardware', 'h100-sxm5-80gb,t4', '--precision', 'bf16', '--batch', '16');
    const [h100r, t4r] = doc.results;
    for (const r of doc.results) {
      assert.equal(r.memory.fits, false);
      const a = r.memory.advice;
      assert.equal(typeof a, 'object');
      assertClose(a.over_bytes, r.memory.peak_bytes_per_device - r.memory.capacity_bytes, 1e-9, 'over_bytes');
      assert.equal(typeof a.summary, 'string');
      assert.match(a.summary, /GiB/);
    }
    const a = h100r.memory.advice;
    assert.ok(a.micro_batch, 'a smaller micro-batch fits on an H100');
    assert.equal(a.micro_batch.batch * a.micro_batch.grad_accum, 16, 'the global batch is kept');
    assert.ok(a.micro_batch.peak_bytes <= h100r.memory.capacity_bytes);
    assert.ok(a.micro_batch.largest_fitting_batch >= a.micro_batch.batch);
    assert.ok(a.checkpointing && a.checkpointing.peak_bytes < h100r.memory.peak_bytes_per_device);
    // Check the advice: the suggested micro-batch really fits.
    const check = predict('--model', 'gpt2-xl', '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16',
      '--batch', String(a.micro_batch.batch), '--grad-accum', String(a.micro_batch.grad_accum)).results[0].memory;
    assert.equal(check.fits, true);
    assertClose(check.peak_bytes_per_device, a.micro_batch.peak_bytes, 1e-9, 'advised peak');
    // On a T4 the model states alone (16 B/param) do not fit; a bigger accelerator is named.
    assert.equal(t4r.memory.advice.micro_batch, null);
    assert.ok(t4r.memory.advice.smallest_hardware, 'a catalogue accelerator holds it');
    assert.ok(t4r.memory.advice.smallest_hardware.capacity_bytes >= t4r.memory.advice.smallest_hardware.peak_bytes);
    const table = prenet('predict', '--model', 'gpt2-xl', '--hardware', 'h100-sxm5-80gb', '--precision', 'bf16',
      '--batch', '16');
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /Does not fit/);
    assert.match(table.stdout, /--grad-accum/);
  });

  test('the table shows the run columns', () => {
    const r = prenet('predict', ...h100, '--tokens', '2e12', '--grad-accum', '4', '--checkpointing');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /hours/);
    assert.match(r.stdout, /cost/);
    assert.match(r.stdout, /kWh/);
    assert.match(r.stdout, /checkpointing/);
    assert.match(r.stdout, /micro-batches/);
  });

  test('--breakdown gives each layer its time, adding up to the step', () => {
    const plain = json('predict', ...h100, '--json');
    assert.equal(plain.results[0].step.layers, null);
    assert.equal(plain.settings.breakdown, false);
    const doc = json('predict', ...h100, '--breakdown', '--grad-accum', '2', '--json');
    assert.equal(doc.settings.breakdown, true);
    const step = doc.results[0].step;
    assert.ok(Array.isArray(step.layers) && step.layers.length > 10);
    const sum = step.layers.reduce((s, l) => s + l.total_ms, 0);
    const layersPart = step.forward_ms + step.backward_ms - step.grad_accumulation_ms;
    assert.ok(Math.abs(sum - layersPart) <= 1e-6 * layersPart, `${sum} vs ${layersPart}`);
    for (const l of step.layers) {
      assert.equal(typeof l.name, 'string');
      assert.ok(l.forward_ms >= 0 && l.backward_ms >= 0 && l.repeat >= 1);
    }
    const table = prenet('predict', ...h100, '--breakdown');
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /Where the step goes on h100-sxm5-80gb/);
    assert.match(table.stdout, /attention/);
  });
});

// ---- features ----------------------------------------------------------------------------------------------

describe('features', () => {
  test('--json gives params, FLOPs and per-layer features', () => {
    const doc = json('features', '--model', file('mlp.json'), '--batch', '4', '--json');
    assert.equal(doc.params, mlpParams);
    assertPositive(doc.forward_flops, 'forward_flops');
    assertPositive(doc.backward_flops, 'backward_flops');
    assert.ok(Array.isArray(doc.layers));
    assert.equal(doc.layers.length, 4);
    assert.deepEqual(doc.layers.map((l) => l.kind), ['linear', 'activation', 'linear', 'cross_entropy']);
    let params = 0, forward = 0;
    for (const l of doc.layers) {
      assert.equal(typeof l.name, 'string');
      assert.ok(Number.isInteger(l.params) && l.params >= 0);
      assertNonNegative(l.forward_flops, `${l.name} forward_flops`);
      assert.ok(Array.isArray(l.output_shape));
      const repeat = l.repeat ?? 1;
      params += repeat * l.params;
      forward += repeat * l.forward_flops;
    }
    assert.equal(params, mlpParams);
    assertClose(forward, doc.forward_flops, 1e-9, 'per-layer forward FLOPs add up');
    // Forward FLOPs of the two linears dominate: 2 x batch x (784 x 256 + 256 x 10) plus biases.
    assert.ok(doc.forward_flops >= 2 * 4 * (784 * 256 + 256 * 10));
    assert.deepEqual(doc.layers[0].output_shape, [4, 256]);
  });

  test('forward FLOPs scale with batch', () => {
    const a = json('features', '--model', file('mlp.json'), '--batch', '1', '--json');
    const b = json('features', '--model', file('mlp.json'), '--batch', '10', '--json');
    assertClose(b.forward_flops, 10 * a.forward_flops, 1e-9, 'forward FLOPs linear in batch');
    assert.equal(a.params, b.params);
  });

  test('a zoo model and an HF config', () => {
    const gpt = json('features', '--model', 'gpt2', '--seq', '128', '--json');
    assertPositive(gpt.params, 'params');
    assert.ok(gpt.layers.length > 3);
    const hf = json('features', '--model', file('config.json'), '--json');
    assert.equal(hf.params, gpt2Params);
    const vision = json('features', '--model', 'resnet18', '--image', '64', '--json');
    assert.ok(vision.params > 11e6 && vision.params < 12e6, `resnet18 params ${vision.params}`);
  });

  test('without --json it prints a table', () => {
    const r = prenet('features', '--model', file('mlp.json'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /mlp/);
    assert.match(r.stdout, /linear/);
  });
});

// ---- help and usage ----------------------------------------------------------------------------------------

describe('help', () => {
  test('prenet --help lists the commands', () => {
    const r = prenet('--help');
    assert.equal(r.status, 0);
    for (const c of ['predict', 'features', 'zoo', 'hardware']) assert.ok(r.stdout.includes(c), c);
  });

  test('prenet with no arguments prints usage and exits 1', () => {
    const r = prenet();
    assert.equal(r.signal, null);
    assert.equal(r.status, 1);
    assert.match(r.stdout + r.stderr, /Usage: prenet/);
  });

  const options = {
    predict: ['--model', '--hardware', '--batch', '--seq', '--image', '--precision', '--optimizer', '--json',
      '--optimizer-impl', '--grad-accum', '--checkpointing', '--samples', '--epochs', '--tokens', '--price-per-hour',
      '--input-samples-per-s', 'adafactor', 'lion'],
    features: ['--model', '--batch', '--seq', '--image', '--json'],
    zoo: ['--json'],
    hardware: ['--json'],
  };
  for (const [command, flags] of Object.entries(options)) {
    test(`prenet ${command} --help exits 0 and names its options`, () => {
      const r = prenet(command, '--help');
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, new RegExp(`Usage: prenet ${command}`));
      for (const f of flags) assert.ok(r.stdout.includes(f), `${command} --help does not mention ${f}`);
    });
  }
});

// ---- errors ------------------------------------------------------------------------------------------------

describe('errors', () => {
  const base = ['predict', '--hardware', 't4', '--json'];
  const cases = [
    ['unknown model id', () => ['predict', '--model', 'no-such-model', '--hardware', 't4', '--json'], /no-such-model/],
    ['unknown hardware id', () => ['predict', '--model', 'gpt2', '--hardware', 'no-such-gpu', '--json'], /no-such-gpu/],
    ['unknown hardware in a list', () => ['predict', '--model', 'gpt2', '--hardware', 't4,no-such-gpu', '--json'],
      /no-such-gpu/],
    ['unknown precision', () => ['predict', '--model', 'gpt2', '--hardware', 't4', '--precision', 'fp64'], /fp64/],
    ['unknown optimizer', () => ['predict', '--model', 'gpt2', '--hardware', 't4', '--optimizer', 'lamb'], /lamb/],
    ['unknown optimizer implementation', () => [...base, '--model', 'gpt2', '--optimizer-impl', 'apex'], /apex/],
    ['--grad-accum 0', () => [...base, '--model', 'gpt2', '--grad-accum', '0'], /grad-accum/],
    ['--grad-accum 1.5', () => [...base, '--model', 'gpt2', '--grad-accum', '1.5'], /grad-accum/],
    ['a global batch that overflows', () => [...base, '--model', 'gpt2', '--batch', '1e12', '--grad-accum', '1e9'],
      /overflow|large/i],
    ['--tokens -5', () => [...base, '--model', 'gpt2', '--tokens', '-5'], /tokens/],
    ['--tokens abc', () => [...base, '--model', 'gpt2', '--tokens', 'abc'], /tokens/],
    ['--samples 1.5', () => [...base, '--model', 'gpt2', '--samples', '1.5'], /samples/],
    ['--samples 1e30', () => [...base, '--model', 'gpt2', '--samples', '1e30'], /samples|large/],
    ['--epochs 0', () => [...base, '--model', 'gpt2', '--samples', '1000', '--epochs', '0'], /epochs/],
    ['--epochs without --samples', () => [...base, '--model', 'gpt2', '--epochs', '3'], /epochs/],
    ['--tokens on a vision model', () => [...base, '--model', 'resnet18', '--tokens', '1e9'], /tokens/],
    ['--price-per-hour -1', () => [...base, '--model', 'gpt2', '--price-per-hour', '-1'], /price-per-hour/],
    ['--input-samples-per-s 0', () => [...base, '--model', 'gpt2', '--input-samples-per-s', '0'],
      /input-samples-per-s/],
    ['--checkpointing with a value', () => [...base, '--model', 'gpt2', '--checkpointing=yes'], /checkpointing/],
    ['malformed JSON model file', () => [...base, '--model', file('malformed.json')], /JSON/],
    ['missing model file', () => [...base, '--model', file('does-not-exist.json')], /does-not-exist/],
    ['malformed hardware sheet', () => ['predict', '--model', 'gpt2', '--hardware', file('malformed.json')], /JSON/],
    ['missing hardware sheet', () => ['predict', '--model', 'gpt2', '--hardware', file('nope.json')], /nope/],
    ['hardware sheet with a negative bandwidth', () => ['predict', '--model', 'gpt2', '--hardware',
      file('bad-sheet.json')], /bandwidth/],
    ['hardware sheet with implausible (denormal) rates', () => ['predict', '--model', 'gpt2', '--hardware',
      file('absurd-sheet.json'), '--json'], /plausible minimum/],
    ['missing spec file in a comma list', () => ['predict', '--model', 'gpt2', '--hardware', `t4,${file('nope.json')}`],
      /nope/],
    ['--batch -1', () => [...base, '--model', 'gpt2', '--batch', '-1'], /batch/],
    ['--batch 0', () => [...base, '--model', 'gpt2', '--batch', '0'], /batch/],
    ['--batch 1.5', () => [...base, '--model', 'gpt2', '--batch', '1.5'], /batch/],
    ['--batch abc', () => [...base, '--model', 'gpt2', '--batch', 'abc'], /batch/],
    ['--batch empty', () => [...base, '--model', 'gpt2', '--batch', ''], /batch/],
    ['--batch 0x10', () => [...base, '--model', 'gpt2', '--batch', '0x10'], /batch/],
    ['--batch with a leading blank', () => [...base, '--model', 'gpt2', '--batch', ' 5'], /batch/],
    ['--batch 1e30', () => [...base, '--model', 'gpt2', '--batch', '1e30'], /batch|large|overflow/],
    ['--batch inf', () => [...base, '--model', 'gpt2', '--batch', 'inf'], /batch/],
    ['--batch without a value', () => ['predict', '--model', 'gpt2', '--hardware', 't4', '--batch'], /batch/],
    ['--seq 0', () => [...base, '--model', 'gpt2', '--seq', '0'], /seq/],
    ['--image -3', () => [...base, '--model', 'resnet18', '--image', '-3'], /image/],
    ['--seq 1e12 with llama3.1-405b', () => [...base, '--model', 'llama3.1-405b', '--seq', '1e12'],
      /large|overflow|absurd|exceed|limit/i],
    ['huge batch and seq with llama3.1-405b', () => [...base, '--model', 'llama3.1-405b', '--batch', '1e12',
      '--seq', '1e12'], /large|overflow|absurd|exceed|limit/i],
    ['a layers JSON whose counts overflow 64 bits', () => [...base, '--model', file('huge.json')], /overflow|large|limit/i],
    ['features --seq 1e12 with llama3.1-405b', () => ['features', '--model', 'llama3.1-405b', '--seq', '1e12',
      '--json'], /large|overflow|absurd|exceed|limit/i],
    ['unknown option', () => [...base, '--model', 'gpt2', '--frobnicate', '3'], /frobnicate/],
    ['missing --model for predict', () => [...base], /model/],
    ['missing --model for features', () => ['features', '--json'], /model/],
    ['a layers JSON with a bad layer', () => [...base, '--model', file('bad-layer.json')], /out_features/],
    ['a layers JSON with an unknown layer type', () => [...base, '--model', file('unknown-layer.json')], /warp_drive/],
    ['unknown command', () => ['frobnicate'], /frobnicate/],
    ['stray argument', () => ['predict', 'extra', '--model', 'gpt2'], /extra/],
    ['option given twice', () => ['predict', '--model', 'gpt2', '--model', 'gpt2'], /model/],
  ];
  for (const [name, args, pattern] of cases) test(name, () => assertFails(args(), pattern));
});

test('a device without units for the asked precision is predicted as its fallback, in the JSON and the table', () => {
  const args = ['--model', 'gpt2', '--batch', '2', '--seq', '256', '--precision', 'fp8', '--hardware', 'a100-sxm4-80gb,h100-sxm5-80gb'];
  const doc = predict(...args);
  const r = byId(doc);
  assert.equal(r['a100-sxm4-80gb'].matmul_precision_used, 'bf16');
  assert.deepEqual(
    { requested: r['a100-sxm4-80gb'].precision_fallback.requested, used: r['a100-sxm4-80gb'].precision_fallback.used },
    { requested: 'fp8', used: 'bf16' },
  );
  // A model this small also gets the host-pace warning (its kernels are shorter than a host takes to issue them).
  const fallbackWarnings = (id) => r[id].warnings.filter((w) => /no FP8 units/.test(w));
  assert.equal(fallbackWarnings('a100-sxm4-80gb').length, 1);
  assert.match(fallbackWarnings('a100-sxm4-80gb')[0], /a100-sxm4-80gb: no FP8 units, predicted as bf16/);
  assert.equal(r['h100-sxm5-80gb'].matmul_precision_used, 'fp8');
  assert.equal(r['h100-sxm5-80gb'].precision_fallback, null);
  assert.deepEqual(fallbackWarnings('h100-sxm5-80gb'), []);
  const bf16 = byId(predict('--model', 'gpt2', '--batch', '2', '--seq', '256', '--precision', 'bf16', '--hardware', 'a100-sxm4-80gb'));
  assert.equal(r['a100-sxm4-80gb'].step.total_ms, bf16['a100-sxm4-80gb'].step.total_ms, 'exactly bf16: never faster');
  const table = prenet('predict', ...args);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /a100-sxm4-80gb \(as bf16\)/);
  assert.match(table.stdout, /Warnings:\n(?: {2}[^\n]*\n)* {2}a100-sxm4-80gb: no FP8 units, predicted as bf16/);
  assert.doesNotMatch(table.stdout, /h100-sxm5-80gb \(as/);
});

test('a global batch past published runs and a run under one step are warned about, in the JSON and the table', () => {
  const args = ['--model', 'gpt2', '--seq', '1024', '--batch', '64', '--grad-accum', '1100', '--tokens', '1e6', '--hardware', 'a100-sxm4-80gb,h100-sxm5-80gb'];
  const r = byId(predict(...args));
  // 70,400 sequences of 1,024 tokens: 72.1M tokens a step, past DeepSeek-V3's 63M; 1M tokens is under one step.
  for (const id of ['a100-sxm4-80gb', 'h100-sxm5-80gb']) {
    assert.equal(r[id].warnings.length, 2, r[id].warnings.join('\n'));
    assert.match(r[id].warnings[0], /^a global batch of 70,400 sequences \(72\.1 million tokens\) per step is larger than published/);
    assert.match(r[id].warnings[1], /^the run \(1 million tokens\) is less than one global batch/);
  }
  const table = prenet('predict', ...args);
  assert.equal(table.status, 0, table.stderr);
  // Shared by every accelerator: printed once, without names.
  assert.match(table.stdout, /Warnings:\n {2}a global batch of 70,400 sequences[^\n]*\n {2}the run \(1 million tokens\)/);
  assert.equal(table.stdout.match(/a global batch of 70,400/g).length, 1);
  assert.deepEqual(byId(predict('--model', 'gpt2', '--batch', '8', '--tokens', '1e9', '--hardware', 'h100-sxm5-80gb'))['h100-sxm5-80gb'].warnings, []);
});

test('kernels shorter than a host takes to issue them are warned about, eager frameworks only', () => {
  const hostWarning = (...args) => byId(predict('--model', 'gpt2', '--seq', '1024', '--hardware', 'h100-sxm5-80gb', ...args))['h100-sxm5-80gb']
    .warnings.filter((w) => /kernels average/.test(w));
  // GPT-2 small at one sequence: kernels of a few microseconds each (the step's own numbers say how many).
  const [tiny] = hostWarning('--batch', '1');
  assert.match(tiny ?? '', /^this step's kernels average \d+ µs each: an eager framework's host/);
  const r = byId(predict('--model', 'gpt2', '--seq', '1024', '--batch', '1', '--hardware', 'h100-sxm5-80gb'))['h100-sxm5-80gb'];
  const perKernelUs = (r.step.forward_ms + r.step.backward_ms + r.step.optimizer_ms) / r.step.kernels * 1e3;
  assert.ok(perKernelUs < 50, `${perKernelUs} us`);
  assert.match(tiny, new RegExp(`average ${Math.round(perKernelUs)} µs`));
  // Compiled programs have no Python per op; a micro-batch large enough gives kernels longer than the bound.
  assert.deepEqual(hostWarning('--batch', '1', '--compile'), []);
  assert.deepEqual(hostWarning('--batch', '64'), []);
  // A parallel step is warned about too (its slowest stage's kernels).
  const dp = byId(predict('--model', 'gpt2', '--seq', '1024', '--batch', '1', '--hardware', 'h100-sxm5-80gb', '--gpus', '8',
    '--dp', '8', '--tp', '1', '--pp', '1', '--cp', '1', '--zero', '0'))['h100-sxm5-80gb'];
  assert.equal(dp.warnings.filter((w) => /kernels average/.test(w)).length, 1);
});
