// The calculator's whole state, its URL-hash form (so a link reproduces the page), the API requests it
// stands for, and the equivalent `prenet predict` command line. The training options are not listed here:
// they are the rows of the API's option table ({"command": "options"}: name, flag, type, range, choices,
// default, url key), so a new option reaches the form, the URL, the request and the command line by itself.
// Pure: no DOM at import time, so Node's tests import it.
import { isCluster } from './cluster.js';
import { fromBase64, readJson, toBase64, utf8 } from './documents.js';

/** Where the page's defaults differ from the API's (the API: batch 1, fp32, a budget by model kind). */
export const PAGE_DEFAULTS = Object.freeze({ batch: 8, precision: 'bf16', tokens: 1e9, samples: 1281167, epochs: 1 });
// A preset's defaults over the page's (state.preset): an uploaded language model trains at micro-batch 1, as a
// default and not a typed value, so that a cluster question still leaves the micro-batch to the plan search.
export const PRESET_DEFAULTS = Object.freeze({ llm: Object.freeze({ batch: 1 }) });

// The page's own state, around the table's rows (each training row is one more key, null: the default).
const PAGE_STATE = Object.freeze({
  source: 'zoo', // where the model comes from: zoo | layers | file
  model: 'gpt2', // zoo id
  doc: null, // layers JSON or Hugging Face config.json (source layers or file)
  docName: '', // file name of an uploaded document
  budget: '', // '' (send tokens and samples; the API uses the one that fits the model) | 'tokens' | 'samples'
  hw: null, // null: every catalogue accelerator; else a list of ids
  custom: [], // custom spec sheets (plain numbers)
  prices: {}, // id -> USD per hour, edited on the page
  sort: 'step',
  dir: 1,
  sel: null, // accelerator shown in the breakdown
  log: false, // the charts' scale: logarithmic
  preset: '', // 'llm': the page's defaults for an uploaded language model were applied (named in the assumptions)
  pins: [], // pinned scenarios to compare with: each the hash of a whole state (without pins)
  calibration: null, // the calibration document (`prenet calibrate`'s output) sent with every predict request, or null
  shareCal: false, // the calibration goes into the link (URL `cal=`): only when the user ticks it
});

/**
 * The option table, indexed: rows, byName, the training rows and the cluster rows (each a form of the page),
 * and `fields`, both (the state's keys, the URL's, the requests'), in table order.
 */
export function optionTable(reply) {
  const rows = Array.isArray(reply) ? reply : (reply?.options ?? []);
  const byName = new Map(rows.map((r) => [r.name, r]));
  const training = rows.filter((r) => r.page === 'training');
  const cluster = rows.filter((r) => r.page === 'cluster');
  const fields = rows.filter((r) => r.page === 'training' || r.page === 'cluster');
  // The API's limits on a document (src/core/limits.hpp), which the page reads files and links within.
  const limits = reply?.limits ?? null;
  return { rows, byName, training, cluster, fields, limits };
}

export function fresh(table) {
  const s = structuredClone({ ...PAGE_STATE });
  for (const row of table.fields) s[row.name] = null;
  return s;
}

/**
 * Whether a blank row is the plan search's on this state: a cluster question (the option table's
 * `cluster_question` rules) and a row the API searches there (its `cluster_default_text`: the micro-batch).
 * The page then has no default of its own for it, so a zoo model's single-device batch never pins a cluster's.
 */
export const searched = (state, row, table) => Boolean(row.cluster_default_text && table && isCluster(state, table));

/**
 * The page's default for a row the state leaves blank: none where the plan search chooses it; the option table's
 * `default_with` while its condition holds (a fine-tune's micro-batch is the API's 1, not the page's pre-training
 * 8); else the state's preset's (PRESET_DEFAULTS); else the page's own (PAGE_DEFAULTS).
 */
export function pageDefault(state, row, table) {
  if (searched(state, row, table)) return null;
  const d = row.default_with;
  const holds = d?.when && table && Object.entries(d.when).every(([name, values]) => {
    const other = table.byName.get(name);
    return other && values.includes(effective(state, other, table));
  });
  return holds ? d.value : (PRESET_DEFAULTS[state.preset]?.[row.name] ?? PAGE_DEFAULTS[row.name] ?? null);
}

/**
 * The value a row has for the page when the state leaves it blank: the page's default, else the API's; null
 * where the plan search chooses it (`table` given).
 */
export const effective = (state, row, table = null) =>
  state[row.name] ?? (searched(state, row, table) ? null : (pageDefault(state, row, table) ?? row.default ?? null));

/**
 * Reads one value for a row from text (a form field, a URL): {value} when the row's type, range and
 * choices accept it (value null for blank), {error} (a short reason) otherwise.
 */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

export function parseValue(row, text) {
  const t = String(text ?? '').trim();
  if (row.type === 'flag') {
    if (t === '') return { value: null };
    if (t === '0' || t === 'false') return { value: row.default === true ? false : null };
    if (t === '1' || t === 'true') return { value: true };
    if (row.switch_values?.includes(t)) return { value: t };
    return { error: 'on or off' };
  }
  if (t === '') return { value: null };
  if (row.type === 'choice') return row.choices?.includes(t) ? { value: t } : { error: `one of ${row.choices?.join(', ')}` };
  if (row.type === 'count' || row.type === 'number') {
    // Decimal notation only: Number() would also read 0x10, 0b11 and 0o7.
    const v = DECIMAL.test(t) ? Number(t) : NaN;
    if (!Number.isFinite(v)) return { error: 'a number' };
    if (row.integer && !Number.isInteger(v)) return { error: 'a whole number' };
    if (row.min != null && (row.min_exclusive ? v <= row.min : v < row.min)) return { error: `${row.min_exclusive ? 'more than' : 'at least'} ${row.min}` };
    if (row.max != null && v > row.max) return { error: `at most ${row.max}` };
    return { value: v };
  }
  return { value: t };
}

export function modelArgument(state) {
  return state.source === 'zoo' ? state.model : state.doc;
}

/**
 * Whether a row applies with the state's other values, as the option table says: a row's `applies_with` (the
 * API refuses it elsewhere: the LoRA rows without lora or qlora) and `choice_with` (elsewhere the API fixes its
 * one value: the mixed-precision recipe outside fp16/bf16 full training). The page neither shows nor sends it
 * elsewhere; a condition on an option the table lacks holds.
 */
export function applies(state, row, table) {
  for (const conditions of [row.applies_with, row.choice_with])
    for (const [name, values] of Object.entries(conditions ?? {})) {
      const other = table.byName.get(name);
      if (other && !values.includes(effective(state, other, table))) return false;
    }
  return true;
}

/** Whether a row applies only with some values of other rows (shown and hidden as they change). */
export const conditional = (row) => row.applies_with != null || row.choice_with != null;

// The training rows a command takes, with their values: the state's, or the page's default (sent
// explicitly, so the command line shows it); blank rows without a page default are left to the API (and so
// is the micro-batch of a cluster question: the plan search chooses it).
function trainingOptions(state, table, command) {
  const r = {};
  for (const row of table.fields) {
    if (!row.commands?.includes(command) || !applies(state, row, table)) continue;
    if (state.budget === 'tokens' && (row.name === 'samples' || row.name === 'epochs')) continue;
    if (state.budget === 'samples' && row.name === 'tokens') continue;
    const v = state[row.name] ?? pageDefault(state, row, table);
    if (v != null) r[row.name] = v;
  }
  return r;
}

/**
 * The `predict` request for a state. The run's budget: tokens and samples x epochs both, unless the page
 * chose one (state.budget); the API uses tokens for a language model and samples otherwise, and echoes the
 * one it used in `settings`.
 */
export function predictRequest(state, table) {
  const r = { command: 'predict', model: modelArgument(state), hardware: state.hw ?? 'all' };
  if (state.custom.length) r.custom_hardware = state.custom;
  Object.assign(r, trainingOptions(state, table, 'predict'));
  // The user's calibration (docs/calibration.md): the accelerators it names are corrected, the others unchanged.
  if (state.calibration) r.calibration = state.calibration;
  return r;
}

export function featuresRequest(state, table, model = modelArgument(state)) {
  return { command: 'features', model, ...trainingOptions(state, table, 'features') };
}

// ---- the equivalent command line ------------------------------------------------------------------------

const quote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${String(s).replace(/'/g, `'\\''`)}'`);

/** File name the calibration is saved under for the command line (`--calibration calibration.json`). */
export const CALIBRATION_FILE = 'calibration.json';

/** File name a custom sheet is saved under for the command line. */
export const sheetFile = (sheet) => `${String(sheet.id || 'custom').replace(/[^\w.-]+/g, '-')}.json`;

export function modelFile(state) {
  if (state.source === 'zoo') return null;
  if (state.source === 'file' && state.docName) return state.docName.replace(/[^\w.-]+/g, '-');
  return 'model.json';
}

/**
 * `prenet predict ... --json` for the state: one flag (the row's `flag`) for every key of the request that
 * has one. The model and custom sheets are files the page offers to save; the sheets go in --hardware.
 */
export function commandLine(state, table, used = null) {
  const args = ['prenet', 'predict'];
  // The page sends both budgets and the API uses the one that fits the model; once a reply says which
  // (`used`: {tokens} or {samples, epochs}, results/rows.js's budgetOf), the other would only mislead.
  const unused = new Set(used?.tokens != null ? ['samples', 'epochs'] : used?.samples != null ? ['tokens'] : []);
  for (const [key, value] of Object.entries(predictRequest(state, table))) {
    const flag = table.byName.get(key)?.flag;
    if (!flag || unused.has(key)) continue;
    if (key === 'model') args.push(flag, modelFile(state) ?? state.model);
    else if (key === 'calibration') args.push(flag, CALIBRATION_FILE);
    else if (key === 'hardware') args.push(flag, [...(state.hw ?? ['all']), ...state.custom.map(sheetFile)].join(','));
    else if (value === true) args.push(flag);
    else if (value !== false) args.push(flag, String(value));
  }
  args.push('--json');
  return args.map(quote).join(' ');
}

// ---- URL hash ---------------------------------------------------------------------------------------------

// base64url (RFC 4648 section 5, unpadded): documents.js's base64 in the URL-safe alphabet.
const toBase64Url = (bytes) => toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const fromBase64Url = (text) => fromBase64(text.replace(/-/g, '+').replace(/_/g, '/'));

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

// Limits on what a link may hold (a link is a stranger's input): the hash, a packed value once inflated (a few
// kilobytes of deflate can inflate to gigabytes), the lists in it, and the shape of every id and name.
export const LIMITS = { hash: 2_000_000, unpacked: 8_000_000, ids: 2000, custom: 64, name: 200, pins: 4 };
/** A catalogue or custom accelerator id, a zoo model id, a sort key: letters, digits and . _ - + / : only. */
const ID = /^[\w.+:/-]{1,128}$/;
export const validId = (v) => typeof v === 'string' && ID.test(v);
/** A display name from a link: a string without control characters, at most LIMITS.name long; else null. */
export function cleanName(v) {
  if (typeof v !== 'string') return null;
  const t = v.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  return t && t.length <= LIMITS.name ? t : null;
}

// Inflates at most `limit` bytes; a longer result is an error (the stream is cancelled).
async function inflate(bytes, limit) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`it is longer than ${limit} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  return out;
}

/**
 * A packed value back (pack's inverse), read within `limits` (the options reply's document limits; the
 * inflated size at most LIMITS.unpacked): throws an Error whose message says what is wrong with it.
 */
export async function unpack(text, limits) {
  if (typeof text !== 'string' || (text[0] !== 'z' && text[0] !== 'j')) throw new Error('it is not a packed value');
  if (!limits) throw new Error('the page has not loaded its limits');
  const most = Math.min(LIMITS.unpacked, limits.document_bytes);
  const bytes = fromBase64Url(text.slice(1));
  const raw = text[0] === 'z' ? await inflate(bytes, most) : bytes;
  if (raw.length > most) throw new Error(`it is longer than ${most} bytes`);
  const decoded = utf8(raw);
  if (decoded == null) throw new Error('it is not UTF-8 text');
  const { value, error } = readJson(decoded, { json_depth: limits.json_depth, document_bytes: most }, 'it');
  if (error) throw new Error(error);
  return value;
}

/** The state as a hash: only what differs from the defaults. Training rows under their row's `url` key. */
export async function toHash(state, table) {
  const p = new URLSearchParams();
  if (state.source !== 'zoo') p.set('src', state.source);
  if (state.source === 'zoo' && state.model !== PAGE_STATE.model) p.set('model', state.model);
  if (state.source !== 'zoo' && state.doc) p.set('doc', await pack(state.doc));
  if (state.source === 'file' && state.docName) p.set('name', state.docName);
  for (const row of table.fields) {
    const v = state[row.name];
    if (row.url && v != null) p.set(row.url, row.type === 'flag' && typeof v !== 'string' ? (v ? '1' : '0') : String(v));
  }
  if (state.budget) p.set('budget', state.budget);
  if (state.hw) p.set('hw', state.hw.join(',') || 'none');
  if (state.custom.length) p.set('custom', await pack(state.custom));
  const prices = Object.entries(state.prices);
  if (prices.length) p.set('price', prices.map(([id, v]) => `${id}:${v}`).join(','));
  if (state.sort !== PAGE_STATE.sort || state.dir !== PAGE_STATE.dir) p.set('sort', `${state.dir < 0 ? '-' : ''}${state.sort}`);
  if (state.sel) p.set('sel', state.sel);
  if (state.log) p.set('log', '1');
  if (state.preset) p.set('preset', state.preset);
  if (state.pins?.length) p.set('pins', await pack(state.pins));
  // The user's calibration only on an explicit opt-in ("Include my calibration in the link").
  if (state.calibration && state.shareCal) p.set('cal', await pack(state.calibration));
  const text = p.toString();
  return text ? `#${text}` : '';
}

// A stranger's text quoted in a note: shortened (the note is one line above the results).
const linkText = (v) => (String(v).length > 40 ? `${String(v).slice(0, 39)}…` : String(v));

const unknownAccelerators = (ids, othersLeft) =>
  `The link names ${ids.length === 1 ? 'an accelerator' : 'accelerators'} the page does not know (${ids.map(linkText).join(', ')}): ${othersLeft ? 'left out, the others are shown' : 'every accelerator is shown instead'}.`;

/**
 * What a link names that is not in the catalogues (the `zoo` and `hardware` replies, known only once they have
 * loaded): a zoo model the page does not have becomes the default model, and accelerators it does not have are
 * left out (every accelerator where none is left), each said in `notes`. Changes `state` in place; returns
 * whether it changed anything.
 */
export function keepKnown(state, { zooById, hardwareById }, notes) {
  let changed = false;
  if (state.source === 'zoo' && zooById.size && !zooById.has(state.model)) {
    const fallback = PAGE_STATE.model;
    notes.push(`The link's model ${linkText(state.model)} is not a built-in model: the page shows its default, ${fallback}, instead (“Model” lists the built-in ones).`);
    state.model = fallback;
    changed = true;
  }
  const unknown = hardwareById.size ? (state.hw ?? []).filter((id) => !hardwareById.has(id)) : [];
  if (unknown.length) {
    const known = state.hw.filter((id) => hardwareById.has(id));
    notes.push(unknownAccelerators(unknown, known.length > 0));
    state.hw = known.length ? known : null;
    changed = true;
  }
  return changed;
}

/** Accelerator ids from a comma-separated list (a link's `hw`, the widget's `hardware`): well-formed ones, deduplicated, at most LIMITS.ids. */
export function hardwareIds(text) {
  return [...new Set(String(text ?? '').split(',').filter(validId))].slice(0, LIMITS.ids);
}

// A custom sheet from a link: an object with a well-formed id and a clean name (the API checks the numbers).
function validSheet(c) {
  if (!c || typeof c !== 'object' || Array.isArray(c) || !validId(c.id) || cleanName(c.name) !== c.name) return false;
  return true;
}

/**
 * Parses a hash (with or without '#'); unknown or malformed parts fall back to the defaults. What a link
 * carried but the page could not use (a model or custom accelerator it refuses) is said in `notes`, in
 * the page's words, for the page to show.
 */
export async function fromHash(hash, table, notes = []) {
  const s = fresh(table);
  // A hash past the limit is ignored as a whole: the defaults.
  if (typeof hash !== 'string') return s;
  if (hash.length > LIMITS.hash) {
    notes.push(`The link is ${hash.length} characters long, more than the ${LIMITS.hash} the page reads: the page shows its defaults instead.`);
    return s;
  }
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const src = p.get('src');
  if (src === 'layers' || src === 'file') s.source = src;
  if (validId(p.get('model'))) s.model = p.get('model');
  if (s.source !== 'zoo') {
    let why = p.has('doc') ? null : 'it has none';
    try {
      s.doc = p.has('doc') ? await unpack(p.get('doc'), table.limits) : null;
    } catch (error) {
      s.doc = null;
      why = error.message;
    }
    if (!s.doc || typeof s.doc !== 'object' || Array.isArray(s.doc)) {
      notes.push(`The link's model could not be used (${why ?? 'it is not a JSON object'}): the page shows a built-in model instead.`);
      s.source = 'zoo';
      s.doc = null;
    }
    s.docName = cleanName(p.get('name')) ?? '';
  }
  const refused = [];
  for (const row of table.fields) {
    if (!row.url || !p.has(row.url)) continue;
    const { value, error } = parseValue(row, p.get(row.url));
    if (value !== undefined) s[row.name] = value;
    else refused.push(`${row.label} (${row.url}=${linkText(p.get(row.url))}) must be ${error}`);
  }
  if (refused.length) notes.push(`The link's values the page cannot use are left at their defaults: ${refused.join('; ')}.`);
  const budget = p.get('budget');
  if (budget === 'tokens' || budget === 'samples') s.budget = budget;
  // Links from before `budget`: samples without tokens meant the samples budget.
  else if (!p.has('budget') && s.tokens == null && (s.samples != null || s.epochs != null)) s.budget = 'samples';
  if (p.has('hw')) {
    s.hw = p.get('hw') === 'none' ? [] : hardwareIds(p.get('hw'));
    const malformed = p.get('hw') === 'none' ? [] : p.get('hw').split(',').filter((id) => id && !validId(id));
    if (malformed.length) {
      notes.push(unknownAccelerators(malformed, s.hw.length > 0));
      if (!s.hw.length) s.hw = null;
    }
  }
  if (p.has('custom')) {
    try {
      const custom = await unpack(p.get('custom'), table.limits);
      if (!Array.isArray(custom)) throw new Error('it is not a list');
      s.custom = custom.filter(validSheet).slice(0, LIMITS.custom);
      const left = custom.length - s.custom.length;
      if (left)
        notes.push(`${left} of the link's ${custom.length} custom accelerators ${left === 1 ? 'was' : 'were'} left out (each needs an id of letters, digits and - _ . and a name of at most ${LIMITS.name} characters; at most ${LIMITS.custom} are read).`);
    } catch (error) {
      notes.push(`The link's custom accelerators could not be used (${error.message}).`);
    }
  }
  for (const item of (p.get('price') ?? '').split(',').slice(0, LIMITS.ids)) {
    const at = item.lastIndexOf(':');
    const id = item.slice(0, at);
    const v = Number(item.slice(at + 1));
    if (at > 0 && validId(id) && item.slice(at + 1) !== '' && Number.isFinite(v) && v >= 0) s.prices[id] = v;
  }
  const sort = p.get('sort');
  if (sort && /^-?[a-z_]{1,40}$/.test(sort)) {
    s.dir = sort.startsWith('-') ? -1 : 1;
    s.sort = sort.replace(/^-/, '');
  }
  s.sel = validId(p.get('sel')) ? p.get('sel') : null;
  s.log = p.get('log') === '1';
  if (p.get('preset') === 'llm') s.preset = 'llm';
  if (p.has('pins')) {
    try {
      const pins = await unpack(p.get('pins'), table.limits);
      // A pinned scenario is a hash of its own (no pins inside): kept as text, read by fromHash when shown.
      if (Array.isArray(pins)) s.pins = pins.filter((h) => typeof h === 'string' && h.length <= LIMITS.hash && !/(^|[#&])pins=/.test(h)).slice(0, LIMITS.pins);
    } catch (error) {
      notes.push(`The link's pinned scenarios could not be used (${error.message}).`);
    }
  }
  if (p.has('cal')) {
    try {
      const doc = await unpack(p.get('cal'), table.limits);
      const problem = calibrationProblem(doc);
      if (problem) throw new Error(problem);
      s.calibration = doc;
      s.shareCal = true;
    } catch (error) {
      notes.push(`The link's calibration could not be used (${error.message}): the results are not calibrated by it.`);
    }
  }
  return s;
}

// ---- the calibration document ----------------------------------------------------------------------------

/** What a calibration document (`prenet calibrate --out`) may hold: its devices and their keys, per LIMITS. */
export const CALIBRATION_FORMAT = 'prenet-calibration';

/**
 * Why a value is not a calibration document the page can send (a short reason), or null. Only its shape is
 * checked here (format, version, devices by well-formed id); its numbers are the API's to check.
 */
export function calibrationProblem(doc) {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'it is not a JSON object';
  if (doc.format !== CALIBRATION_FORMAT) return `it is not a calibration (its "format" is not "${CALIBRATION_FORMAT}")`;
  if (doc.version !== 1) return `its version ${JSON.stringify(doc.version ?? null)} is not one this page reads (1)`;
  const devices = doc.devices;
  if (!devices || typeof devices !== 'object' || Array.isArray(devices)) return 'it has no "devices" object';
  const ids = Object.keys(devices);
  if (!ids.length) return 'it names no accelerator';
  if (ids.length > LIMITS.ids) return `it names more than ${LIMITS.ids} accelerators`;
  const bad = ids.find((id) => !validId(id) || !devices[id] || typeof devices[id] !== 'object');
  if (bad != null) return `its accelerator ${linkText(bad)} is not an id with a calibration`;
  return null;
}
