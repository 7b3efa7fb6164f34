// "Describe your own accelerator": a spec sheet with plain numbers, as the API's `custom_hardware` takes it,
// saved in localStorage and carried in the URL.
import * as F from '../format.js';

const { esc } = F;
export const CUSTOM_KEY = 'prenet.custom-hardware';
const FIELDS = ['c-name', 'c-fp32', 'c-bf16', 'c-mem', 'c-bw', 'c-sms', 'c-clock', 'c-l2', 'c-tdp', 'c-limit', 'c-price'];

export const reads = ['custom'];

let editing = null; // the sheet being edited, or null when the form adds one

// The form's input for each field of the sheet the API names in its errors (hardware/spec.cpp's checks).
const INPUT_OF = { fp32: 'c-fp32', bf16: 'c-bf16', fp16: 'c-bf16', peak_tflops: 'c-fp32', capacity_gb: 'c-mem', bandwidth_gbps: 'c-bw', compute_units: 'c-sms', boost_clock_mhz: 'c-clock', l2_cache_mb: 'c-l2', tdp_w: 'c-tdp', limit_w: 'c-limit', usd_per_hour: 'c-price' };

// The sheet the form describes, as typed: the numbers are the API's to check (checkSheet), not the page's.
function sheetFromForm(state, { $, meta }) {
  const v = (id) => {
    const t = $(id).value.trim();
    return t === '' ? undefined : Number(t);
  };
  const name = $('c-name').value.trim();
  for (const id of FIELDS) $(id).removeAttribute('aria-invalid');
  if (!name) {
    $('c-name').setAttribute('aria-invalid', 'true');
    return { error: 'Please give a name.' };
  }
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'gpu';
  const taken = new Set([...meta.hardware.map((h) => h.id), ...state.custom.filter((c) => c !== editing).map((c) => c.id)]);
  let id = `custom-${slug}`;
  for (let i = 2; taken.has(id); i++) id = `custom-${slug}-${i}`;
  // JSON.stringify leaves out the fields left blank (undefined).
  const sheet = {
    id,
    name,
    vendor: 'custom',
    kind: 'gpu',
    peak_tflops: { fp32: v('c-fp32'), bf16: v('c-bf16'), fp16: v('c-bf16') },
    memory: { capacity_gb: v('c-mem'), bandwidth_gbps: v('c-bw') },
    compute: { compute_units: v('c-sms'), boost_clock_mhz: v('c-clock'), l2_cache_mb: v('c-l2') },
    power: { tdp_w: v('c-tdp'), limit_w: v('c-limit') },
  };
  if (v('c-price') !== undefined) sheet.prices = { cloud: [{ usd_per_hour: v('c-price'), provider: 'entered on this page' }] };
  const typed = JSON.parse(JSON.stringify(sheet));
  for (const [key, value] of Object.entries(typed)) if (typeof value === 'object' && !Object.keys(value).length) delete typed[key];
  return { sheet: typed };
}

/** The API's verdict on a sheet ({"command": "hardware", "custom_hardware": [sheet]}): null, or its error marked on its input. */
async function checkSheet(sheet, { $, client }) {
  const { error } = await client.call({ command: 'hardware', custom_hardware: [sheet] });
  if (!error) return null;
  const key = /'([a-z_0-9]+)'/.exec(error.message ?? '')?.[1];
  if (INPUT_OF[key]) $(INPUT_OF[key]).setAttribute('aria-invalid', 'true');
  return String(error.message ?? error).replace(/^custom hardware spec: /, '');
}

function fillForm(sheet, { $ }) {
  const put = (id, value) => ($(id).value = value ?? '');
  put('c-name', sheet?.name);
  put('c-fp32', sheet?.peak_tflops?.fp32);
  put('c-bf16', sheet?.peak_tflops?.bf16 ?? sheet?.peak_tflops?.fp16);
  put('c-mem', sheet?.memory?.capacity_gb);
  put('c-bw', sheet?.memory?.bandwidth_gbps);
  put('c-sms', sheet?.compute?.compute_units);
  put('c-clock', sheet?.compute?.boost_clock_mhz);
  put('c-l2', sheet?.compute?.l2_cache_mb);
  put('c-tdp', sheet?.power?.tdp_w);
  put('c-limit', sheet?.power?.limit_w);
  put('c-price', sheet?.prices?.cloud?.[0]?.usd_per_hour);
}

function save(list) {
  try {
    localStorage.setItem(CUSTOM_KEY, JSON.stringify(list));
  } catch {
    /* storage full or disabled: the sheets still live in the URL */
  }
}

/** The sheets saved in this browser ([] when none or unreadable). */
export function saved() {
  try {
    const list = JSON.parse(localStorage.getItem(CUSTOM_KEY) ?? '[]');
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

export function render(state, { $ }) {
  $('custom-list').innerHTML = state.custom
    .map(
      (c, i) => `<li><span><strong>${esc(c.name)}</strong> · ${F.num(c.memory?.capacity_gb)} GB · ${F.num(c.memory?.bandwidth_gbps)} GB/s</span>
      <button type="button" class="small" data-edit-custom="${i}">Edit</button>
      <button type="button" class="small" data-remove-custom="${i}" aria-label="Remove ${esc(c.name)}">Remove</button></li>`,
    )
    .join('');
}

export function bind(ctx) {
  const { $ } = ctx;
  const stopEditing = () => {
    editing = null;
    fillForm(null, ctx);
    $('c-save').textContent = 'Add accelerator';
    $('c-cancel').hidden = true;
  };
  $('custom-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const { sheet, error } = sheetFromForm(ctx.state, ctx);
    const problem = error ?? (await checkSheet(sheet, ctx));
    $('c-error').textContent = problem ?? '';
    if (problem) return;
    const state = ctx.state;
    const custom = editing ? state.custom.map((c) => (c === editing ? sheet : c)) : [...state.custom, sheet];
    stopEditing();
    save(custom);
    ctx.update({ custom }, { compute: 'now' });
  });
  $('c-cancel').addEventListener('click', stopEditing);
  $('custom-list').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.removeCustom !== undefined) {
      const custom = ctx.state.custom.filter((_, i) => i !== Number(b.dataset.removeCustom));
      save(custom);
      ctx.update({ custom }, { compute: 'now' });
    } else if (b.dataset.editCustom !== undefined) {
      editing = ctx.state.custom[Number(b.dataset.editCustom)];
      fillForm(editing, ctx);
      $('c-save').textContent = 'Save changes';
      $('c-cancel').hidden = false;
      $('c-name').focus();
    }
  });
}
