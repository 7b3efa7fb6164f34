// "Share and reuse": the link (the URL hash holds the whole state), CSV and JSON exports, the equivalent
// `prenet predict ... --json` command line with buttons to save the files it names, and the widget link.
import { neutralised, toCsv } from '../results/export.js';
import { budgetOf } from '../results/rows.js';
import * as F from '../format.js';
import * as S from '../state.js';
import { fromBase64, isOnnxDoc } from '../documents.js';
import { download } from '../files.js';

export const reads = ['*'];

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function render(state, { $, table, last }) {
  if (!table) return;
  $('cli').textContent = S.commandLine(state, table, budgetOf(last?.predict));
  const files = [];
  if (state.source !== 'zoo' && state.doc) files.push(`<button type="button" class="small" data-save-model>${F.esc(S.modelFile(state))}</button>`);
  for (const [i, c] of state.custom.entries()) files.push(`<button type="button" class="small" data-save-sheet="${i}">${F.esc(S.sheetFile(c))}</button>`);
  if (state.calibration) files.push(`<button type="button" class="small" data-save-calibration>${F.esc(S.CALIBRATION_FILE)}</button>`);
  const edited = Object.keys(state.prices).length;
  $('cli-files').innerHTML = [
    files.length ? `Save next to where you run it: ${files.join(' ')}` : '',
    edited ? 'Prices edited on this page are not part of the command: its costs use the catalogue prices.' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const w = new URLSearchParams();
  if (state.source === 'zoo') w.set('model', state.model);
  if (state.hw) w.set('hardware', state.hw.slice(0, 8).join(','));
  for (const key of ['batch', 'precision']) {
    const value = table.byName.has(key) ? S.effective(state, table.byName.get(key), table) : null;
    if (value != null) w.set(key, value);
  }
  $('widget-link').href = `widget.html?${w}`;
}

export function bind(ctx) {
  const { $ } = ctx;
  const flash = (text) => {
    $('share-status').textContent = text;
    setTimeout(() => ($('share-status').textContent = ''), 2500);
  };
  $('copy-link').addEventListener('click', async () => {
    await ctx.writeHash();
    flash((await copyText(location.href)) ? 'Link copied.' : 'Copy the address bar: it holds the whole state.');
  });
  $('copy-cli').addEventListener('click', async () => flash((await copyText($('cli').textContent)) ? 'Command copied.' : 'Select the command to copy it.'));
  $('download-csv').addEventListener('click', () => ctx.last.predict && download('prenet-results.csv', toCsv(ctx.last.rows, ctx.last.predict), 'text/csv'));
  $('download-json').addEventListener('click', () => {
    const { last, state } = ctx;
    if (!last.predict) return;
    // Names are the user's text (or a stranger's, from a link): formula-leading strings are neutralised.
    const doc = neutralised({ request: last.request, reply: last.predict, page: { prices: state.prices, url: location.href } });
    download('prenet-results.json', `${JSON.stringify(doc, null, 2)}\n`, 'application/json');
  });
  $('cli-files').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    const state = ctx.state;
    if (b.dataset.saveModel !== undefined) {
      // An ONNX file is saved as the file itself (the command line reads it so), any other model as its JSON.
      if (isOnnxDoc(state.doc)) download(S.modelFile(state), fromBase64(state.doc.onnx_base64), 'application/octet-stream');
      else download(S.modelFile(state), `${JSON.stringify(state.doc, null, 2)}\n`, 'application/json');
    }
    if (b.dataset.saveCalibration !== undefined && state.calibration)
      download(S.CALIBRATION_FILE, `${JSON.stringify(state.calibration, null, 2)}\n`, 'application/json');
    if (b.dataset.saveSheet !== undefined) {
      const sheet = state.custom[Number(b.dataset.saveSheet)];
      download(S.sheetFile(sheet), `${JSON.stringify(sheet, null, 2)}\n`, 'application/json');
    }
  });
}
