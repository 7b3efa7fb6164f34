// The results table: its columns, their sorting, and the rows as HTML.
import { planText } from '../cluster.js';
import * as F from '../format.js';
import { fixes } from './fixes.js';
import { shortName } from './rows.js';

const { esc, isNum } = F;

// The table's columns, memory next to the name; `when` hides a column that would say nothing (MFU without a
// cluster's answer). GPU-hours are the time to train's second line on a cluster (on one device they are the
// same number, so not repeated).
export const COLUMNS = [
  { key: 'name', label: 'Accelerator', value: (r) => r.name.toLowerCase(), dir: 1 },
  { key: 'memory', label: 'Memory', unit: 'peak / capacity', value: (r) => (r.capacity ? r.peak / r.capacity : null), dir: 1 },
  { key: 'step', label: 'Step time', unit: 'per step', value: (r) => r.step, dir: 1 },
  { key: 'throughput', label: 'Throughput', value: (r) => r.samplesPerS, dir: -1 },
  { key: 'mfu', label: 'MFU', unit: 'TFLOP/s each', value: (r) => r.mfu, dir: -1, when: (rows) => rows.some((r) => isNum(r.mfu)) },
  { key: 'hours', label: 'Time to train', value: (r) => r.hours, dir: 1 },
  { key: 'cost', label: 'Cost', unit: 'at price / hour', value: (r) => r.cost, dir: 1 },
  { key: 'energy', label: 'Energy', unit: 'to train', value: (r) => r.energy, dir: 1 },
];

/** The columns shown for these rows. */
export const columnsFor = (rows) => COLUMNS.filter((c) => !c.when || c.when(rows));

/** The mark of a result corrected by the user's calibration, with how many measurements it rests on. */
export function calibratedBadge(r) {
  if (!r.calibrated) return '';
  const text = `Calibrated with ${r.calibrationRows == null ? 'your measurements' : `${r.calibrationRows} of your measurement${r.calibrationRows === 1 ? '' : 's'}`} on this accelerator (“Calibrate”)`;
  return `<span class="badge calibrated" title="${esc(text)}" aria-label="${esc(text)}">calibrated</span>`;
}

export function sortRows(rows, key, dir) {
  const col = COLUMNS.find((c) => c.key === key) ?? COLUMNS[1];
  return [...rows].sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    const xm = x == null || (typeof x === 'number' && !Number.isFinite(x));
    const ym = y == null || (typeof y === 'number' && !Number.isFinite(y));
    if (xm || ym) return xm === ym ? 0 : xm ? 1 : -1; // missing values last, whatever the direction
    if (x < y) return -dir;
    if (x > y) return dir;
    return 0;
  });
}

/** The marker of a row predicted at a fallback precision ('' otherwise): "as bf16", the reason in its tooltip. */
/** A device the API's `--framework auto` ran under another framework than the request's (`framework_chosen`) says which. */
export function frameworkBadge(row) {
  if (!row.frameworkChosen || !row.frameworkUsed) return '';
  const text = `${row.id}: predicted under ${row.frameworkUsed}, its usual framework (Training framework: auto)`;
  return `<span class="badge framework" title="${esc(text)}" aria-label="${esc(text)}">${esc(row.frameworkUsed)}</span>`;
}

export function precisionBadge(row) {
  const f = row.fallback;
  if (!f) return '';
  const text = `${row.id}: no ${String(f.requested).toUpperCase()} units, predicted as ${f.used}${f.reason ? ` (${f.reason})` : ''}`;
  return `<span class="badge fallback" title="${esc(text)}" aria-label="${esc(text)}">as ${esc(f.used)}</span>`;
}

/**
 * Bar widths and colours are data-width / data-color attributes in the HTML strings, set here through the
 * CSSOM once the HTML is on the page: the Content-Security-Policy (style-src 'self') blocks inline style attributes.
 */
export function applyStyles(root) {
  if (typeof root?.querySelectorAll !== 'function') return;
  for (const el of root.querySelectorAll('[data-width], [data-color]')) {
    if (el.dataset.width && /^\d+(\.\d+)?%$/.test(el.dataset.width)) el.style.width = el.dataset.width;
    if (el.dataset.color) el.style.background = el.dataset.color;
  }
}

export function renderTable(table, rows, { sort, dir, selected, best, fastest, language }) {
  const columns = columnsFor(rows);
  const head = columns.map((c) => {
    const label = c.key === 'throughput' ? `Throughput<span class="unit">${language ? 'tokens/s' : 'samples/s'}</span>` : `${c.label}${c.unit ? `<span class="unit">${c.unit}</span>` : ''}`;
    const aria = c.key === sort ? `aria-sort="${dir > 0 ? 'ascending' : 'descending'}"` : '';
    return `<th scope="col" data-col="${c.key}" ${aria}><button type="button" class="sort" data-sort="${c.key}">${label}</button></th>`;
  }).join('');
  const cells = {
    memory: (r) => {
      const share = r.capacity ? Math.min(1, r.peak / r.capacity) : 0;
      const advice = r.fits ? '' : fixes(r).map((f) => f.text).join('; ');
      return `<td data-col="memory" data-label="Memory">${F.num(r.peak / F.BYTES_PER_GIB)} / ${F.gib(r.capacity)}<span class="range">${r.devices > 1 ? 'each, ' : ''}${r.fits ? '<span class="fits">✓ fits</span>' : `<span class="nofit-label"${advice ? ` title="${esc(`Would fit with: ${advice}`)}"` : ''}>✗ does not fit</span>`}</span>
        <span class="membar ${r.fits ? '' : 'over'}" aria-hidden="true"><span data-width="${(share * 100).toFixed(1)}%"></span></span></td>`;
    },
    step: (r) => `<td data-col="step" data-label="Step time" data-value="${r.step}">${F.ms(r.step)}${isNum(r.low) && isNum(r.high) ? `<span class="range">${F.ms(r.low)} – ${F.ms(r.high)}</span>` : ''}</td>`,
    throughput: (r) => `<td data-col="throughput" data-label="Throughput">${language && isNum(r.tokensPerS) ? F.si(r.tokensPerS) : F.si(r.samplesPerS)}<span class="range">${language ? 'tokens/s' : 'samples/s'}</span></td>`,
    mfu: (r) => `<td data-col="mfu" data-label="MFU" data-value="${r.mfu ?? ''}">${isNum(r.mfu) ? `${(r.mfu * 100).toFixed(1)}%` : '—'}${isNum(r.tflops) ? `<span class="range">${F.num(r.tflops)} TFLOP/s</span>` : ''}</td>`,
    hours: (r) =>
      `<td data-col="hours" data-label="Time to train">${F.hours(r.hours)}${r.devices > 1 && isNum(r.gpuHours) ? `<span class="range" data-col="gpu_hours">${F.num(r.gpuHours)} GPU-hours</span>` : ''}</td>`,
    cost: (r) =>
      `<td data-col="cost" data-label="Cost">${F.usd(r.cost)}<span class="range">${r.price != null ? `at ${F.usd(r.price)}/h` : '<span title="no public price; set one in the accelerator list">no price</span>'}${r.priceEdited ? ' <span class="edited-mark" title="price edited on this page">✎ edited</span>' : ''}</span></td>`,
    energy: (r) => `<td data-col="energy" data-label="Energy">${F.kwh(r.energy)}</td>`,
  };
  const body = rows
    .map((r) => {
      const classes = [r.id === best?.id ? 'best' : '', r.fits ? '' : 'nofit', r.id === selected ? 'selected' : ''].filter(Boolean).join(' ');
      const badges = [
        r.id === best?.id ? '<span class="badge best">best choice</span>' : '',
        r.id === fastest?.id && fastest?.id !== best?.id ? '<span class="badge fast">fastest</span>' : '',
        r.custom ? '<span class="badge custom">custom</span>' : '',
        calibratedBadge(r),
        precisionBadge(r),
        frameworkBadge(r),
      ].join('');
      const plan = r.plan
        ? `<span class="plan"><span class="plan-text">${r.devices} × · ${esc(planText(r.plan))}</span>${r.plan.searched ? ` <button type="button" class="small link" data-pin-layout="${esc(r.id)}" title="Fix this layout in the cluster fields (then it is no longer searched)">Pin this layout</button>` : ''}</span>`
        : '';
      return `<tr class="${classes}" data-id="${esc(r.id)}">
        <th scope="row"><span class="vendor">${esc(r.vendor)}</span> <button type="button" class="hw-pick" data-pick="${esc(r.id)}" aria-pressed="${r.id === selected}" title="${esc(r.name)}">${esc(r.vendor === 'custom' ? r.name : shortName(r.name))}</button>${badges}${plan}</th>
        ${columns.slice(1).map((c) => cells[c.key](r)).join('')}
      </tr>`;
    })
    .join('');
  table.innerHTML = `<caption class="visually-hidden">Predicted training memory, step time, throughput, time to train, cost and energy per accelerator</caption>
    <thead><tr>${head}</tr></thead><tbody>${body}</tbody>`;
  applyStyles(table);
}
