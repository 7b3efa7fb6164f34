// Compare: "Pin this scenario" keeps the whole state (its hash) in the state's `pins` (so in the URL); each
// pinned scenario is computed like the current one and shown beside it, per accelerator both predict, with the
// difference in time and cost, as a table and as bars. Change anything and the current side follows.
import * as F from '../format.js';
import { buildRows } from '../results/rows.js';
import { applyStyles, sortRows } from '../results/table.js';
import * as S from '../state.js';

const { esc, isNum } = F;

export const reads = ['pins', 'prices', '@predict', '@meta'];

const cache = new Map(); // request JSON -> {doc, error}
let job = 0;

/**
 * What differs between two states, in the fields' words: "Batch size 8 → 4, Accelerators 1 → 8". With the two
 * replies' `settings`, a field the API ran with the same value on both sides is no difference (blank, "the
 * model's", against the model's own 8192 typed in).
 */
export function differences(a, b, table, used = {}) {
  const out = [];
  const label = (name) => table.byName.get(name)?.label ?? name;
  // A blank field in that state's words: the plan search's on a cluster, else the page's default there (a
  // fine-tune's micro-batch 1, not the pre-training 8), else the API's.
  const blank = (state, row) =>
    S.searched(state, row, table) ? row.cluster_default_text : (S.pageDefault(state, row, table) ?? row.default_text ?? 'default');
  const show = (v, row, state) => (v == null ? String(blank(state, row)) : String(v));
  if (a.source !== b.source || a.model !== b.model || JSON.stringify(a.doc) !== JSON.stringify(b.doc))
    out.push(`model ${a.source === 'zoo' ? a.model : a.docName || a.doc?.name || 'custom'} → ${b.source === 'zoo' ? b.model : b.docName || b.doc?.name || 'custom'}`);
  const same = (name) => used.then && used.now && name in used.then && JSON.stringify(used.then[name]) === JSON.stringify(used.now[name]);
  for (const row of table.fields)
    if (JSON.stringify(a[row.name]) !== JSON.stringify(b[row.name]) && !same(row.name)) out.push(`${label(row.name)} ${show(a[row.name], row, a)} → ${show(b[row.name], row, b)}`);
  if (JSON.stringify(a.hw) !== JSON.stringify(b.hw)) out.push('the accelerators');
  if (JSON.stringify(a.custom) !== JSON.stringify(b.custom)) out.push('the custom accelerators');
  if (a.budget !== b.budget) out.push(`budget ${a.budget || 'default'} → ${b.budget || 'default'}`);
  return out;
}

const pct = (now, then) => (isNum(now) && isNum(then) && then > 0 ? `${now >= then ? '+' : '−'}${F.num((Math.abs(now - then) / then) * 100, 3)}%` : '');

/** The comparison of a pinned reply's rows with the current rows (accelerators in both, the current order). */
export function compareRows(pinned, current) {
  const byId = new Map(pinned.map((r) => [r.id, r]));
  return current.filter((r) => byId.has(r.id)).map((now) => ({ id: now.id, name: now.name, then: byId.get(now.id), now }));
}

/** `index`: the pinned scenario's number; `against`: the other side's name ("now", or another pin's). */
export function compareHtml(pairs, index, diff, against = 'now') {
  if (!pairs.length) return `<p class="hint">The pinned scenario and this one share no accelerator.</p>`;
  const time = (r) => (isNum(r.hours) ? r.hours : null);
  const body = pairs
    .map(({ id, name, then, now }) => {
      const dt = isNum(time(now)) && isNum(time(then)) ? time(now) - time(then) : null;
      const dc = isNum(now.cost) && isNum(then.cost) ? now.cost - then.cost : null;
      const sign = (x, fmt) => (x == null ? '—' : `${x > 0 ? '+' : x < 0 ? '−' : '±'}${fmt(Math.abs(x))}`);
      return `<tr data-id="${esc(id)}"><th scope="row">${esc(name)}</th>
        <td data-label="Pinned">${F.hours(then.hours)}${then.fits ? '' : ' <span class="nofit-label">✗</span>'}<span class="range">${F.usd(then.cost)}</span></td>
        <td data-label="${esc(against === 'now' ? 'Now' : against)}">${F.hours(now.hours)}${now.fits ? '' : ' <span class="nofit-label">✗</span>'}<span class="range">${F.usd(now.cost)}</span></td>
        <td data-label="Δ time" data-col="dtime" data-value="${dt ?? ''}">${sign(dt, F.hours)}<span class="range">${pct(time(now), time(then))}</span></td>
        <td data-label="Δ cost" data-col="dcost" data-value="${dc ?? ''}">${sign(dc, F.usd)}<span class="range">${pct(now.cost, then.cost)}</span></td></tr>`;
    })
    .join('');
  const max = Math.max(...pairs.flatMap((p) => [time(p.then), time(p.now)]).filter(isNum), 0) || 1;
  const bar = (v, cls) => `<span class="cbar ${cls}" data-width="${isNum(v) ? ((v / max) * 100).toFixed(1) : 0}%"></span>`;
  const bars = pairs
    .map(({ name, then, now }) => `<li><span>${esc(name)}</span><span class="cbars" aria-hidden="true">${bar(time(then), 'then')}${bar(time(now), 'now')}</span><span class="val">${F.hours(then.hours)} → ${F.hours(now.hours)}</span></li>`)
    .join('');
  const Against = against === 'now' ? 'Now' : against;
  return `<h3>Pinned ${index + 1} → ${esc(against)}${diff.length ? `: ${esc(diff.join(', '))}` : ': nothing differs yet (change an input)'}</h3>
    <div class="table-wrap"><table class="results compare"><caption class="visually-hidden">Time to train and cost, pinned scenario and ${esc(against)}, with the difference</caption>
    <thead><tr><th scope="col">Accelerator</th><th scope="col">Pinned<span class="unit">time, cost</span></th><th scope="col">${esc(Against)}<span class="unit">time, cost</span></th><th scope="col">Δ time</th><th scope="col">Δ cost</th></tr></thead>
    <tbody>${body}</tbody></table></div>
    <ul class="bars compare-bars" aria-label="Time to train, pinned (upper bar) and ${esc(against)} (lower bar)">${bars}</ul>`;
}

export function render(state, ctx) {
  const { $ } = ctx;
  $('compare-card').hidden = !state.pins.length;
  if (!state.pins.length || !ctx.last.predict || !ctx.table) return;
  const mine = ++job;
  Promise.all(
    state.pins.map(async (hash) => {
      const pinned = await S.fromHash(hash, ctx.table);
      // The calibration is the user's (their accelerators), not the scenario's: a pin is computed with the one in use.
      pinned.calibration ??= state.calibration;
      const request = S.predictRequest(pinned, ctx.table);
      const key = JSON.stringify(request);
      if (!cache.has(key)) {
        if (cache.size > 16) cache.clear();
        cache.set(key, ctx.predict(pinned));
      }
      const { doc, error } = await cache.get(key);
      return { pinned, doc, error };
    }),
  ).then((answers) => {
    if (mine !== job) return;
    const current = ctx.last.rows;
    const meta = ctx.meta;
    const now = { settings: ctx.last.predict?.settings };
    const rowsOf = ({ pinned, doc }) => sortRows(buildRows(doc, { hardware: meta.hardwareById, customs: pinned.custom, prices: pinned.prices }), 'step', 1);
    $('compare').innerHTML = answers
      .map((answer, i) => {
        const { pinned, doc, error } = answer;
        const remove = `<button type="button" class="small secondary" data-unpin="${i}">Remove pinned ${i + 1}</button>`;
        if (error) return `<div class="compare-one"><p class="error">Pinned ${i + 1} could not be computed: ${esc(error.message)}</p>${remove}</div>`;
        const rows = rowsOf(answer);
        const withNow = compareHtml(compareRows(rows, current), i, differences(pinned, ctx.state, ctx.table, { then: doc.settings, now: now.settings }));
        // Pins with each other too: each against the next one pinned.
        const next = answers[i + 1];
        const withNext =
          next && !next.error
            ? compareHtml(compareRows(rows, rowsOf(next)), i, differences(pinned, next.pinned, ctx.table, { then: doc.settings, now: next.doc.settings }), `pinned ${i + 2}`)
            : '';
        return `<div class="compare-one">${withNow}${withNext}${remove}</div>`;
      })
      .join('');
    applyStyles($('compare'));
  });
}

export function bind(ctx) {
  const { $ } = ctx;
  $('pin').addEventListener('click', async () => {
    const hash = await S.toHash({ ...ctx.state, pins: [] }, ctx.table);
    const pins = ctx.state.pins.filter((h) => h !== hash);
    ctx.update({ pins: [...pins, hash].slice(-S.LIMITS.pins) }, { compute: false });
    $('share-status').textContent = '';
    $('pin-status').textContent = 'Pinned. Change any input: the comparison below follows.';
  });
  $('compare').addEventListener('click', (e) => {
    const b = e.target.closest('[data-unpin]');
    if (!b) return;
    const pins = ctx.state.pins.filter((_, i) => i !== Number(b.dataset.unpin));
    ctx.update({ pins }, { compute: false });
  });
}
