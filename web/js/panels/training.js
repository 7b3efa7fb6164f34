// Panel 2, training: batch, sequence length or image size, precision, optimizer, the training budget
// (tokens, or samples × epochs) and, under "More training options", the rest of the run's settings.
import * as S from '../state.js';

export const reads = ['source', 'model', 'batch', 'seq', 'image', 'precision', 'optimizer', 'tokens', 'samples', 'epochs',
  'grad_accum', 'optimizer_impl', 'mixed', 'input_samples_per_s', 'price_per_hour', 'checkpointing', '@meta', '@features', '@predict'];

// Number fields: which values each accepts (the API checks again, and names the field when it disagrees).
const NUMBERS = {
  batch: { optional: false },
  seq: {},
  image: {},
  tokens: { integer: false },
  samples: {},
  epochs: { integer: false },
  grad_accum: {},
  input_samples_per_s: { integer: false },
  price_per_hour: { integer: false, zero: true },
};
const CHOICES = ['precision', 'optimizer', 'optimizer_impl', 'mixed'];

const zooEntry = (state, { meta }) => (state.source === 'zoo' ? meta.zooById.get(state.model) : null);

/** Whether the model counts tokens: the zoo says so, else the last `features` reply, else a guess from the document. */
export function languageModel(state, ctx) {
  const z = zooEntry(state, ctx);
  if (z) return z.default_seq != null;
  const f = ctx.last.features?.settings;
  if (f) return f.seq != null;
  return state.doc ? Boolean(state.doc.input?.tokens != null || (state.doc.model_type && state.doc.model_type !== 'vit')) : true;
}

function syncSizeFields(state, ctx) {
  const { $ } = ctx;
  const z = zooEntry(state, ctx);
  const f = ctx.last.features?.settings;
  const language = languageModel(state, ctx);
  const vision = z ? z.default_image != null : f ? f.image != null : false;
  $('seq-field').hidden = !language;
  $('image-field').hidden = !vision || language;
  $('seq').placeholder = String(z?.default_seq ?? f?.seq ?? '');
  $('image').placeholder = String(z?.default_image ?? f?.image ?? '');
  const tokens = language && (state.tokens != null || state.samples == null);
  $('budget-kind').querySelector('option[value=tokens]').disabled = !language;
  $('budget-kind').value = tokens ? 'tokens' : 'samples';
  $('tokens-field').hidden = !tokens;
  $('samples-field').hidden = tokens;
  $('epochs-field').hidden = tokens;
  $('tokens').placeholder = String(S.DEFAULT_TOKENS);
  $('samples').placeholder = String(S.DEFAULT_SAMPLES);
  $('epochs').placeholder = '1';
}

export function render(state, ctx) {
  const { $ } = ctx;
  for (const id of [...Object.keys(NUMBERS), ...CHOICES]) {
    const el = $(id);
    // The field being typed in keeps its text (and its own validity mark).
    if (document.activeElement === el) continue;
    el.value = state[id] ?? '';
    if (!el.dataset.markedByApi) el.removeAttribute('aria-invalid');
  }
  $('checkpointing').checked = state.checkpointing;
  syncSizeFields(state, ctx);
}

/** Reads a positive number field; marks it invalid (and returns undefined) when it is not one. */
function readNumber(el, { integer = true, optional = true, zero = false } = {}) {
  const text = el.value.trim();
  if (text === '') {
    el.setAttribute('aria-invalid', String(!optional));
    return optional ? null : undefined;
  }
  const v = Number(text);
  const ok = Number.isFinite(v) && (v > 0 || (zero && v === 0)) && (!integer || Number.isInteger(v));
  el.setAttribute('aria-invalid', String(!ok));
  return ok ? v : undefined;
}

export function bind(ctx) {
  const { $ } = ctx;
  for (const [id, options] of Object.entries(NUMBERS))
    $(id).addEventListener('input', (event) => {
      const v = readNumber(event.target, options);
      if (v !== undefined) ctx.update({ [id]: v });
    });
  for (const id of CHOICES) $(id).addEventListener('change', (e) => ctx.update({ [id]: e.target.value }, { compute: 'now' }));
  $('checkpointing').addEventListener('change', (e) => ctx.update({ checkpointing: e.target.checked }, { compute: 'now' }));
  $('budget-kind').addEventListener('change', (e) => {
    if (e.target.value === 'tokens') ctx.update({ tokens: S.DEFAULT_TOKENS, samples: null, epochs: null }, { compute: 'now' });
    else ctx.update({ tokens: null, samples: S.DEFAULT_SAMPLES, epochs: 1 }, { compute: 'now' });
  });
  $('train-form').addEventListener('submit', (e) => e.preventDefault());
}
