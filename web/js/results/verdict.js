// The verdict above the table: the best choice and why, or what would make anything fit.
import * as F from '../format.js';
import { changesLead, fitSuggestions, suggestionButtons } from './fixes.js';

const { esc, isNum } = F;

/** Best choice: the cheapest accelerator that fits; without prices, the fastest that fits. */
export function pickBest(rows) {
  const fitting = rows.filter((r) => r.fits && isNum(r.step));
  const by = (f) => fitting.filter((r) => isNum(f(r))).sort((a, b) => f(a) - f(b))[0] ?? null;
  const fastest = by((r) => r.step);
  const cheapest = by((r) => r.cost);
  return { best: cheapest ?? fastest, fastest, cheapest, fitting: fitting.length };
}

export function verdictHtml(rows, pick, options = {}) {
  if (!rows.length) return '';
  const nofit = rows.length - pick.fitting;
  const tail = nofit ? ` ${nofit} of ${rows.length} cannot hold this training step in memory.` : '';
  if (!pick.best) {
    const list = fitSuggestions(rows, options);
    const what = rows.length === 1 ? `${esc(rows[0].name)} cannot` : `None of the ${rows.length} accelerators can`;
    return `<strong>Nothing fits with these settings.</strong> ${what} hold this training step in memory. ${
      list.length ? `${changesLead(list)}${suggestionButtons(list)}` : 'Try a smaller micro-batch, activation checkpointing, more devices or a lower precision.'
    }`;
  }
  const b = pick.best;
  const time = isNum(b.hours) ? `trains in <strong>${F.hours(b.hours)}</strong>` : `runs a step in <strong>${F.ms(b.step)}</strong>`;
  const cost = isNum(b.cost) ? ` for <strong>${F.usd(b.cost)}</strong>` : '';
  const why = pick.cheapest ? 'the cheapest that fits' : 'the fastest that fits (no prices known)';
  const fast =
    pick.fastest && pick.fastest.id !== b.id
      ? ` Fastest: <strong>${esc(pick.fastest.name)}</strong>${isNum(pick.fastest.hours) ? `, ${F.hours(pick.fastest.hours)}` : ''}${isNum(pick.fastest.cost) ? ` for ${F.usd(pick.fastest.cost)}` : ''}.`
      : '';
  const on = b.devices > 1 ? ` on ${F.integer(b.devices)} devices` : '';
  // The best choice's warnings say when its time misleads (a batch no published run uses, a run under one step).
  const warnings = (b.warnings ?? []).map((w) => `<span class="verdict-warning">Note: ${esc(F.pageWords(w, options.labels))}.</span>`).join(' ');
  return `Best choice: <strong>${esc(b.name)}</strong>${on} ${time}${cost} (${why}).${fast}${tail}${warnings ? ` ${warnings}` : ''}`;
}
