// "Calibrate": the user's own measurements (a CSV or JSON file dropped or chosen, or rows typed into a small
// table) go to the API's `calibrate` command through the worker; its calibration document then rides on every
// predict request (state.calibration), so the results of the accelerators it names are corrected at once and
// marked "calibrated". Shown here: each measurement before and after, and the scales learned per accelerator.
// Kept in this browser (localStorage), removable, exported and imported as the same JSON the CLI writes and reads.
import * as C from '../calibration.js';
import { readJson, utf8 } from '../documents.js';
import { acceptFiles, download } from '../files.js';
import * as F from '../format.js';
import * as S from '../state.js';

const { esc } = F;
const TABS = ['file', 'rows'];

export const reads = ['calibration', 'shareCal', 'model', 'source', '@meta'];

const storage = () => {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
};

/** The calibration saved in this browser (null when none), for the page's start and a link without one. */
export const saved = () => C.loadSaved(storage())?.doc ?? null;

let typed = null; // the typed table's rows (text), made on first render from the page's settings
let shownRows = undefined; // the before/after rows shown (the last calibrate reply's, or the saved ones)
let shownFor = null; // the calibration they belong to
let rowsShown = null; // what the typed table was last built for (its rows and the catalogue)

const nameOf = (ctx) => (id) => ctx.meta.hardwareById.get(id)?.name ?? id;

function say(ctx, message, kind = '') {
  const el = ctx.$('cal-file-status');
  el.className = `file-status ${kind}`;
  el.textContent = message;
}

// The page's settings a new typed row starts from: the accelerator in the breakdown (or the first selected),
// the batch, sequence length and precision the page uses.
function startingRow(ctx) {
  const { state, table } = ctx;
  const value = (name) => (table?.byName.has(name) ? S.effective(state, table.byName.get(name), table) : null);
  const hardware = state.sel ?? state.hw?.[0] ?? ctx.last.rows?.[0]?.id ?? '';
  return C.blankRow({ hardware: ctx.meta.hardwareById.has(hardware) ? hardware : '', batch: value('batch'), seq: value('seq'), precision: value('precision') });
}

function pageModelWords(state) {
  if (state.source === 'zoo') return `this page’s model (${state.model})`;
  return `this page’s model (${state.doc?.name ?? state.docName ?? 'uploaded'})`;
}

function renderRows(ctx) {
  const { $, state, table, meta } = ctx;
  typed ??= [startingRow(ctx)];
  const key = [typed, meta.hardware, state.model, state.source, state.doc];
  if (rowsShown && key.every((k, i) => k === rowsShown[i])) return;
  rowsShown = key;
  $('cal-rows').innerHTML = C.rowsTableHtml(typed, {
    hardware: meta.hardware.map((h) => ({ id: h.id, name: h.name })),
    precisions: table?.byName.get('precision')?.choices ?? [],
    pageModel: pageModelWords(state),
  });
  $('cal-zoo').innerHTML = meta.zoo.map((m) => `<option value="${esc(m.id)}"></option>`).join('');
}

export function render(state, ctx) {
  const { $ } = ctx;
  const doc = state.calibration;
  const keptHere = C.isSaved(storage(), doc);
  $('cal-status').innerHTML = C.statusHtml(doc, nameOf(ctx));
  $('cal-actions').hidden = !doc;
  $('cal-keep').hidden = !doc || keptHere;
  $('cal-from-link').hidden = !doc || keptHere;
  // The before/after of the calibration in use: the reply that made it, or the rows saved with it.
  if (shownFor !== doc) {
    shownFor = doc;
    shownRows = doc && keptHere ? C.loadSaved(storage())?.rows : doc === ctx.last.calibrate?.calibration ? ctx.last.calibrate.rows : null;
  }
  $('cal-result').hidden = !doc;
  $('cal-before-after').innerHTML = doc ? C.beforeAfterHtml(shownRows, nameOf(ctx)) : '';
  $('cal-scales').innerHTML = doc ? C.scalesHtml(doc, nameOf(ctx)) : '';
  // The share panel's opt-in applies only while there is a calibration.
  $('share-cal').disabled = !doc;
  $('share-cal').checked = Boolean(doc && state.shareCal);
  if (!$('cal-panel-rows').hidden) renderRows(ctx);
}

/** Applies a new calibration: kept in this browser when it is the user's (`keep`), sent with every predict request. */
function apply(ctx, doc, rows, { keep = true } = {}) {
  if (keep && !C.save(storage(), doc, rows)) say(ctx, 'This browser would not keep the calibration (storage full or disabled): it applies until the page is closed.', 'bad');
  shownFor = doc;
  shownRows = rows;
  ctx.update({ calibration: doc }, { compute: 'now' });
}

function markRowError(ctx, error) {
  for (const el of ctx.$('cal-rows').querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  // The API names the row and the column in its message ("measurements: row 2: measured_ms must be ..."; its
  // field is `measurements`); the page's own check gives them as {row, field}.
  const found = /\brow (\d+)\b(.*)$/is.exec(error?.message ?? '');
  const row = found?.[1] ?? error?.row;
  const field = C.COLUMNS.includes(error?.field) ? error.field : C.COLUMNS.find((k) => new RegExp(`\\b${k}\\b`).test(found?.[2] ?? ''));
  if (row == null || !field) return;
  const el = ctx.$('cal-rows').querySelector(`[data-row="${Number(row) - 1}"][data-key="${CSS.escape(field)}"]`);
  el?.setAttribute('aria-invalid', 'true');
}

/** Runs `calibrate` on measurements (CSV text, row objects or a trace); `from` names them in the status. */
async function calibrate(ctx, measurements, from) {
  say(ctx, `Calibrating with ${from}…`);
  ctx.$('cal-run').disabled = true;
  try {
    // The calibration in use goes along: the API keeps its accelerators these measurements do not measure.
    const request = { command: 'calibrate', measurements };
    if (ctx.state.calibration) request.calibration = ctx.state.calibration;
    const { doc, error } = await ctx.client.call(request);
    if (error) {
      const inUse = error.field === 'calibration' ? ' (the calibration in use: remove it to start a new one)' : '';
      say(ctx, `${from[0].toUpperCase()}${from.slice(1)}: ${error.message}${inUse}`, 'bad');
      markRowError(ctx, error);
      return false;
    }
    const rows = C.mergedRows(shownRows, doc);
    ctx.last.calibrate = { ...doc, rows };
    const n = doc.rows?.length ?? 0;
    const kept = (doc.kept_devices ?? []).map((id) => nameOf(ctx)(id));
    say(ctx, `Calibrated with ${F.plural(n, 'measurement')} from ${from}. The results use it now.` +
      (kept.length ? ` Kept: ${kept.join(', ')} (not measured here).` : ''), 'good');
    apply(ctx, doc.calibration, rows);
    return true;
  } finally {
    ctx.$('cal-run').disabled = false;
  }
}

async function loadFile(file, ctx) {
  if (!file) return;
  const limit = ctx.table?.limits?.document_bytes ?? 8e6;
  if (file.size > limit) return say(ctx, `${file.name} is ${F.si(file.size, 'B')}, more than the ${F.si(limit, 'B')} the calculator reads.`, 'bad');
  const text = utf8(await file.arrayBuffer());
  if (text == null) return say(ctx, `${file.name} is not UTF-8 text: expected a measurements CSV, a JSON list of rows, a profiler trace or a calibration JSON.`, 'bad');
  const read = C.readMeasurementsFile(file.name, text, (t) => readJson(t, ctx.table.limits, file.name));
  if (read.error) return say(ctx, read.error, 'bad');
  if (read.calibration) {
    say(ctx, `Using the calibration in ${file.name}.`, 'good');
    ctx.last.calibrate = null;
    return apply(ctx, read.calibration, null);
  }
  if (read.trace) return calibrate(ctx, [traceRow(ctx, read.trace)], `${file.name} (profiled with this page’s settings)`);
  return calibrate(ctx, read.measurements, file.name);
}

// A profiler trace measures a run of the page's own settings on the accelerator in the breakdown (or the first
// selected): the row is the page's predict request on that one accelerator, with the trace.
function traceRow(ctx, trace) {
  const row = S.predictRequest(ctx.state, ctx.table);
  for (const key of ['command', 'calibration', 'breakdown']) delete row[key];
  row.hardware = startingRow(ctx).hardware || (ctx.state.sel ?? ctx.state.hw?.[0] ?? '');
  if (!row.custom_hardware?.some((sheet) => sheet.id === row.hardware)) delete row.custom_hardware;
  row.trace = trace;
  return row;
}

export function selectTab(name, ctx, focus = false) {
  for (const tab of TABS) {
    const button = ctx.$(`tab-cal-${tab}`);
    const on = tab === name;
    button.setAttribute('aria-selected', String(on));
    button.tabIndex = on ? 0 : -1;
    ctx.$(`cal-panel-${tab}`).hidden = !on;
    if (on && focus) button.focus();
  }
  if (name === 'rows') renderRows(ctx);
}

export function bind(ctx) {
  const { $ } = ctx;
  for (const tab of TABS) {
    $(`tab-cal-${tab}`).addEventListener('click', () => selectTab(tab, ctx));
    $(`tab-cal-${tab}`).addEventListener('keydown', (e) => {
      const i = TABS.indexOf(tab);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      selectTab(TABS[(next + TABS.length) % TABS.length], ctx, true);
    });
  }
  acceptFiles($('cal-file'), $('cal-drop'), (file) => loadFile(file, ctx));

  // The typed table: edits change the rows in place (no re-render while typing); adding or removing rebuilds it.
  const rows = $('cal-rows');
  const edit = (e) => {
    const el = e.target;
    if (el.dataset.row === undefined || !typed) return;
    typed[Number(el.dataset.row)][el.dataset.key] = el.value;
    el.removeAttribute('aria-invalid');
  };
  rows.addEventListener('input', edit);
  rows.addEventListener('change', edit);
  rows.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-remove-row]');
    if (!b) return;
    const i = Number(b.dataset.removeRow);
    typed = typed.filter((_, k) => k !== i);
    if (!typed.length) typed = [startingRow(ctx)];
    renderRows(ctx);
    const left = rows.querySelectorAll('button[data-remove-row]');
    (left[Math.min(i, left.length - 1)] ?? $('cal-add'))?.focus();
  });
  $('cal-add').addEventListener('click', () => {
    typed ??= [];
    // A new row repeats the last one's settings (another batch size of the same run, typically), without its time.
    const last = typed.at(-1);
    typed = [...typed, last ? { ...last, measured_ms: '' } : startingRow(ctx)];
    renderRows(ctx);
    rows.querySelectorAll('input[data-key="measured_ms"]')[typed.length - 1]?.focus();
  });
  const typedRows = () => C.measurementRows(typed ?? [], S.modelArgument(ctx.state));
  $('cal-run').addEventListener('click', () => {
    const { rows: list, error } = typedRows();
    if (error) {
      say(ctx, error.message, 'bad');
      return markRowError(ctx, { ...error, message: `row ${error.row}` });
    }
    calibrate(ctx, list, `the ${F.plural(list.length, 'row')} typed here`);
  });
  $('cal-csv').addEventListener('click', () => {
    const { rows: list, error } = typedRows();
    if (error) return say(ctx, error.message, 'bad');
    download('measurements.csv', C.measurementsCsv(list, S.modelFile(ctx.state) ?? 'model.json'), 'text/csv');
  });

  $('cal-export').addEventListener('click', () => ctx.state.calibration && download(S.CALIBRATION_FILE, C.exportText(ctx.state.calibration), 'application/json'));
  $('cal-remove').addEventListener('click', () => {
    C.forget(storage());
    ctx.last.calibrate = null;
    say(ctx, 'Calibration removed: the results are the calculator’s own predictions again.');
    ctx.update({ calibration: null, shareCal: false }, { compute: 'now' });
    $('tab-cal-file').focus();
  });
  $('cal-keep').addEventListener('click', () => {
    const doc = ctx.state.calibration;
    if (!doc) return;
    C.save(storage(), doc, shownRows ?? null);
    say(ctx, 'Kept in this browser.', 'good');
    ctx.update({}, { compute: false, changed: ['calibration'] });
    $('cal-export').focus();
  });
  $('share-cal').addEventListener('change', (e) => ctx.update({ shareCal: e.target.checked }, { compute: false }));
}
