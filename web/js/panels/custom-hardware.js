// "Describe your own accelerator": a spec sheet with plain numbers, as the API's `custom_hardware` takes it,
// saved in localStorage and carried in the URL.
import * as F from '../format.js';

const { esc } = F;
export const CUSTOM_KEY = 'prenet.custom-hardware';
const FIELDS = ['c-name', 'c-fp32', 'c-bf16', 'c-mem', 'c-bw', 'c-sms', 'c-clock', 'c-l2', 'c-tdp', 'c-price'];

export const reads = ['custom'];

let editing = null; // the sheet being edited, or null when the form adds one

function sheetFromForm(state, { $, meta }) {
  const v = (id) => {
    const t = $(id).value.trim();
    return t === '' ? null : Number(t);
  };
  const name = $('c-name').value.trim();
  const errors = [];
  for (const id of FIELDS) $(id).removeAttribute('aria-invalid');
  const invalid = (id, message) => {
    $(id).setAttribute('aria-invalid', 'true');
    errors.push(message);
  };
  if (!name) invalid('c-name', 'a name');
  for (const id of FIELDS.slice(1)) if (v(id) != null && !(v(id) >= 0)) invalid(id, `${$(id).labels[0].querySelector('span').textContent.trim()}: a positive number`);
  if (!(v('c-mem') > 0)) invalid('c-mem', 'memory in GB');
  if (!(v('c-bw') > 0)) invalid('c-bw', 'bandwidth in GB/s');
  if (!(v('c-fp32') > 0) && !(v('c-bf16') > 0)) {
    invalid('c-fp32', 'FP32 or BF16 TFLOPS');
    $('c-bf16').setAttribute('aria-invalid', 'true');
  }
  if (errors.length) return { errors };
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'gpu';
  const taken = new Set([...meta.hardware.map((h) => h.id), ...state.custom.filter((c) => c !== editing).map((c) => c.id)]);
  let id = `custom-${slug}`;
  for (let i = 2; taken.has(id); i++) id = `custom-${slug}-${i}`;
  const peaks = {};
  if (v('c-fp32') > 0) peaks.fp32 = v('c-fp32');
  if (v('c-bf16') > 0) Object.assign(peaks, { bf16: v('c-bf16'), fp16: v('c-bf16') });
  const sheet = { id, name, vendor: 'custom', kind: 'gpu', peak_tflops: peaks, memory: { capacity_gb: v('c-mem'), bandwidth_gbps: v('c-bw') } };
  const compute = {};
  if (v('c-sms') > 0) compute.compute_units = v('c-sms');
  if (v('c-clock') > 0) compute.boost_clock_mhz = v('c-clock');
  if (v('c-l2') > 0) compute.l2_cache_mb = v('c-l2');
  if (Object.keys(compute).length) sheet.compute = compute;
  if (v('c-tdp') > 0) sheet.power = { tdp_w: v('c-tdp') };
  if (v('c-price') > 0) sheet.prices = { cloud: [{ usd_per_hour: v('c-price'), provider: 'entered on this page' }] };
  return { sheet };
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
  $('custom-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const state = ctx.state;
    const { sheet, errors } = sheetFromForm(state, ctx);
    if (errors) {
      $('c-error').textContent = `Please give ${errors.join(', ')}.`;
      return;
    }
    $('c-error').textContent = '';
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
