// The calculator's whole state, its URL-hash form (so a link reproduces the page), the API request it
// stands for, and the equivalent `prenet predict` command line.

export const DEFAULTS = Object.freeze({
  source: 'zoo', // where the model comes from: zoo | layers | file
  model: 'gpt2', // zoo id
  doc: null, // layers JSON or Hugging Face config.json (source layers or file)
  docName: '', // file name of an uploaded document
  batch: 8,
  seq: null, // null: the model's own
  image: null,
  precision: 'bf16',
  optimizer: 'adamw',
  grad_accum: null,
  checkpointing: false,
  optimizer_impl: '',
  mixed: '', // '': the API's default (autocast for fp16/bf16)
  tokens: null, // training budget; null: 1e9 tokens for language models, one ImageNet epoch otherwise
  samples: null,
  epochs: null,
  input_samples_per_s: null,
  price_per_hour: null, // one price for every accelerator (the API's price_per_hour)
  hw: null, // null: every catalogue accelerator; else a list of ids
  custom: [], // custom spec sheets (plain numbers)
  prices: {}, // id -> USD per hour, edited on the page
  sort: 'step',
  dir: 1,
  sel: null, // accelerator shown in the breakdown
});

export const DEFAULT_TOKENS = 1e9;
export const DEFAULT_SAMPLES = 1281167; // ImageNet-1k training set
export const EXTRA_OPTIONS = ['grad_accum', 'checkpointing', 'optimizer_impl', 'mixed', 'input_samples_per_s', 'price_per_hour'];

// The mixed-precision recipe applies to fp16 and bf16 only (fp8 is always a bf16 model).
const mixedFor = (state) => (state.mixed && (state.precision === 'fp16' || state.precision === 'bf16') ? state.mixed : null);

export const fresh = () => structuredClone({ ...DEFAULTS, custom: [], prices: {} });

/**
 * The training budget the request carries: tokens for language models (unless samples were chosen),
 * samples x epochs otherwise (a token count means nothing to a model without tokens).
 */
export function budget(state, language) {
  if (language && (state.tokens != null || state.samples == null)) return { tokens: state.tokens ?? DEFAULT_TOKENS };
  return { samples: state.samples ?? DEFAULT_SAMPLES, epochs: state.epochs ?? 1 };
}

export function modelArgument(state) {
  return state.source === 'zoo' ? state.model : state.doc;
}

/** The `predict` request for a state. `language`: whether the model counts tokens (decides the budget). */
export function predictRequest(state, language) {
  const r = { command: 'predict', model: modelArgument(state), batch: state.batch };
  if (state.seq != null) r.seq = state.seq;
  if (state.image != null) r.image = state.image;
  r.precision = state.precision;
  r.optimizer = state.optimizer;
  r.hardware = state.hw ?? 'all';
  if (state.custom.length) r.custom_hardware = state.custom;
  if (state.grad_accum != null) r.grad_accum = state.grad_accum;
  if (state.checkpointing) r.checkpointing = true;
  if (state.optimizer_impl) r.optimizer_impl = state.optimizer_impl;
  if (mixedFor(state)) r.mixed = mixedFor(state);
  if (state.input_samples_per_s != null) r.input_samples_per_s = state.input_samples_per_s;
  if (state.price_per_hour != null) r.price_per_hour = state.price_per_hour;
  Object.assign(r, budget(state, language));
  return r;
}

export function featuresRequest(state, model = modelArgument(state)) {
  const r = { command: 'features', model, batch: state.batch, precision: state.precision };
  if (mixedFor(state)) r.mixed = mixedFor(state);
  if (state.seq != null) r.seq = state.seq;
  if (state.image != null) r.image = state.image;
  return r;
}

// ---- the equivalent command line ------------------------------------------------------------------------

const quote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${String(s).replace(/'/g, `'\\''`)}'`);

/** File name a custom sheet is saved under for the command line. */
export const sheetFile = (sheet) => `${String(sheet.id || 'custom').replace(/[^\w.-]+/g, '-')}.json`;

export function modelFile(state) {
  if (state.source === 'zoo') return null;
  if (state.source === 'file' && state.docName) return state.docName.replace(/[^\w.-]+/g, '-');
  return 'model.json';
}

/**
 * `prenet predict ...` for the state. `supported`: the request fields this build's API echoes in
 * `settings` (the training-run options get flags only when the API knows them).
 */
export function commandLine(state, language, supported = new Set()) {
  const args = ['prenet', 'predict', '--model', modelFile(state) ?? state.model];
  const ids = state.hw ?? ['all'];
  const hardware = [...ids, ...state.custom.map(sheetFile)];
  if (hardware.length) args.push('--hardware', hardware.join(','));
  args.push('--batch', String(state.batch));
  if (state.seq != null) args.push('--seq', String(state.seq));
  if (state.image != null) args.push('--image', String(state.image));
  args.push('--precision', state.precision, '--optimizer', state.optimizer);
  const extra = { ...predictRequest(state, language) };
  for (const key of ['grad_accum', 'checkpointing', 'optimizer_impl', 'mixed', 'tokens', 'samples', 'epochs', 'price_per_hour', 'input_samples_per_s']) {
    if (!(key in extra) || !supported.has(key)) continue;
    const flag = `--${key.replace(/_/g, '-')}`;
    if (extra[key] === true) args.push(flag);
    else args.push(flag, String(extra[key]));
  }
  args.push('--json');
  return args.map(quote).join(' ');
}

// ---- URL hash ---------------------------------------------------------------------------------------------

function toBase64Url(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

const packed = new WeakMap();

/** A JSON value as a URL-safe string: "z" + deflated base64url where the browser can compress, else "j" + base64url. */
export async function pack(value) {
  if (packed.has(value)) return packed.get(value);
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let text;
  if (typeof CompressionStream === 'function') text = `z${toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')))}`;
  else text = `j${toBase64Url(bytes)}`;
  if (value && typeof value === 'object') packed.set(value, text);
  return text;
}

export async function unpack(text) {
  const bytes = fromBase64Url(text.slice(1));
  const raw = text[0] === 'z' ? await pipe(bytes, new DecompressionStream('deflate-raw')) : bytes;
  return JSON.parse(new TextDecoder().decode(raw));
}

const numberKeys = {
  batch: 'batch',
  seq: 'seq',
  image: 'image',
  accum: 'grad_accum',
  tokens: 'tokens',
  samples: 'samples',
  epochs: 'epochs',
  input_rate: 'input_samples_per_s',
  pph: 'price_per_hour',
};

/** The state as a hash: only what differs from the defaults. */
export async function toHash(state) {
  const p = new URLSearchParams();
  if (state.source !== 'zoo') p.set('src', state.source);
  if (state.source === 'zoo' && state.model !== DEFAULTS.model) p.set('model', state.model);
  if (state.source !== 'zoo' && state.doc) p.set('doc', await pack(state.doc));
  if (state.source === 'file' && state.docName) p.set('name', state.docName);
  for (const [key, field] of Object.entries(numberKeys))
    if (state[field] !== DEFAULTS[field] && state[field] != null) p.set(key, String(state[field]));
  if (state.precision !== DEFAULTS.precision) p.set('precision', state.precision);
  if (state.optimizer !== DEFAULTS.optimizer) p.set('optimizer', state.optimizer);
  if (state.checkpointing) p.set('ckpt', '1');
  if (state.optimizer_impl) p.set('opt_impl', state.optimizer_impl);
  if (state.mixed) p.set('mixed', state.mixed);
  if (state.hw) p.set('hw', state.hw.join(',') || 'none');
  if (state.custom.length) p.set('custom', await pack(state.custom));
  const prices = Object.entries(state.prices);
  if (prices.length) p.set('price', prices.map(([id, v]) => `${id}:${v}`).join(','));
  if (state.sort !== DEFAULTS.sort || state.dir !== DEFAULTS.dir) p.set('sort', `${state.dir < 0 ? '-' : ''}${state.sort}`);
  if (state.sel) p.set('sel', state.sel);
  const text = p.toString();
  return text ? `#${text}` : '';
}

/** Parses a hash (with or without '#'); unknown or malformed parts fall back to the defaults. */
export async function fromHash(hash) {
  const s = fresh();
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const src = p.get('src');
  if (src === 'layers' || src === 'file') s.source = src;
  if (p.has('model')) s.model = p.get('model');
  if (s.source !== 'zoo') {
    try {
      s.doc = p.has('doc') ? await unpack(p.get('doc')) : null;
    } catch {
      s.doc = null;
    }
    if (!s.doc) s.source = 'zoo';
    s.docName = p.get('name') ?? '';
  }
  for (const [key, field] of Object.entries(numberKeys)) {
    const v = Number(p.get(key));
    if (p.has(key) && Number.isFinite(v) && (v > 0 || (field === 'price_per_hour' && v === 0))) s[field] = v;
  }
  for (const key of ['precision', 'optimizer']) if (p.has(key)) s[key] = p.get(key);
  s.checkpointing = p.get('ckpt') === '1';
  s.optimizer_impl = p.get('opt_impl') ?? '';
  s.mixed = ['autocast', 'half'].includes(p.get('mixed')) ? p.get('mixed') : '';
  if (p.has('hw')) s.hw = p.get('hw') === 'none' ? [] : p.get('hw').split(',').filter(Boolean);
  if (p.has('custom')) {
    try {
      const custom = await unpack(p.get('custom'));
      if (Array.isArray(custom)) s.custom = custom.filter((c) => c && typeof c === 'object');
    } catch {
      /* ignore a damaged custom list */
    }
  }
  for (const item of (p.get('price') ?? '').split(',')) {
    const at = item.lastIndexOf(':');
    const v = Number(item.slice(at + 1));
    if (at > 0 && Number.isFinite(v) && v >= 0) s.prices[item.slice(0, at)] = v;
  }
  const sort = p.get('sort');
  if (sort) {
    s.dir = sort.startsWith('-') ? -1 : 1;
    s.sort = sort.replace(/^-/, '');
  }
  s.sel = p.get('sel');
  return s;
}
