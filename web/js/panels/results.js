// The results: the table (sortable, best choice marked), the verdict, the assumptions in plain words, the
// chart (loaded after the first result), and the breakdown of one accelerator with its ten longest layers
// (one more request, with `breakdown`, for that accelerator only). The rows themselves come from the pure
// helpers in ../results.js; the API's errors are shown here and marked on the inputs they name.
import { noHardware } from '../errors.js';
import { esc } from '../format.js';
import { applyStyles, assumptionsHtml, breakdownHtml, buildRows, layersHtml, pickBest, renderTable, sortRows, verdictHtml, COLUMNS } from '../results.js';

export const reads = ['sort', 'dir', 'sel', 'prices', '@meta', '@predict'];

let chart = null; // ../chart.js, once loaded
let chartFrame = 0;

function showError(message, { $ }) {
  $('error').hidden = !message;
  $('error').textContent = message ?? '';
}

// The element an error names carries data-option=<field>: a training field (marked aria-invalid, and shown
// when it is under "More training options"), or a panel (the model, the accelerators: marked .invalid).
function markFields(error) {
  for (const el of document.querySelectorAll('[data-marked-by-api="1"]')) {
    el.removeAttribute('aria-invalid');
    el.classList.remove('invalid');
    el.dataset.markedByApi = '';
  }
  const target = error?.field ? document.querySelector(`[data-option="${CSS.escape(error.field)}"]`) : null;
  if (!target) return;
  if (/^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) {
    target.setAttribute('aria-invalid', 'true');
    const more = target.closest('details');
    if (more) more.open = true;
  } else target.classList.add('invalid');
  target.dataset.markedByApi = '1';
}

export function render(state, ctx) {
  const { $, last, meta } = ctx;
  const error = last.predictError;
  markFields(error);
  if (error) {
    const nothing = noHardware(error);
    const model = error.field === 'model' && last.predict;
    showError(
      nothing
        ? 'No accelerator selected: tick at least one in “Accelerators”, or describe your own.'
        : model
          ? `The model has an error (see “Model”); these results are for the last valid model. ${error.message}`
          : error.message,
      ctx,
    );
    if (nothing) {
      $('results-table').innerHTML = '';
      $('verdict').innerHTML = '';
    }
    return;
  }
  showError(null, ctx);
  const reply = last.predict;
  if (!reply) return;
  const rows = buildRows(reply, { hardware: meta.hardwareById, customs: last.request?.custom_hardware ?? [], prices: state.prices, request: last.request });
  const sorted = sortRows(rows, state.sort, state.dir);
  const pick = pickBest(rows);
  if (!state.sel || !rows.some((r) => r.id === state.sel)) last.selAuto = pick.best?.id ?? sorted[0]?.id;
  const selected = rows.some((r) => r.id === state.sel) ? state.sel : last.selAuto;
  last.rows = sorted;
  renderTable($('results-table'), sorted, { sort: state.sort, dir: state.dir, selected, best: pick.best, fastest: pick.fastest, language: last.language });
  $('verdict').innerHTML = verdictHtml(rows, pick);
  $('assumptions').innerHTML = assumptionsHtml(reply, last.request, rows);
  renderBreakdown(sorted, selected, ctx);
  // The chart follows the table a frame later, so the numbers are on screen first.
  if (chart) {
    cancelAnimationFrame(chartFrame);
    chartFrame = requestAnimationFrame(() => chart.drawChart($('chart'), last.rows));
  }
}

function renderBreakdown(rows, selected, ctx) {
  ctx.$('sel').innerHTML = rows.map((r) => `<option value="${esc(r.id)}" ${r.id === selected ? 'selected' : ''}>${esc(r.name)}</option>`).join('');
  ctx.$('breakdown').innerHTML = breakdownHtml(rows.find((r) => r.id === selected));
  applyStyles(ctx.$('breakdown'));
  if (selected) loadLayers(selected, ctx);
}

// Per-layer times for the selected accelerator only: one more request of the same settings for that
// accelerator with `breakdown`, so the table's request stays small. A newer selection or result wins.
let layersJob = 0;
const layersCache = new Map();
async function loadLayers(selected, ctx) {
  const base = ctx.last.request;
  if (!base) return;
  const custom = (base.custom_hardware ?? []).find((sheet) => sheet.id === selected);
  const request = { ...base, breakdown: true, hardware: custom ? [] : [selected] };
  if (custom) request.custom_hardware = [custom];
  else delete request.custom_hardware;
  const key = JSON.stringify(request);
  const job = ++layersJob;
  const target = () => (job === layersJob ? document.getElementById('layer-breakdown') : null);
  if (!layersCache.has(key)) {
    const { doc, error } = await ctx.client.call(request);
    if (error) {
      const el = target();
      if (el) el.innerHTML = `<p class="hint">Per-layer times unavailable: ${esc(error.message)}</p>`;
      return;
    }
    if (layersCache.size > 20) layersCache.clear();
    layersCache.set(key, doc.results?.[0]?.step);
  }
  const el = target();
  if (el) {
    el.innerHTML = layersHtml(layersCache.get(key));
    applyStyles(el);
  }
}

/** Loads the chart library (after the first result, so it never delays it) and draws the current rows. */
export function loadChart(ctx) {
  import('../chart.js').then((m) => {
    chart = m;
    if (ctx.last.rows.length) m.drawChart(ctx.$('chart'), ctx.last.rows);
  });
}

export function bind(ctx) {
  const { $ } = ctx;
  $('results-table').addEventListener('click', (e) => {
    const sort = e.target.closest('[data-sort]');
    if (sort) {
      const key = sort.dataset.sort;
      const col = COLUMNS.find((c) => c.key === key);
      const state = ctx.state;
      ctx.update({ sort: key, dir: state.sort === key ? -state.dir : col.dir }, { compute: false });
      document.querySelector(`#results-table [data-sort="${key}"]`)?.focus();
      return;
    }
    const pick = e.target.closest('[data-pick]');
    if (pick) {
      ctx.update({ sel: pick.dataset.pick }, { compute: false });
      document.querySelector(`#results-table [data-pick="${CSS.escape(pick.dataset.pick)}"]`)?.focus();
    }
  });
  $('sel').addEventListener('change', (e) => ctx.update({ sel: e.target.value }, { compute: false }));
}
