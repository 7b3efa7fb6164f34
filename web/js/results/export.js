// The table as CSV, and any exported JSON, with text a spreadsheet would run as a formula neutralised.
import { planText } from '../cluster.js';

/**
 * CSV of the table (one row per accelerator, raw numbers). A row says what it ran on and as what: its devices
 * and plan (a cluster row's layout; "one device" otherwise), the micro-batch that plan runs (a searched plan
 * chooses its own) with its accumulation and the global batch, MFU where the API gives it, and the
 * fine-tuning mode with its rank and trainable parameters.
 */
export function toCsv(rows, reply) {
  const s = reply.settings ?? {};
  const m = reply.model ?? {};
  const adapters = s.finetune === 'lora' || s.finetune === 'qlora';
  const header = [
    'hardware', 'name', 'model', 'micro_batch', 'grad_accum', 'global_batch', 'devices', 'plan', 'seq', 'image',
    'precision', 'optimizer', 'finetune', 'lora_rank', 'trainable_params', 'step_ms', 'low_ms', 'high_ms',
    'forward_ms', 'backward_ms', 'optimizer_ms', 'communication_ms', 'samples_per_s', 'tokens_per_s', 'mfu', 'steps',
    'hours', 'gpu_hours', 'price_per_hour', 'cost_usd', 'energy_kwh', 'peak_bytes', 'capacity_bytes', 'fits',
    'matmul_precision_used', 'framework_used',
  ];
  const lines = rows.map((r) =>
    [
      r.id, r.name, m.name, r.plan?.micro_batch ?? s.batch, r.plan?.grad_accum ?? s.grad_accum, r.plan?.global_batch ?? s.global_batch ?? s.batch,
      r.devices, r.plan ? planText(r.plan) : 'one device', s.seq, s.image, s.precision, s.optimizer, s.finetune ?? 'none',
      adapters ? s.lora_rank : null, m.trainable_params ?? m.params, r.step, r.low, r.high,
      r.result.step?.forward_ms, r.result.step?.backward_ms, r.result.step?.optimizer_ms, r.result.step?.communication_ms,
      r.samplesPerS, r.tokensPerS, r.mfu, r.run?.steps, r.hours, r.gpuHours, r.price, r.cost, r.energy, r.peak,
      r.capacity, r.fits, r.precisionUsed, r.frameworkUsed,
    ]
      .map(csvCell)
      .join(','),
  );
  return `${header.join(',')}\n${lines.join('\n')}\n`;
}

/**
 * One CSV cell. Text that a spreadsheet would read as a formula (it starts with = + - @, a tab or a carriage
 * return: a model or custom accelerator name is the user's own text, and a shared link is a stranger's) gets
 * a leading apostrophe and quotes (OWASP, "CSV Injection"); numbers stay numbers, negative ones included.
 */
export function csvCell(v) {
  if (v == null) return '';
  if (typeof v === 'number') return String(v);
  let t = String(v);
  const formula = FORMULA.test(t);
  if (formula) t = `'${t}`;
  return formula || /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/** Text a spreadsheet would run as a formula: it starts with = + - @, a tab or a carriage return. */
export const FORMULA = /^[=+\-@\t\r]/;

/**
 * A copy of a JSON value for export with every such string given a leading apostrophe (OWASP, "CSV
 * Injection": a JSON export is opened in spreadsheets too); numbers, keys and other text stay as they are.
 */
export function neutralised(value) {
  if (typeof value === 'string') return FORMULA.test(value) ? `'${value}` : value;
  if (Array.isArray(value)) return value.map(neutralised);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, neutralised(v)]));
  return value;
}
