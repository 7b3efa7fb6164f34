// Panels 2 and 3, training and cluster. Their fields are the option table's rows whose `page` is "training"
// or "cluster" ({"command": "options"}), built once when the table arrives: a number field for count/number
// rows (range and step from the row), a select for choice rows, a checkbox for flags, a text field for text
// rows; labelled, with the row's unit and help; input id = data-option = the row's name; beside each its
// message when the value is invalid (ctx.invalid, which the results panel names too). Rows marked `advanced`
// go under "More training options" / "Layout". The page adds one thing around the tokens/samples/epochs
// rows: which budget to use (tokens or samples × epochs).
import * as F from '../format.js';
import * as S from '../state.js';

const { esc } = F;
const BUDGET = new Set(['tokens', 'samples', 'epochs']);

export const reads = ['*'];

let built = null; // the table the form was built for

// A flag-with-words row's select value for a state value: true is the bare flag (the word the option table says it
// means, `switch_bare`, else 'on'), a word itself, anything else the default.
const flagWord = (row, v) => (v === true ? (row.switch_bare ?? 'on') : typeof v === 'string' ? v : '');

// A select's blank entry: the row's default, in the option table's words.
const defaultOption = (row) => `<option value="">default${row.default_text ? ` (${esc(row.default_text)})` : ''}</option>`;

function fieldHtml(row, labels) {
  const id = esc(row.name);
  const unit = row.unit ? ` <small>${esc(row.unit)}</small>` : '';
  const help = row.help ? ` title="${esc(F.pageWords(row.help, labels))}"` : '';
  const data = `id="${id}" name="${id}" data-option="${id}" aria-describedby="${id}-error ${id}-default"${help}`;
  // A default too long for a placeholder is written under the field instead (render decides).
  const message = `<small class="field-default" id="${id}-default" hidden></small><span class="field-error" id="${id}-error" aria-live="polite"></span>`;
  if (row.type === 'flag' && !row.switch_values?.length)
    return `<label class="check" for="${id}" id="${id}-field"><input type="checkbox" ${data} /><span>${esc(row.label)}${unit}</span>${message}</label>`;
  let control;
  if (row.type === 'flag') {
    // A flag that also takes words (checkpointing's kinds, sequence parallelism's off): a select of the default,
    // the bare flag ('on') unless a word names it (checkpointing's full: `switch_bare`), and the words.
    const words = row.switch_values;
    const options = [...(row.switch_bare ? [] : ['on']), ...words];
    control = `<select ${data}>${defaultOption(row)}${options.map((w) => `<option value="${esc(w)}">${esc(w)}</option>`).join('')}</select>`;
  } else if (row.type === 'choice') {
    const blank = row.default == null ? defaultOption(row) : '';
    control = `<select ${data}>${blank}${(row.choices ?? []).map((c) => `<option value="${esc(c)}">${esc(row.choice_labels?.[c] ?? c)}</option>`).join('')}</select>`;
  } else if (row.type === 'text') {
    control = `<input type="text" ${data} placeholder="${esc(row.default_text ?? '')}" autocomplete="off" spellcheck="false" />`;
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
  return `<label class="field" for="${id}" id="${id}-field"><span>${esc(row.label)}${unit}</span>${control}${message}</label>`;
}

// Placeholders longer than this run out of a field of the side panel (about 300 px at 1280 px, 14 px text).
const PLACEHOLDER_CHARS = 30;

/** A blank field's default: its placeholder, or, when that would be cut off, a line under the field. */
function showDefault(el, line, text) {
  const long = text.length > PLACEHOLDER_CHARS;
  el.placeholder = long ? 'default (below)' : text;
  if (!line) return;
  line.hidden = !long;
  if (line.textContent !== (long ? `Blank: ${text}` : '')) line.textContent = long ? `Blank: ${text}` : '';
}

/** A field's message: "Batch size must be at least 1". */
export const fieldMessage = (row, error) => `${row.label} must be ${error}`;

function build(table, { $ }) {
  built = table;
  // The help texts name other options by their flags: the page names the fields (“Gradient accumulation”).
  const labels = new Map(table.rows.filter((r) => r.flag && r.label).map((r) => [r.flag, r.label]));
  const field = (row) => fieldHtml(row, labels);
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
  const cluster = table.cluster ?? [];
  const box = $('cluster-form');
  if (box)
    box.innerHTML = `${cluster.filter((r) => !r.advanced).map(field).join('')}
      ${cluster.some((r) => r.advanced) ? `<details class="more"><summary>Layout <small>(blank: searched, the fastest that fits)</small></summary><div class="grid-form">${cluster.filter((r) => r.advanced).map(field).join('')}</div></details>` : ''}`;
}

const zooEntry = (state, { meta }) => (state.source === 'zoo' ? meta.zooById.get(state.model) : null);

export function render(state, ctx) {
  const { $, last, table } = ctx;
  if (!table) return;
  if (built !== table) build(table, ctx);
  const z = zooEntry(state, ctx);
  const settings = last.predict?.settings ?? last.features?.settings ?? {};
  for (const row of table.fields) {
    const el = $(row.name);
    if (!el) continue;
    const v = S.effective(state, row, table);
    const invalid = ctx.invalid?.get(row.name);
    // The field being typed in keeps its text (and its own validity mark); so does one holding an invalid value.
    if (document.activeElement !== el && !invalid) {
      if (row.type === 'flag' && row.switch_values?.length) el.value = flagWord(row, v);
      else if (row.type === 'flag') el.checked = v === true;
      else if (row.type === 'choice') el.value = v ?? '';
      else el.value = state[row.name] ?? '';
      if (!el.dataset.markedByApi) el.removeAttribute('aria-invalid');
    }
    // The page's own refusal of the text, else the API's of the value (a batch too large for the model).
    const api = last.predictError?.field === row.name ? last.predictError.message : '';
    const message = $(`${row.name}-error`);
    if (message && message.textContent !== (invalid?.message ?? api)) message.textContent = invalid?.message ?? api;
    if (row.type === 'count' || row.type === 'number')
      showDefault(el, $(`${row.name}-default`),
                  String(S.searched(state, row, table) ? row.cluster_default_text : (S.pageDefault(state, row, table) ?? row.default_text ?? '')));
    // Rows that apply only with other rows' values (the option table's applies_with and choice_with: the LoRA
    // rows with LoRA or QLoRA, the mixed-precision recipe with fp16 and bf16) are hidden otherwise.
    const wrapper = $(`${row.name}-field`);
    if (wrapper && S.conditional(row)) wrapper.hidden = !S.applies(state, row, table);
  }
  // Sequence length for language models, image size for vision models: the model's own as placeholder.
  const language = last.language;
  const vision = z ? z.default_image != null : settings.image != null;
  const seq = $('seq-field');
  const image = $('image-field');
  if (seq) seq.hidden = !language;
  if (image) image.hidden = !vision || language;
  // Whether a diffusion pipeline's frozen encoders run in every step: a field for the models the API says have them.
  if ($('encoders-field')) $('encoders-field').hidden = !(last.predict?.model ?? last.features)?.pipeline_encoders;
  // A fine-tune's blank sequence is the API's (at most 2,048 tokens: the seq row's default_text), which the
  // reply for these settings echoes; otherwise the model's own.
  const ft = table.byName.get('finetune');
  const fineTuning = ft && S.effective(state, ft, table) !== ft.default && settings.finetune === S.effective(state, ft, table);
  if ($('seq')) $('seq').placeholder = String((fineTuning ? settings.seq : null) ?? z?.default_seq ?? settings.seq ?? $('seq').placeholder);
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
  for (const id of ['train-form', 'cluster-form']) if (ctx.$(id)) bindForm(ctx.$(id), ctx);
}

function bindForm(form, ctx) {
  const rowOf = (el) => ctx.table?.byName.get(el.dataset.option);
  form.addEventListener('input', (e) => {
    const row = rowOf(e.target);
    if (!row || (row.type !== 'count' && row.type !== 'number' && row.type !== 'text')) return;
    // A number input reports an unparseable text ("1e", "--4") as '' with badInput set.
    const { value, error } = e.target.validity?.badInput ? { error: 'a number' } : S.parseValue(row, e.target.value);
    e.target.setAttribute('aria-invalid', String(Boolean(error)));
    e.target.dataset.markedByApi = '';
    if (error) {
      ctx.invalid.set(row.name, { label: row.label, message: fieldMessage(row, error), text: e.target.value });
      $message(row, ctx, fieldMessage(row, error));
      ctx.update({}, { compute: false, changed: ['@invalid'] });
      return;
    }
    const was = ctx.invalid.delete(row.name);
    $message(row, ctx, '');
    ctx.update({ [row.name]: value }, { changed: was ? ['@invalid'] : [] });
  });
  form.addEventListener('change', (e) => {
    if (e.target.id === 'budget-kind') return ctx.update({ budget: e.target.value }, { compute: 'now' });
    const row = rowOf(e.target);
    if (!row) return;
    if (row.type === 'flag' && row.switch_values?.length) {
      const w = e.target.value;
      ctx.update({ [row.name]: w === '' ? null : w === 'on' || w === row.switch_bare ? true : w }, { compute: 'now' });
    } else if (row.type === 'flag') ctx.update({ [row.name]: e.target.checked ? true : row.default === true ? false : null }, { compute: 'now' });
    else if (row.type === 'choice') ctx.update({ [row.name]: stored(row, e.target.value || null) }, { compute: 'now' });
  });
  form.addEventListener('submit', (e) => e.preventDefault());
}

function $message(row, ctx, text) {
  const el = ctx.$(`${row.name}-error`);
  if (el) el.textContent = text;
}
