// The page's calibration (issue #28): the user's measured steps, sent to the API's `calibrate` command, give a
// calibration document (the same JSON `prenet calibrate --out` writes, docs/calibration.md) that every predict
// request then carries as `calibration`, so the accelerators it names are corrected at once. Kept in this
// browser (localStorage, per origin), removable, exportable and importable; it goes into a link only when the
// user ticks "Include my calibration in the link" (state.js, `cal=`).
// Pure: storage is passed in, no DOM at import time, so Node's tests import it.
import * as F from './format.js';
import { shortName } from './results/rows.js';
import { calibrationProblem, validId } from './state.js';

const { esc } = F;

export const CAL_KEY = 'prenet.calibration';
// The before/after rows of the calibrate reply that made the saved calibration (shown again after a reload).
export const CAL_ROWS_KEY = 'prenet.calibration-rows';

/** What a measurement times (the `measures` column), in the page's words. */
export const MEASURES = Object.freeze([
  ['step', 'a whole training step'],
  ['forward_backward', 'forward + backward (no optimizer)'],
  ['forward', 'the forward pass'],
]);

/** The columns of the typed table, in order: each a key of a measurement row. */
export const COLUMNS = Object.freeze(['model', 'hardware', 'batch', 'seq', 'precision', 'measured_ms', 'measures']);

/** The calibration saved in `storage` ({doc, rows}), or null when there is none or it is not one. */
export function loadSaved(storage) {
  try {
    const text = storage?.getItem(CAL_KEY);
    if (!text) return null;
    const doc = JSON.parse(text);
    if (calibrationProblem(doc)) return null;
    let rows = null;
    try {
      rows = JSON.parse(storage.getItem(CAL_ROWS_KEY) ?? 'null');
    } catch {
      rows = null;
    }
    return { doc, rows: Array.isArray(rows) ? rows : null };
  } catch {
    return null;
  }
}

/** Saves a calibration (and the rows it came from, if known); false when the storage refused it. */
export function save(storage, doc, rows = null) {
  try {
    storage.setItem(CAL_KEY, JSON.stringify(doc));
    if (rows) storage.setItem(CAL_ROWS_KEY, JSON.stringify(rows));
    else storage.removeItem(CAL_ROWS_KEY);
    return true;
  } catch {
    return false;
  }
}

export function forget(storage) {
  try {
    storage.removeItem(CAL_KEY);
    storage.removeItem(CAL_ROWS_KEY);
  } catch {
    /* storage disabled: nothing was kept */
  }
}

/** Whether `doc` is the calibration saved in `storage` (the same JSON). */
export const isSaved = (storage, doc) => {
  try {
    return Boolean(doc) && storage?.getItem(CAL_KEY) === JSON.stringify(doc);
  } catch {
    return false;
  }
};

/** The export: the document as `prenet calibrate --out` writes it (the CLI reads it back with --calibration). */
export const exportText = (doc) => `${JSON.stringify(doc, null, 2)}\n`;

// ---- measurements ------------------------------------------------------------------------------------------

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const numberOr = (text) => (DECIMAL.test(text) ? Number(text) : text);

/**
 * The typed table's rows (each {model, hardware, batch, seq, precision, measured_ms, measures} as text) as the
 * `calibrate` command's row objects: a blank model is the page's own (`pageModel`: a zoo id or a model
 * document), blank cells are left out (the API's defaults), numbers are numbers. A row with nothing typed is
 * skipped. Returns {rows} or {error: {row, field, message}} (row: 1-based, as the API counts).
 */
export function measurementRows(typed, pageModel) {
  const rows = [];
  for (const [i, t] of typed.entries()) {
    const cell = (k) => String(t[k] ?? '').trim();
    if (!cell('measured_ms') && !cell('batch') && !cell('seq') && !cell('model')) continue;
    const n = i + 1;
    if (!cell('measured_ms')) return { error: { row: n, field: 'measured_ms', message: `Row ${n}: give the measured time in milliseconds.` } };
    if (!cell('hardware')) return { error: { row: n, field: 'hardware', message: `Row ${n}: choose the accelerator it was measured on.` } };
    const row = { model: cell('model') || pageModel };
    for (const k of COLUMNS.slice(1)) {
      const v = cell(k);
      if (v !== '') row[k] = k === 'hardware' || k === 'precision' || k === 'measures' ? v : numberOr(v);
    }
    rows.push(row);
  }
  if (!rows.length) return { error: { row: 1, field: 'measured_ms', message: 'Type at least one measurement: the accelerator, the settings and the measured time.' } };
  return { rows };
}

const csvCell = (v) => {
  const s = String(v ?? '');
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * Measurement rows as the CSV `prenet calibrate --measurements` reads (the columns any row has, in table
 * order); a model document is written as `modelFile`, the file the page offers to save it as.
 */
export function measurementsCsv(rows, modelFile = 'model.json') {
  const keys = COLUMNS.filter((k) => rows.some((r) => r[k] != null));
  const lines = [keys.join(',')];
  for (const r of rows) lines.push(keys.map((k) => csvCell(k === 'model' && typeof r.model === 'object' ? modelFile : r[k])).join(','));
  return `${lines.join('\n')}\n`;
}

/** What a dropped or chosen file holds: {calibration} (a calibration document), {measurements} (CSV text or row objects), {trace} (a profiler trace, measured with the page's settings), or {error}. */
export function readMeasurementsFile(name, text, readJson) {
  const trimmed = text.trimStart();
  if (!/\.json$/i.test(name) && !/^[[{]/.test(trimmed)) return { measurements: text };
  const { value, error } = readJson(text);
  if (error) return { error };
  if (Array.isArray(value)) return { measurements: value };
  if (value && typeof value === 'object' && value.format === 'prenet-calibration') {
    const problem = calibrationProblem(value);
    return problem ? { error: `${name} is not a calibration the page can use: ${problem}.` } : { calibration: value };
  }
  // A torch.profiler chrome trace: the API matches its kernels to PreNeT's families (docs/calibration.md).
  if (value && typeof value === 'object' && Array.isArray(value.traceEvents)) return { trace: value };
  if (value && typeof value === 'object' && Array.isArray(value.measurements)) return { measurements: value.measurements };
  return { error: `${name} is neither measurements (a CSV, a JSON list of rows or a profiler trace) nor a calibration (format "prenet-calibration").` };
}

// ---- in words ----------------------------------------------------------------------------------------------

const pct = (x) => (F.isNum(x) ? `${F.num(x, 3)}%` : '—');
const times = (x) => (F.isNum(x) ? `${F.num(x, 3)}×` : '—');

// The posterior sd of each log(scale): the document's `log_sd` where it has one, else the square root of its
// `log_covariance` diagonal (a matrix over the document's `scale_keys`).
function logSd(doc, d) {
  if (d?.log_sd && typeof d.log_sd === 'object') return d.log_sd;
  const keys = Array.isArray(doc?.scale_keys) ? doc.scale_keys : [];
  const cov = Array.isArray(d?.log_covariance) ? d.log_covariance : [];
  return Object.fromEntries(keys.map((k, i) => [k, Math.sqrt(Math.max(0, Number(cov[i]?.[i])))]).filter(([, v]) => F.isNum(v)));
}

/** The accelerators a calibration names, each {id, name, rows, scales, log_sd, before, after}. */
export function devices(doc, nameOf = (id) => id) {
  return Object.entries(doc?.devices ?? {}).map(([id, d]) => ({ id, name: nameOf(id), rows: d?.rows, scales: d?.scales ?? {}, log_sd: logSd(doc, d), before: d?.before ?? {}, after: d?.after ?? {} }));
}

/** The scales a calibration moved (1 where its rows say nothing), in the document's order. */
export const movedScales = (scales) => Object.entries(scales ?? {}).filter(([, s]) => F.isNum(s) && s !== 1);

/** One line on the calibration in use: "Calibrated with your measurements: A100 (3 rows), H100 (1 row)." */
export function statusHtml(doc, nameOf) {
  if (!doc) return 'No calibration: the results are the calculator’s own predictions.';
  const list = devices(doc, nameOf).map((d) => `<strong>${esc(d.name)}</strong> (${F.isNum(d.rows) ? F.plural(d.rows, 'row') : 'rows'})`);
  return `Calibrated with your measurements: ${list.join(', ')}. Results on ${list.length === 1 ? 'this accelerator are' : 'these accelerators are'} corrected and marked “calibrated”; the others are unchanged.`;
}

/** The before/after rows of a calibrate reply that added to a calibration: the earlier rows of the accelerators it kept, then its own. */
export function mergedRows(earlier, reply) {
  const kept = new Set(reply?.kept_devices ?? []);
  const old = (earlier ?? []).filter((r) => kept.has(r.hardware));
  const rows = [...old, ...(reply?.rows ?? [])];
  return rows.length ? rows : null;
}

/** What a reply row measured, in words: a quantity of the step, or a trace's kernels of one family and how they were matched. */
export function measuredWords(r) {
  const words = new Map(MEASURES);
  if (words.has(r.measures)) return words.get(r.measures);
  const family = String(r.measures ?? '').replace(/^kernels:/, '');
  if (family === r.measures) return String(r.measures ?? '');
  const how = r.matched_by === 'shape' ? `, by shape${F.isNum(r.operators) ? ` (${F.plural(r.operators, 'shape')})` : ''}` : r.matched_by === 'name' ? ', by name' : '';
  return `${family} kernels${how}`;
}

/** The before/after table of a calibrate reply's rows (narrow: the accelerator under the row number, each APE under its prediction). */
export function beforeAfterHtml(rows, nameOf = (id) => id) {
  if (!rows?.length) return '';
  const value = (shown) => `<span class="v">${shown}</span>`;
  const body = rows
    .map(
      (r) => `<tr data-row="${esc(r.row)}"><th scope="row">${esc(r.row)}<span class="range">${esc(shortName(nameOf(r.hardware)))}, ${esc(measuredWords(r))}</span></th>
      <td data-col="measured" data-value="${esc(r.measured_ms)}">${value(F.ms(r.measured_ms))}</td>
      <td data-col="before" data-value="${esc(r.predicted_ms_before)}">${value(F.ms(r.predicted_ms_before))}<span class="range" data-col="ape-before" data-value="${esc(r.ape_before_pct)}">off ${pct(r.ape_before_pct)}</span></td>
      <td data-col="after" data-value="${esc(r.predicted_ms_after)}">${value(F.ms(r.predicted_ms_after))}<span class="range" data-col="ape-after" data-value="${esc(r.ape_after_pct)}">off ${pct(r.ape_after_pct)}</span></td></tr>`,
    )
    .join('');
  return `<div class="table-wrap" tabindex="0" role="region" aria-label="Each measurement before and after calibration"><table class="cal-before-after">
    <caption>Each measurement, predicted before and after calibration (off by: the absolute percentage error)</caption>
    <thead><tr><th scope="col">Row</th><th scope="col">Measured</th><th scope="col">Before<span class="unit">predicted</span></th><th scope="col">After<span class="unit">predicted</span></th></tr></thead>
    <tbody>${body}</tbody></table></div>`;
}

// A scale's uncertainty in words: exp(sd) - 1 of log(scale), as a ± percentage.
const spread = (sd) => (F.isNum(sd) && sd > 0 ? ` ±${F.num((Math.exp(sd) - 1) * 100, 2)}%` : '');

/** Per accelerator: the scales learned (per kernel family, communication, overhead) and the fit's error before and after. */
export function scalesHtml(doc, nameOf = (id) => id) {
  const list = devices(doc, nameOf);
  if (!list.length) return '';
  return list
    .map((d) => {
      const moved = movedScales(d.scales);
      const scales = moved
        .map(([k, s]) => `<li data-scale="${esc(k)}"><span>${esc(k)}</span> <strong>× ${F.num(s, 4)}</strong><span class="hint">${spread(d.log_sd[k])}</span></li>`)
        .join('');
      return `<section class="cal-device" data-device="${esc(d.id)}" aria-label="Calibration of ${esc(d.name)}"><h4>${esc(d.name)} · ${F.isNum(d.rows) ? F.plural(d.rows, 'row') : ''}</h4>
        <p class="hint">Median error ${pct(d.before.median_ape_pct)} → ${pct(d.after.median_ape_pct)}; worst off by ${times(d.before.worst_off_by)} → ${times(d.after.worst_off_by)}.</p>
        <ul class="cal-scales" aria-label="Scale factors of ${esc(d.name)}">${scales}</ul>
        <p class="hint">Times of each kind × these factors${moved.length < Object.keys(d.scales).length ? '; the others stay at 1 (the measurements say nothing about them)' : ''}.</p></section>`;
    })
    .join('');
}

// ---- the typed table ---------------------------------------------------------------------------------------

/** A fresh typed row: the page's settings as starting values (strings). */
export function blankRow({ hardware = '', batch = '', seq = '', precision = '' } = {}) {
  return { model: '', hardware, batch: batch == null ? '' : String(batch), seq: seq == null ? '' : String(seq), precision: precision ?? '', measured_ms: '', measures: 'step' };
}

/**
 * The typed measurements as HTML, one fieldset a row (the column is narrow: labelled fields in a grid, like the
 * training form): `rows` (strings), the catalogue's accelerators [{id, name}], the precision choices and the
 * page's model in words (a blank model's placeholder; the zoo ids are a datalist, #cal-zoo).
 */
export function rowsTableHtml(rows, { hardware = [], precisions = [], pageModel = 'this page’s model' }) {
  const option = (value, label, selected) => `<option value="${esc(value)}"${selected ? ' selected' : ''}>${esc(label)}</option>`;
  return rows
    .map((r, i) => {
      const n = i + 1;
      const id = (key) => `cal-${key}-${i}`;
      const field = (key, label, control, wide = false) => `<label class="field${wide ? ' wide' : ''}" for="${id(key)}"><span>${label}</span>${control}</label>`;
      const input = (key, attrs = '') => `<input id="${id(key)}" data-row="${i}" data-key="${key}" value="${esc(r[key])}" ${attrs} />`;
      const select = (key, options) => `<select id="${id(key)}" data-row="${i}" data-key="${key}">${options}</select>`;
      const known = hardware.some((h) => h.id === r.hardware);
      const hw = [option('', 'choose…', !r.hardware), ...(!known && r.hardware && validId(r.hardware) ? [option(r.hardware, r.hardware, true)] : []), ...hardware.map((h) => option(h.id, h.name, h.id === r.hardware))].join('');
      const prec = [option('', 'default', !r.precision), ...precisions.map((p) => option(p, p, p === r.precision))].join('');
      const meas = MEASURES.map(([v, label]) => option(v, label, v === r.measures)).join('');
      return `<fieldset class="cal-row" data-measurement="${i}"><legend>Measurement ${n}</legend>
        <div class="grid-form">
        ${field('model', 'Model <small>zoo id, blank: this page’s</small>', input('model', `list="cal-zoo" placeholder="${esc(pageModel)}" autocomplete="off" spellcheck="false"`), true)}
        ${field('hardware', 'Accelerator', select('hardware', hw), true)}
        ${field('batch', 'Batch size', input('batch', 'type="number" min="1" step="1" inputmode="numeric"'))}
        ${field('seq', 'Sequence length', input('seq', 'type="number" min="1" step="1" inputmode="numeric" placeholder="the model’s"'))}
        ${field('precision', 'Precision', select('precision', prec))}
        ${field('measured_ms', 'Measured <small>ms</small>', input('measured_ms', 'type="number" min="0" step="any" inputmode="decimal"'))}
        ${field('measures', 'What was timed', select('measures', meas), true)}
        </div>
        <button type="button" class="small secondary" data-remove-row="${i}">Remove measurement ${n}</button></fieldset>`;
    })
    .join('');
}
