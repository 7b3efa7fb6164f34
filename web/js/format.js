// Number formatting for the page: SI prefixes for counts and FLOPs, memory in GiB (2^30 bytes: what frameworks
// report and what a vendor's "80GB" part holds; src/core/quantity_text.hpp says the same for the CLI),
// durations from milliseconds to years.
// One formatter per precision, made once: constructing an Intl.NumberFormat costs far more than formatting
// with one, and a table of every accelerator formats thousands of numbers.
const formatters = new Map();
const nf = (digits) => {
  let f = formatters.get(digits);
  if (!f) formatters.set(digits, (f = new Intl.NumberFormat('en-US', { maximumSignificantDigits: digits })));
  return f;
};
const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const isNum = (x) => typeof x === 'number' && Number.isFinite(x);

export function si(x, unit = '', digits = 3) {
  if (!isNum(x)) return '—';
  const prefixes = [
    [1e18, 'E'],
    [1e15, 'P'],
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [scale, p] of prefixes)
    if (Math.abs(x) >= scale) return `${nf(digits).format(x / scale)} ${p}${unit}`;
  return `${nf(digits).format(x)}${unit ? ` ${unit}` : ''}`;
}

/** Parameter counts the way papers write them: 124M, 7.0B, 1.8T. */
export function count(x) {
  if (!isNum(x)) return '—';
  const scales = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [scale, p] of scales) if (Math.abs(x) >= scale) return `${nf(3).format(x / scale)}${p}`;
  return int.format(x);
}

export const integer = (x) => (isNum(x) ? int.format(x) : '—');
/**
 * The API's words for the page: they name the CLI's flags (--grad-accum) and the repository's files
 * ((docs/training-model.md), (models/overhead.json)); the page names its fields (“Gradient accumulation”,
 * `labels`: flag -> field label, from the option table) and leaves the paths out.
 */
export function pageWords(text, labels = new Map()) {
  return String(text ?? '')
    .replace(/\s*\((?:docs|models|data)\/[\w./-]+\)/g, '')
    .replace(/--[a-z][\w-]*/g, (flag) => (labels.has(flag) ? `“${labels.get(flag)}”` : flag));
}

/** A count with its noun, singular for one: "1 sequence", "8 devices" (`many`: the plural, default noun + s). */
export const plural = (x, noun, many = `${noun}s`) => `${integer(x)} ${x === 1 ? noun : many}`;
export const num = (x, digits = 3) => (isNum(x) ? nf(digits).format(x) : '—');
export const flops = (x) => si(x, 'FLOP');
export const BYTES_PER_GIB = 2 ** 30;
export const gib = (bytes) => (isNum(bytes) ? `${nf(3).format(bytes / BYTES_PER_GIB)} GiB` : '—');

export function ms(x) {
  if (!isNum(x)) return '—';
  if (x < 1) return `${nf(2).format(x)} ms`;
  if (x < 1000) return `${nf(4).format(x)} ms`;
  return `${nf(3).format(x / 1000)} s`;
}

export function hours(h) {
  if (!isNum(h)) return '—';
  if (h < 1 / 60) return `${nf(2).format(h * 3600)} s`;
  if (h < 1) return `${nf(2).format(h * 60)} min`;
  if (h < 48) return `${nf(3).format(h)} h`;
  if (h < 24 * 365) return `${nf(3).format(h / 24)} days`;
  return `${nf(3).format(h / 24 / 365)} years`;
}

export function usd(x) {
  if (!isNum(x)) return '—';
  if (x >= 100) return `$${int.format(x)}`;
  if (x >= 0.01 || x === 0) return `$${x.toFixed(2)}`;
  return `$${nf(2).format(x)}`;
}

export function kwh(x) {
  if (!isNum(x)) return '—';
  if (x >= 1000) return `${nf(3).format(x / 1000)} MWh`;
  return `${nf(3).format(x)} kWh`;
}

export function rate(x, unit) {
  return isNum(x) ? `${si(x, '', 3)} ${unit}`.replace('  ', ' ') : '—';
}

export const shape = (s) => (Array.isArray(s) ? `[${s.join(', ')}]` : '—');

/** Escapes text for HTML templates. */
export function esc(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}
