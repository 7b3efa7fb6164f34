// The results: the table (sortable, best choice marked), the verdict, the assumptions in plain words, the
// chart (loaded after the first result), and the breakdown of one accelerator with its ten longest layers
// (one more request, with `breakdown`, for that accelerator only). The rows themselves come from the pure
// helpers in ../results.js; the API's errors are shown here and marked on the inputs they name.
import { noHardware } from '../errors.js';
import { esc } from '../format.js';
import * as S from '../state.js';
import { isCluster, layoutPatch } from '../cluster.js';
import { assumptionsHtml } from '../results/assumptions.js';
import { breakdownHtml, layersHtml, timelineHtml } from '../results/breakdown.js';
import { buildRows, refusedRows } from '../results/rows.js';
import { applyStyles, renderTable, sortRows, COLUMNS } from '../results/table.js';
import { pickBest, verdictHtml } from '../results/verdict.js';

export const reads = ['sort', 'dir', 'sel', 'prices', 'log', '@meta', '@predict', '@invalid'];

// Accelerator names in the page's words (the catalogue's, a custom sheet's), never ids.
const namer = (ctx) => (id) => ctx.meta.hardwareById.get(id)?.name ?? ctx.last.request?.custom_hardware?.find((c) => c.id === id)?.name ?? id;

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

// While an input holds an invalid value nothing is recomputed: the results say which, and are marked as
// those of the last valid inputs.
function renderStale({ $, invalid }) {
  const box = $('stale');
  const list = [...invalid.values()];
  box.hidden = !list.length;
  document.querySelector('.results-card').classList.toggle('stale', list.length > 0);
  if (list.length)
    box.innerHTML = `<strong>Not updated:</strong> ${list.map((i) => esc(i.message)).join('; ')}. The results below are for the last valid input${list.length > 1 ? 's' : ''}; fix ${list.length > 1 ? 'them' : 'it'} to recompute.`;
}

export function render(state, ctx) {
  const { $, last, meta } = ctx;
  renderStale(ctx);
  const error = last.predictError;
  markFields(error);
  if (error) {
    const nothing = noHardware(error);
    const model = error.field === 'model' && last.predict;
    // Results of earlier inputs stay, dimmed as the stale ones of a value the page refused itself.
    const kept = !nothing && Boolean(last.predict);
    if (kept) document.querySelector('.results-card').classList.add('stale');
    // Which value the kept results are for (typing 1e9 passes 1 on the way): "(Batch size 1)".
    const row = ctx.table?.byName.get(error.field);
    const was = last.request?.[error.field];
    const keptFor = row?.page && was != null && typeof was !== 'object' ? ` (${row.label} ${was})` : '';
    showError(
      nothing
        ? 'No accelerator selected: tick at least one in “Accelerators”, or describe your own.'
        : model
          ? `The model has an error (see “Model”); these results are for the last valid model. ${error.message}`
          : `${error.message}${kept ? `. Not updated: the results below are for the last valid input${keptFor}; fix it to recompute.` : ''}`,
      ctx,
    );
    if (nothing) {
      $('results-table').innerHTML = '';
      $('verdict').innerHTML = '';
    }
    // Nothing computed yet (a link's first request failed): the charts say why they are empty.
    if (!last.predict) for (const id of ['chart', 'chart-cost']) $(id).innerHTML = '<p class="chart-empty">No results to chart: see the message above the table.</p>';
    return;
  }
  showError(null, ctx);
  const reply = last.predict;
  if (!reply) return;
  const rows = buildRows(reply, { hardware: meta.hardwareById, customs: last.request?.custom_hardware ?? [], prices: state.prices });
  const sorted = sortRows(rows, state.sort, state.dir);
  const pick = pickBest(rows);
  if (!state.sel || !rows.some((r) => r.id === state.sel)) last.selAuto = pick.best?.id ?? sorted[0]?.id;
  const selected = rows.some((r) => r.id === state.sel) ? state.sel : last.selAuto;
  last.rows = sorted;
  const words = { nameOf: namer(ctx) };
  renderTable($('results-table'), sorted, { sort: state.sort, dir: state.dir, selected, best: pick.best, fastest: pick.fastest, language: last.language });
  const refused = refusedRows(reply);
  $('refused').hidden = !refused.length;
  $('refused').innerHTML = refused.length ? `<strong>Not predicted:</strong> ${refused.map((r) => `${esc(r.name)} (${esc(r.message)})`).join('; ')}` : '';
  $('verdict').innerHTML = verdictHtml(rows, pick, words);
  $('assumptions').innerHTML = assumptionsHtml(reply, rows, { state, table: ctx.table });
  renderBreakdown(sorted, selected, ctx);
  // The charts follow the table a frame later, so the numbers are on screen first.
  if (chart) {
    cancelAnimationFrame(chartFrame);
    chartFrame = requestAnimationFrame(() => chart.drawCharts(chartTargets(ctx), last.rows, { log: state.log }));
  }
}

const chartTargets = ({ $ }) => ({ time: $('chart'), cost: $('chart-cost'), note: $('chart-note') });

function renderBreakdown(rows, selected, ctx) {
  ctx.$('sel').innerHTML = rows.map((r) => `<option value="${esc(r.id)}" ${r.id === selected ? 'selected' : ''}>${esc(r.name)}</option>`).join('');
  ctx.$('breakdown').innerHTML = breakdownHtml(rows.find((r) => r.id === selected), { nameOf: namer(ctx) });
  applyStyles(ctx.$('breakdown'));
  if (selected) loadLayers(selected, ctx);
}

// Per-layer times and memory over the step for the selected accelerator only: one more request of the same
// settings for that accelerator with `breakdown`, so the table's request stays small. A newer selection or
// result wins. On a cluster the reply has no per-layer times (a plan splits the step) but draws the fullest
// stage's device over the step, as the CLI's --breakdown does.
let layersJob = 0;
const layersCache = new Map();
async function loadLayers(selected, ctx) {
  const base = ctx.last.request;
  if (!base) return;
  const show = (id, html) => {
    const el = document.getElementById(id);
    if (el) {
      el.innerHTML = html;
      applyStyles(el);
    }
  };
  const cluster = isCluster(base, ctx.table);
  const layers = (step) =>
    cluster ? '<p class="hint">Per-layer times are for runs on one device; on a cluster, the plan above splits the step.</p>' : layersHtml(step);
  if (cluster) show('layer-breakdown', layers());
  // On a cluster, the row's plan pinned (as "Pin this layout" pins it): the same step and memory without the plan
  // search again (17 ms rather than ~200 ms in the module, which would hold up the next edit's workers), asked only
  // while the state is still the one this result answers.
  const plan = cluster ? ctx.last.rows.find((r) => r.id === selected)?.plan : null;
  let asked = base;
  if (plan) {
    if (JSON.stringify(S.predictRequest(ctx.state, ctx.table)) !== JSON.stringify(base)) return;
    asked = S.predictRequest({ ...ctx.state, ...layoutPatch(plan, ctx.table) }, ctx.table);
  }
  const custom = (base.custom_hardware ?? []).find((sheet) => sheet.id === selected);
  const request = { ...asked, breakdown: true, hardware: custom ? [] : [selected] };
  if (custom) request.custom_hardware = [custom];
  else delete request.custom_hardware;
  const key = JSON.stringify(request);
  const job = ++layersJob;
  const current = () => job === layersJob;
  if (!layersCache.has(key)) {
    const { doc, error } = await ctx.client.call(request);
    if (error) {
      if (current()) {
        if (!cluster) show('layer-breakdown', `<p class="hint">Per-layer times unavailable: ${esc(error.message)}</p>`);
        show('memory-timeline', `<p class="hint">Memory over the step unavailable: ${esc(error.message)}</p>`);
      }
      return;
    }
    if (layersCache.size > 20) layersCache.clear();
    layersCache.set(key, doc.results?.[0]);
  }
  if (!current()) return;
  const result = layersCache.get(key);
  show('layer-breakdown', layers(result?.step));
  show('memory-timeline', timelineHtml(result?.memory));
}

/** Loads the chart library (after the first result, so it never delays it) and draws the current rows. */
export function loadChart(ctx) {
  import('../chart.js').then((m) => {
    chart = m;
    if (ctx.last.rows.length) m.drawCharts(chartTargets(ctx), ctx.last.rows, { log: ctx.state.log });
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
  $('chart-log').addEventListener('change', (e) => ctx.update({ log: e.target.checked }, { compute: false }));
  // A suggestion applies its change (the verdict's and the breakdown's buttons); "pin this layout" fixes a
  // row's plan in the cluster fields; "change" in the assumptions goes to the field that sets it.
  document.addEventListener('click', (e) => {
    const apply = e.target.closest('[data-apply]');
    if (apply) {
      let patch;
      try {
        patch = JSON.parse(apply.dataset.apply);
      } catch {
        return;
      }
      const allowed = Object.fromEntries(Object.entries(patch).filter(([k]) => ctx.table.byName.get(k)?.page));
      ctx.update(allowed, { compute: 'now' });
      return;
    }
    const pin = e.target.closest('[data-pin-layout]');
    if (pin) {
      const row = ctx.last.rows.find((r) => r.id === pin.dataset.pinLayout);
      if (!row?.plan) return;
      // The pinned values are in view: the cluster form's layout part opens.
      const more = document.querySelector('#cluster-form details.more');
      if (more) more.open = true;
      ctx.update(layoutPatch(row.plan, ctx.table), { compute: 'now' });
      return;
    }
    const focus = e.target.closest('[data-focus]');
    if (focus) {
      const el = document.getElementById(focus.dataset.focus);
      if (!el) return;
      const more = el.closest('details');
      if (more) more.open = true;
      el.focus();
      el.scrollIntoView?.({ block: 'center' });
    }
  });
}
