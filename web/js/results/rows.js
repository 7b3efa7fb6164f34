// A `predict` reply as the table's rows: each accelerator's numbers as the API gave them (its run: steps,
// hours, GPU-hours, cost and energy), with one display edit: a price edited on the page rescales the API's
// GPU-hours into a cost (gpu_hours x the edited price). The page works out no step count, time or energy itself.
import { achievedTflops } from '../cluster.js';
import { isNum } from '../format.js';

/** Short label for charts: the marketing name without the vendor. */
export const shortName = (name) =>
  String(name)
    .replace(/^(NVIDIA|AMD|Intel|Google Cloud|Google)\s+/, '')
    .replace(/\s*\(per chip\)/, '')
    .replace(/^(Tesla|GeForce|Instinct)\s+/, '');

/** The run's budget the API used (echoed in `settings`, the other null), or null when the reply has no run. */
export function budgetOf(reply) {
  const s = reply?.settings ?? {};
  if (s.tokens != null) return { tokens: s.tokens };
  if (s.samples != null) return { samples: s.samples, epochs: s.epochs ?? 1 };
  return null;
}

/**
 * Rows for the table. `hardware`: id -> catalogue entry (for the vendor and peaks); `customs`: the custom
 * sheets sent; `prices`: the page's edits (id -> USD/hour).
 */
export function buildRows(reply, { hardware, customs = [], prices = {} }) {
  const settings = reply.settings ?? {};
  const devices = settings.devices ?? 1;
  const customById = new Map(customs.map((c) => [c.id, c]));
  return (reply.results ?? []).filter((r) => !r.error).map((r) => {
    const entry = hardware.get(r.hardware);
    const custom = customById.get(r.hardware);
    const global = settings.price_per_hour;
    const apiPrice = isNum(r.run?.price_per_hour_used) ? r.run.price_per_hour_used : isNum(global) ? global : r.price_per_hour > 0 ? r.price_per_hour : null;
    const edited = Object.hasOwn(prices, r.hardware) ? prices[r.hardware] : null;
    const price = edited ?? apiPrice;
    let run = null;
    if (r.run && typeof r.run === 'object') {
      run = { ...r.run };
      // Display only: the API's GPU-hours at the price typed on the page.
      if (edited != null && isNum(run.gpu_hours)) run.cost_usd = run.gpu_hours * edited;
    }
    return {
      id: r.hardware,
      name: r.name ?? r.hardware,
      vendor: entry?.vendor ?? custom?.vendor ?? '',
      custom: Boolean(custom) && !entry,
      result: r,
      step: r.step?.total_ms,
      low: r.uncertainty?.low_ms,
      high: r.uncertainty?.high_ms,
      samplesPerS: r.throughput?.samples_per_s,
      tokensPerS: r.throughput?.tokens_per_s,
      run,
      hours: run?.hours,
      gpuHours: run?.gpu_hours,
      cost: run?.cost_usd ?? null,
      energy: run?.energy_kwh ?? null,
      price,
      priceEdited: edited != null,
      peak: r.memory?.peak_bytes_per_device,
      capacity: r.memory?.capacity_bytes,
      fits: r.memory?.fits !== false,
      advice: r.memory?.advice,
      // The precision matmuls run at on this device; `fallback` is set where it has no units for the one asked
      // (the API predicted the whole step at `used`).
      precisionUsed: r.matmul_precision_used ?? null,
      fallback: r.precision_fallback && typeof r.precision_fallback === 'object' ? r.precision_fallback : null,
      // What makes this answer misleading, in the API's words (a global batch past published runs, a run shorter
      // than one step, a precision fallback).
      // Corrected by the user's calibration (the request's `calibration`): how many measurements of this device it rests on.
      calibrated: r.calibrated === true,
      // The framework this device ran under; `frameworkChosen`: the API's auto chose it, other than the request's.
      frameworkUsed: typeof r.framework_used === 'string' ? r.framework_used : null,
      frameworkChosen: r.framework_chosen === true,
      calibrationRows: isNum(r.calibration_rows) ? r.calibration_rows : null,
      warnings: Array.isArray(r.warnings) ? r.warnings.filter((w) => typeof w === 'string') : [],
      // A cluster's answer: the plan (layout) and how well it uses the devices.
      devices: r.plan?.gpus ?? devices,
      plan: r.plan ?? null,
      mfu: isNum(r.throughput?.mfu) ? r.throughput.mfu : null,
      tflops: achievedTflops(r.throughput?.mfu, entry?.peak_tflops ?? custom?.peak_tflops, r.matmul_precision_used),
    };
  });
}

/** The accelerators a reply could not answer for (a sheet that cannot form the cluster): {id, name, message}. */
export function refusedRows(reply) {
  return (reply?.results ?? [])
    .filter((r) => r.error)
    .map((r) => {
      const name = r.name ?? r.hardware;
      const message = String(r.error.message ?? r.error);
      return { id: r.hardware, name, message: message.startsWith(`${name}: `) ? message.slice(name.length + 2) : message };
    });
}
