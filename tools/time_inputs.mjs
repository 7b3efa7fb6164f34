#!/usr/bin/env node
// The time bound of docs/limits.md ("Time per input"): every input within the documented size limits is answered
// within 20 s on a 2-core machine. This tool measures it with the native CLI, the way a user hands each input in:
// every case of the bad-input corpus (tests/fixtures/bad/corpus.mjs: its request turned into `prenet` arguments,
// documents written to files) and generated worst cases just inside the limits (below). It prints the slowest
// inputs and exits 1 if any took more than the budget.
//
//   node tools/time_inputs.mjs [--prenet build/prenet] [--budget 20] [--kill-after 120] [--top 15] [--only TEXT]
//
// The time is CPU time (user + system, from /usr/bin/time), which a loaded machine does not inflate; the wall
// time is shown beside it. A run still going after --kill-after seconds of wall time is killed and counted over
// the budget. Speed targets are reports, not timed tests: this is not part of `npm test`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cases as corpusCases } from '../tests/fixtures/bad/corpus.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const prenet = resolve(root, opt('prenet', 'build/prenet'));
const budget = Number(opt('budget', '20'));
const killAfter = Number(opt('kill-after', '120'));
const top = Number(opt('top', '15'));
const only = opt('only', '');
const scratch = mkdtempSync(join(tmpdir(), 'prenet-time-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

// ---- Requests as `prenet` arguments ------------------------------------------------------------------------

// The option table as the CLI serves it: request key -> {flag, type}.
const table = JSON.parse(spawnSync(prenet, ['options', '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 }).stdout);
const rows = new Map(table.options.map((r) => [r.name, r]));

let files = 0;
function file(text, ext) {
  const path = join(scratch, `in-${files++}${ext}`);
  writeFileSync(path, text);
  return path;
}

// A document (model, sheet, cluster) as the file a user would give. A model {"onnx_base64": ...} is the ONNX file
// it encodes (the CLI reads a .onnx file into that same document).
function documentFile(value) {
  if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 &&
      typeof value.onnx_base64 === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(value.onnx_base64))
    return file(Buffer.from(value.onnx_base64, 'base64'), '.onnx');
  return file(JSON.stringify(value), '.json');
}

// `prenet` arguments for a request object, or null when it has no command-line form (a key the CLI does not
// have, a value of a type no flag can carry: those cases are refused while the request is read, in microseconds).
function argumentsFor(request) {
  if (!request || typeof request !== 'object' || Array.isArray(request) || typeof request.command !== 'string')
    return null;
  const argv = [request.command];
  for (const [key, value] of Object.entries(request)) {
    if (key === 'command' || value === null) continue;
    const row = rows.get(key);
    if (!row || !row.flag) return null;
    const flag = row.flag.startsWith('--') ? row.flag : `--${row.flag}`;
    switch (row.type) {
      case 'model':
        if (typeof value === 'string') argv.push(flag, value);
        else if (typeof value === 'object' && !Array.isArray(value)) argv.push(flag, documentFile(value));
        else return null;
        break;
      case 'hardware': {
        const items = Array.isArray(value) ? value : [value];
        if (!items.length || items.some((h) => typeof h !== 'string' && (typeof h !== 'object' || h === null))) return null;
        argv.push(flag, items.map((h) => (typeof h === 'string' ? h : documentFile(h))).join(','));
        break;
      }
      case 'document':
        if (typeof value !== 'object' || Array.isArray(value)) return null;
        argv.push(flag, documentFile(value));
        break;
      case 'count':
      case 'number':
        if (typeof value !== 'number') return null;
        argv.push(flag, String(value));
        break;
      case 'flag':
        if (value === true) argv.push(flag);
        else if (typeof value === 'string') argv.push(flag, value);
        else if (value !== false) return null;
        break;
      default:
        if (typeof value !== 'string') return null;
        argv.push(flag, value);
    }
  }
  // An argument cannot hold a NUL byte (the C strings of argv): no command line carries it.
  return argv.some((a) => a.includes('\0')) ? null : argv;
}

// A corpus case's arguments, as its route hands it in (corpus.mjs): a model file, a sheet file, or a request.
function corpusArguments(c) {
  if (c.bytes) return null;  // invalid UTF-8 request text: no command line carries it
  const input = c.input();
  if (c.route === 'model') return ['features', '--model', file(input, '.json')];
  if (c.route === 'sheet') return ['predict', '--model', 'gpt2', '--hardware', file(input, '.json')];
  let request;
  try {
    request = JSON.parse(input);
  } catch {
    return null;  // malformed request text: refused by the parser, no command-line form
  }
  return argumentsFor(request);
}

// ---- Worst cases near the limits -------------------------------------------------------------------------------

// Protobuf, as much as an ONNX file needs (the wire format of tests/fixtures/bad/make_cases.py's helpers).
function varint(v) {
  const out = [];
  let x = BigInt(v);
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return Buffer.from(out);
}
const ld = (num, payload) => Buffer.concat([varint((num << 3) | 2), varint(payload.length), payload]);
const vi = (num, v) => Buffer.concat([varint(num << 3), varint(v)]);
const str = (s) => Buffer.from(s, 'utf8');
function onnxModel(nodes, input) {
  const dims = Buffer.concat(input.dims.map((d) => ld(1, vi(1, d))));
  const valueInfo = Buffer.concat([ld(1, str(input.name)), ld(2, ld(1, Buffer.concat([vi(1, 1), ld(2, dims)])))]);
  const graph = Buffer.concat([...nodes.map((n) => ld(1, n)), ld(11, valueInfo)]);
  return Buffer.concat([vi(1, 8), ld(7, graph), ld(8, Buffer.concat([ld(1, str('')), vi(2, 17)]))]);
}
const onnxNode = (op, ins, outs, domain) =>
  Buffer.concat([...ins.map((i) => ld(1, str(i))), ...outs.map((o) => ld(2, str(o))), ld(4, str(op)),
                 ...(domain ? [ld(7, str(domain))] : [])]);

// A chain of `n` nodes, each a distinct op type no catalogue knows (issue #27: 40k types took over 90 s).
function unknownOpsOnnx(n, domain = 'com.example') {
  const nodes = [];
  for (let i = 0; i < n; i++) nodes.push(onnxNode(`MadeUpOp${i}`, [i ? `t${i - 1}` : 'x'], [`t${i}`], domain));
  return onnxModel(nodes, { name: 'x', dims: [1, 64] });
}

const hf = (name) => JSON.parse(readFileSync(join(root, 'tests/fixtures/hf', name), 'utf8'));
const MAX_LAYERS = 2 ** 31 - 1;
const relu = { type: 'activation', function: 'relu' };

// [name, () => arguments]: each just inside a documented limit (docs/limits.md).
const generated = [
  ['onnx 40,000 distinct unknown op types', () => ['features', '--model', file(unknownOpsOnnx(40000), '.onnx')]],
  ['onnx 20,000 distinct unknown op types', () => ['features', '--model', file(unknownOpsOnnx(20000), '.onnx')]],
  ['onnx 40,000 distinct unknown op types, default domain', () => ['features', '--model', file(unknownOpsOnnx(40000, ''), '.onnx')]],
  ['onnx 40,000 distinct unknown op types: predict', () =>
    ['predict', '--hardware', 'h100-sxm5-80gb', '--model', file(unknownOpsOnnx(40000), '.onnx')]],
  ['hf deepseek-v3 num_hidden_layers 2^31-1 (moe_layer_freq, first_k_dense_replace)', () =>
    ['features', '--model', file(JSON.stringify({ ...hf('deepseek-v3.json'), num_hidden_layers: MAX_LAYERS }), '.json')]],
  ['hf gemma-3 num_hidden_layers 2^31-1 (sliding-window pattern)', () =>
    ['features', '--model', file(JSON.stringify({ ...hf('gemma-3-1b-pt.json'), num_hidden_layers: MAX_LAYERS }), '.json')]],
  ['hf qwen1.5-moe num_hidden_layers 2^31-1 (mlp_only_layers, decoder_sparse_step)', () =>
    ['features', '--model', file(JSON.stringify({ ...hf('qwen1.5-moe-a2.7b.json'), num_hidden_layers: MAX_LAYERS, mlp_only_layers: [0, 1, 2, 3] }), '.json')]],
  ['hf qwen3-moe mlp_only_layers of 100,000 entries', () =>
    ['features', '--model', file(JSON.stringify({ ...hf('qwen3-30b-a3b.json'), mlp_only_layers: Array.from({ length: 100000 }, (_, i) => i) }), '.json')]],
  ['layers JSON 100,000 linear layers: features', () =>
    ['features', '--model', file(JSON.stringify({ input: { shape: [64] }, layers: Array(100000).fill({ type: 'linear', out_features: 64 }) }), '.json')]],
  ['layers JSON 100,000 linear layers: predict', () =>
    ['predict', '--hardware', 'h100-sxm5-80gb', '--model', file(JSON.stringify({ input: { shape: [64] }, layers: Array(100000).fill({ type: 'linear', out_features: 64 }) }), '.json')]],
  ['layers JSON 100,000 layers in residual blocks', () =>
    ['features', '--model', file(JSON.stringify({ input: { shape: [64] }, layers: Array(50000).fill({ type: 'residual', layers: [relu] }) }), '.json')]],
  ['layers JSON just under 64 MiB (a long name)', () => {
    const doc = { input: { shape: [16] }, layers: [relu], name: '' };
    doc.name = 'a'.repeat((64 << 20) - JSON.stringify(doc).length - 16);
    return ['features', '--model', file(JSON.stringify(doc), '.json')];
  }],
  ['layers JSON just under 64 MiB (2.4M numbers in an unused key)', () => {
    const doc = { input: { shape: [16] }, layers: [relu], unused: [] };
    const body = JSON.stringify(doc).length;
    const count = Math.floor(((64 << 20) - body - 64) / 28);
    doc.unused = Array.from({ length: count }, (_, i) => 1234567.891011121314 + i);
    return ['features', '--model', file(JSON.stringify(doc), '.json')];
  }],
  ['plan search: DeepSeek-V3 on 2,048 H800s (22,176 layouts)', () =>
    ['predict', '--model', 'deepseek-v3', '--hardware', 'h800-sxm5', '--gpus', '2048']],
  ['plan search: llama3-70b on 720,720 B200s', () =>
    ['predict', '--model', 'llama3-70b', '--hardware', 'b200', '--gpus', '720720']],
  ['plan search: DeepSeek-V3 on 4,096 H800s', () =>
    ['predict', '--model', 'deepseek-v3', '--hardware', 'h800-sxm5', '--gpus', '4096']],
  ['plan search: mixtral-8x7b at seq 32768 on 14,414,400 devices (past the budget)', () =>
    ['predict', '--model', 'mixtral-8x7b', '--seq', '32768', '--hardware', 'a100-sxm4-80gb', '--gpus', '14414400', '--gpus-per-node', '8']],
  ['every accelerator: llama3-70b on 64 devices of each', () =>
    ['predict', '--model', 'llama3-70b', '--hardware', 'all', '--gpus', '64']],
];

// ---- Run ---------------------------------------------------------------------------------------------------------

// One run under /usr/bin/time; `timeout` kills a run past --kill-after (the CPU time up to then is still counted).
function timed(argv) {
  const times = join(scratch, 'time.txt');
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', '-o', times, 'timeout', '-s', 'KILL', String(killAfter), prenet, ...argv],
                      { encoding: 'utf8', timeout: (killAfter + 30) * 1000, killSignal: 'SIGKILL', maxBuffer: 1 << 28, cwd: scratch });
  const last = readFileSync(times, 'utf8').trim().split('\n').pop();
  const [wall, user, sys, rss] = last.split(' ').map(Number);
  const killed = r.status === 137 || r.signal === 'SIGKILL';
  const message = killed ? `killed after ${killAfter} s` : (r.stderr || '').trim().split('\n').pop() || '';
  return { wall, cpu: killed ? Math.max(user + sys, budget + 1e-9) : user + sys, rss: rss / 1024, status: killed ? 'killed' : r.status, message };
}

const inputs = [];
let noForm = 0;
for (const c of corpusCases()) {
  const argv = corpusArguments(c);
  if (!argv) {
    noForm++;
    continue;
  }
  inputs.push({ name: `corpus: ${c.name}`, argv: () => argv });
}
for (const [name, make] of generated) inputs.push({ name: `generated: ${name}`, argv: make });

const results = [];
for (const input of inputs) {
  if (only && !input.name.includes(only)) continue;
  const t = timed(input.argv());
  results.push({ ...input, ...t });
  process.stderr.write(`${t.cpu.toFixed(2).padStart(7)} s CPU ${t.wall.toFixed(2).padStart(7)} s wall  ${input.name}\n`);
}

results.sort((a, b) => b.cpu - a.cpu);
const over = results.filter((r) => !(r.cpu <= budget));
console.log(`\n${results.length} inputs through ${prenet} (${noForm} corpus cases have no command-line form: ` +
            'request text refused by the parser, or a value of a type no flag carries)');
console.log(`slowest ${Math.min(top, results.length)} (CPU s, wall s, peak RSS MB, exit status, last line of the message):`);
for (const r of results.slice(0, top))
  console.log(`${r.cpu.toFixed(2).padStart(8)} ${r.wall.toFixed(2).padStart(8)} ${String(Math.round(r.rss)).padStart(6)}  ${String(r.status).padEnd(6)} ${r.name}` +
              (r.message ? `\n${' '.repeat(33)}${r.message.slice(0, 160)}` : ''));
if (over.length) {
  console.log(`\nFAILED: ${over.length} input(s) over the ${budget} s budget: ${over.map((r) => r.name).join('; ')}`);
  process.exit(1);
}
console.log(`\nevery input within the ${budget} s budget`);
