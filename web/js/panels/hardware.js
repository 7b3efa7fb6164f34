// Panel 3, the accelerators: the catalogue (`hardware` command) filtered by vendor, memory, launch year and
// text, with a price per accelerator that the page may edit (kept in the URL, not sent to the API).
import * as F from '../format.js';

const { esc } = F;

// Prices are not read: a price edit must not rebuild the list under the cursor (the list follows on blur).
export const reads = ['hw', 'custom', '@meta'];

function filters($) {
  return {
    query: $('hw-search').value.trim().toLowerCase(),
    vendor: $('hw-vendor').value,
    memory: Number($('hw-memory').value),
    since: Number($('hw-since').value || 0),
  };
}

function visibleHardware({ $, meta }) {
  const f = filters($);
  return meta.hardware.filter(
    (h) =>
      (!f.vendor || h.vendor === f.vendor) &&
      h.memory_gb >= f.memory &&
      (!f.since || Number(String(h.launch_date).slice(0, 4)) >= f.since) &&
      (!f.query || `${h.id} ${h.name} ${String(h.architecture).replace(/\(.*\)/, '')}`.toLowerCase().includes(f.query)),
  );
}

let filtersFor = null; // the catalogue the vendor and year filters were built for

function fillFilters({ $, meta }) {
  if (filtersFor === meta.hardware) return;
  filtersFor = meta.hardware;
  const vendors = [...new Set(meta.hardware.map((h) => h.vendor))].sort();
  $('hw-vendor').innerHTML = `<option value="">all</option>${vendors.map((v) => `<option>${esc(v)}</option>`).join('')}`;
  const years = [...new Set(meta.hardware.map((h) => Number(String(h.launch_date).slice(0, 4))))].filter(Boolean).sort();
  $('hw-since').innerHTML = `<option value="">any year</option>${years.map((y) => `<option value="${y}">${y}</option>`).join('')}`;
}

// A price field's text: the page's edit, else the catalogue price (blank where none is on file).
function priceField(state, h) {
  const edited = Object.hasOwn(state.prices, h.id);
  return {
    value: edited ? state.prices[h.id] : h.price_per_hour > 0 ? h.price_per_hour : '',
    edited,
    title: edited ? 'edited; clear to restore the catalogue price' : 'lowest cloud price on file, USD per hour',
  };
}

// A sheet's citations (hardware/README.md: every number names one), their URLs as links, shown on demand: the page
// lists each accelerator with where its figures come from. After the price in the DOM, so that Tab goes checkbox,
// price, sources; the grid puts it on a row of its own.
function sourcesList(h) {
  const entries = Object.entries(h.sources ?? {});
  if (!entries.length) return '';
  const linked = (text) =>
    esc(text).replace(/https?:\/\/[^\s)<>"']+/g, (url) => `<a href="${url}" target="_blank" rel="noopener">${url}</a>`);
  return `<details class="hw-sources"><summary data-sources="${esc(h.id)}">sources (${entries.length})</summary><ul>${entries
    .map(([key, text]) => `<li><b>${esc(key)}</b>: ${linked(text)}</li>`)
    .join('')}</ul></details>`;
}

export function render(state, ctx) {
  const { $, meta } = ctx;
  if (!meta.hardware.length) return;
  fillFilters(ctx);
  const shown = visibleHardware(ctx);
  const selected = (id) => state.hw == null || state.hw.includes(id);
  $('hw-list').innerHTML =
    shown
      .map((h) => {
        const { value, edited, title } = priceField(state, h);
        return `<div class="hw-item">
        <label><input type="checkbox" data-hw="${esc(h.id)}" ${selected(h.id) ? 'checked' : ''} />
        <span class="hw-name">${esc(h.name)}</span>
        <span class="hw-meta">${esc(h.vendor)} · ${esc(h.architecture)} · ${F.num(h.memory_gb)} GB · ${esc(String(h.launch_date).slice(0, 4))}</span></label>
        <span class="price"><label class="visually-hidden" for="price-${esc(h.id)}">Price of ${esc(h.name)} in US dollars per hour</label>$<input type="number" min="0" step="0.01" id="price-${esc(h.id)}" data-price="${esc(h.id)}" value="${value}" placeholder="?" class="${edited ? 'edited' : ''}" title="${title}" />/h</span>
        ${sourcesList(h)}
      </div>`;
      })
      .join('') || '<p class="zoo-empty">No accelerator matches these filters.</p>';
  const total = meta.hardware.length;
  const count = state.hw == null ? total : state.hw.length;
  $('hw-count').textContent = `${count} of ${total} selected${state.custom.length ? ` + ${state.custom.length} custom` : ''}${shown.length < total ? ` · ${shown.length} shown` : ''}`;
}

export function bind(ctx) {
  const { $, meta } = ctx;
  const all = () => meta.hardware.map((h) => h.id);
  const setSelection = (ids) => {
    const set = new Set(ids);
    ctx.update({ hw: all().every((id) => set.has(id)) ? null : all().filter((id) => set.has(id)) });
  };
  const current = () => ctx.state.hw ?? all();
  for (const id of ['hw-search', 'hw-vendor', 'hw-memory', 'hw-since']) $(id).addEventListener('input', () => render(ctx.state, ctx));
  $('hw-list').addEventListener('change', (e) => {
    const id = e.target.dataset.hw;
    if (!id) return;
    setSelection(e.target.checked ? [...current(), id] : current().filter((x) => x !== id));
  });
  $('hw-list').addEventListener('input', (e) => {
    const id = e.target.dataset.price;
    if (!id) return;
    const prices = { ...ctx.state.prices };
    const text = e.target.value.trim();
    const v = Number(text);
    if (text === '') delete prices[id];
    else if (!(Number.isFinite(v) && v >= 0)) return e.target.setAttribute('aria-invalid', 'true');
    else prices[id] = v;
    e.target.removeAttribute('aria-invalid');
    e.target.classList.toggle('edited', Object.hasOwn(prices, id));
    ctx.update({ prices }, { compute: false });
  });
  // A cleared price shows the catalogue's again once the field is left. Only that field changes: rebuilding
  // the list here would destroy the element focus is moving to (Tab would fall back to the page's top).
  $('hw-list').addEventListener('focusout', (e) => {
    const h = meta.hardwareById.get(e.target.dataset.price);
    if (!h || Object.hasOwn(ctx.state.prices, h.id)) return;
    const { value, title } = priceField(ctx.state, h);
    e.target.value = value;
    e.target.title = title;
    e.target.removeAttribute('aria-invalid');
  });
  const shownIds = () => visibleHardware(ctx).map((h) => h.id);
  $('hw-select-shown').addEventListener('click', () => setSelection([...current(), ...shownIds()]));
  $('hw-clear-shown').addEventListener('click', () => {
    const hide = new Set(shownIds());
    setSelection(current().filter((id) => !hide.has(id)));
  });
  $('hw-all').addEventListener('click', () => {
    $('hw-search').value = '';
    for (const id of ['hw-vendor', 'hw-memory', 'hw-since']) $(id).selectedIndex = 0;
    setSelection(all());
  });
}
