// Panel 2, training. Its fields are the option table's rows whose `page` is "training" ({"command":
// "options"}), built once when the table arrives: a number field for count/number rows (range and step
// from the row), a select for choice rows, a checkbox for flags; labelled, with the row's unit and help;
// input id = data-option = the row's name. Rows marked `advanced` go under "More training options". The
// page adds one thing around the tokens/samples/epochs rows: which budget to use (tokens or samples × epochs).
import * as F from '../format.js';
import * as S from '../state.js';

const { esc } = F;
const BUDGET = new Set(['tokens', 'samples', 'epochs']);

export const reads = ['*'];

let built = null; // the table the form was built for

function field(row) {
  const id = esc(row.name);
  const unit = row.unit ? ` <small>${esc(row.unit)}</small>` : '';
  const help = row.help ? ` title="${esc(row.help)}"` : '';
  const data = `id="${id}" name="${id}" data-option="${id}"${help}`;
  if (row.type === 'flag')
    return `<label class="check" for="${id}" id="${id}-field"><input type="checkbox" ${data} /><span>${esc(row.label)}${unit}</span></label>`;
  let control;
  if (row.type === 'choice') {
    const blank = row.default == null ? `<option value="">default${row.default_text ? ` (${esc(row.default_text)})` : ''}</option>` : '';
    control = `<select ${data}>${blank}${(row.choices ?? []).map((c) => `<option value="${esc(c)}">${esc(row.choice_labels?.[c] ?? c)}</option>`).join('')}</select>`;
  } else if (row.type === 'text') {
    control = `<input type="text" ${data} placeholder="${esc(row.default_text ?? '')}" spellcheck="false" />`;
  } else {
    const integer = row.integer || row.type === 'count';
    const attrs = [
      row.min != null ? `min="${row.min}"` : '',
      row.max != null ? `max="${row.max}"` : '',
      `step="${integer ? 1 : 'any'}"`,
      integer ? 'inputmode="numeric"' : 'inputmode="decimal"',
    ].join(' ');
    control = `<input type="number" ${data} ${attrs} />`;
  }
  return `<label class="field" for="${id}" id="${id}-field"><span>${esc(row.label)}${unit}</span>${control}</label>`;
}

function build(table, { $ }) {
  built = table;
  const rows = table.training;
  const main = rows.filter((r) => !r.advanced && !BUDGET.has(r.name));
  const budget = rows.filter((r) => BUDGET.has(r.name));
  const more = rows.filter((r) => r.advanced && !BUDGET.has(r.name));
  $('train-form').innerHTML = `${main.map(field).join('')}
    ${budget.length ? `<fieldset class="budget"><legend>How much to train</legend><div class="budget-row">
      <label class="field" for="budget-kind"><span>Measured in</span>
        <select id="budget-kind"><option value="tokens">tokens</option><option value="samples">samples × epochs</option></select></label>
      ${budget.map(field).join('')}</div></fieldset>` : ''}
    ${more.length ? `<details class="more"><summary>More training options</summary><div class="grid-form">${more.map(field).join('')}</div></details>` : ''}`;
}

const zooEntry = (state, { meta }) => (state.source === 'zoo' ? meta.zooById.get(state.model) : null);

export function render(state, ctx) {
  const { $, last, table } = ctx;
  if (!table) return;
  if (built !== table) build(table, ctx);
  const z = zooEntry(state, ctx);
  const settings = last.predict?.settings ?? last.features?.settings ?? {};
  for (const row of table.training) {
    const el = $(row.name);
    if (!el) continue;
    const v = S.effective(state, row);
    // The field being typed in keeps its text (and its own validity mark).
    if (document.activeElement !== el) {
      if (row.type === 'flag') el.checked = v === true;
      else if (row.type === 'choice') el.value = v ?? '';
      else el.value = state[row.name] ?? '';
      if (!el.dataset.markedByApi) el.removeAttribute('aria-invalid');
    }
    if (row.type === 'count' || row.type === 'number') el.placeholder = String(S.PAGE_DEFAULTS[row.name] ?? row.default_text ?? '');
    // Rows that apply only with another row's value (the LoRA rows with LoRA or QLoRA) are hidden otherwise.
    const wrapper = $(`${row.name}-field`);
    if (wrapper && S.followsFinetune(row)) wrapper.hidden = !S.applies(state, row, table);
  }
  // Sequence length for language models, image size for vision models: the model's own as placeholder.
  const language = last.language;
  const vision = z ? z.default_image != null : settings.image != null;
  const seq = $('seq-field');
  const image = $('image-field');
  if (seq) seq.hidden = !language;
  if (image) image.hidden = !vision || language;
  if ($('seq')) $('seq').placeholder = String(z?.default_seq ?? settings.seq ?? $('seq').placeholder);
  if ($('image')) $('image').placeholder = String(z?.default_image ?? settings.image ?? $('image').placeholder);
  // The budget: what the page chose, else the one the API uses for this model (the reply says which).
  const kind = $('budget-kind');
  if (kind) {
    const shown = state.budget || (language ? 'tokens' : 'samples');
    kind.querySelector('option[value=tokens]').disabled = !language && state.budget !== 'tokens';
    kind.value = shown;
    for (const name of BUDGET) if ($(`${name}-field`)) $(`${name}-field`).hidden = (name === 'tokens') !== (shown === 'tokens');
  }
}

/** The value a change stores: null when it is the default anyway (so links stay short). */
function stored(row, value) {
  if (value == null) return null;
  return value === (S.PAGE_DEFAULTS[row.name] ?? row.default ?? null) && row.type !== 'count' && row.type !== 'number' ? null : value;
}

export function bind(ctx) {
  const form = ctx.$('train-form');
  const rowOf = (el) => ctx.table?.byName.get(el.dataset.option);
  form.addEventListener('input', (e) => {
    const row = rowOf(e.target);
    if (!row || (row.type !== 'count' && row.type !== 'number' && row.type !== 'text')) return;
    const { value, error } = S.parseValue(row, e.target.value);
    e.target.setAttribute('aria-invalid', String(Boolean(error)));
    e.target.dataset.markedByApi = '';
    if (!error) ctx.update({ [row.name]: value });
  });
  form.addEventListener('change', (e) => {
    if (e.target.id === 'budget-kind') return ctx.update({ budget: e.target.value }, { compute: 'now' });
    const row = rowOf(e.target);
    if (!row) return;
    if (row.type === 'flag') ctx.update({ [row.name]: e.target.checked ? true : row.default === true ? false : null }, { compute: 'now' });
    else if (row.type === 'choice') ctx.update({ [row.name]: stored(row, e.target.value || null) }, { compute: 'now' });
  });
  form.addEventListener('submit', (e) => e.preventDefault());
}
