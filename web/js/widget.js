// The embeddable widget: widget.html?model=gpt2&hardware=a100-sxm4-80gb,h100-sxm5-80gb&batch=8&precision=bf16&gpus=8
// (any of the page's URL keys: the option table's `url` column, e.g. seq, image, optimizer, tokens, samples,
// epochs, gpus, gpn; hardware defaults to all) renders a compact table and says what budget its time and cost
// assume. An attribute it cannot read is reported, not replaced by a default; errors are in its own words.
// Embed it with an iframe (it posts its height to the parent page: {type: 'prenet-widget-size', height}) or
// with the script tag of embed.js; embed.html writes both snippets.
import { isCluster, mergeReplies, splitRequest } from './cluster.js';
import { createClient } from './client.js';
import * as F from './format.js';
import { buildRows } from './results/rows.js';
import { calibratedBadge, sortRows } from './results/table.js';
import { pickBest } from './results/verdict.js';
import * as S from './state.js';
import { budgetWords, plain, queryProblems, widgetMessage } from './widget-words.js';

const $ = (id) => document.getElementById(id);
const q = new URLSearchParams(location.search);
const client = createClient();
// The widget's own height, not the document's: that is at least the frame's, so a frame could never shrink.
function postSize() {
  const wrap = document.querySelector('.widget-wrap');
  const height = Math.ceil(wrap ? wrap.getBoundingClientRect().bottom + window.scrollY : document.documentElement.scrollHeight);
  if (window.parent !== window) window.parent.postMessage({ type: 'prenet-widget-size', height }, '*');
}

function fail(message) {
  $('w-busy').hidden = true;
  $('w-title').innerHTML = '<strong>PreNeT</strong> · no estimate';
  $('w-error').hidden = false;
  $('w-error').textContent = message;
  document.documentElement.dataset.ready = 'error';
  postSize();
}

async function stateFromQuery(table) {
  const hash = new URLSearchParams(q);
  hash.delete('hardware');
  const s = await S.fromHash(hash.toString(), table);
  const hw = q.get('hardware');
  if (hw && hw !== 'all') s.hw = S.hardwareIds(hw);
  return s;
}

async function fetchCalibration(value) {
  try {
    const response = await fetch(new URL(value, location.href), { credentials: 'same-origin' });
    if (!response.ok) return { problem: `HTTP ${response.status}` };
    const doc = JSON.parse(await response.text());
    const problem = S.calibrationProblem(doc);
    return problem ? { problem } : { doc };
  } catch (error) {
    return { problem: error.message ?? String(error) };
  }
}

async function predict(request, table) {
  if (!isCluster(request, table)) return client.call(request);
  const ids = request.hardware === 'all' ? ((await client.call({ command: 'hardware' })).doc.hardware ?? []).map((h) => h.id) : [];
  const chunks = splitRequest(request, ids);
  const parts = [];
  for (const chunk of chunks) parts.push(await client.call(chunk));
  return mergeReplies(parts, chunks);
}

async function main() {
  const options = await client.call({ command: 'options' });
  if (options.error) return fail(`The calculator could not start: ${plain(options.error.message)}`);
  const table = S.optionTable(options.doc);
  const problems = queryProblems(q, table);
  if (problems.length) return fail(`This widget's attributes are not valid, so it shows nothing: ${problems.join('; ')}.`);
  const state = await stateFromQuery(table);
  // A calibration (`prenet calibrate --out`, the page's export) on this site: every result on the accelerators it
  // names is corrected and marked; it travels on to the full calculator by the "Open" link.
  if (q.has('calibration')) {
    const { doc, problem } = await fetchCalibration(q.get('calibration'));
    if (problem) return fail(`This widget's calibration (${q.get('calibration')}) cannot be used: ${problem}.`);
    state.calibration = doc;
    state.shareCal = true;
  }
  $('w-open').href = `index.html${await S.toHash(state, table)}`;
  const request = S.predictRequest(state, table);
  const [reply, hardware] = await Promise.all([predict(request, table), client.call({ command: 'hardware' })]);
  if (reply.error) return fail(widgetMessage(reply.error, q));
  const doc = reply.doc;
  const language = doc.model?.tokens_per_sample > 0;
  const catalogue = new Map((hardware.doc.hardware ?? []).map((h) => [h.id, h]));
  const rows = sortRows(buildRows(doc, { hardware: catalogue }), 'step', 1);
  const { best } = pickBest(rows);
  const s = doc.settings;
  const what = s.seq != null ? `seq ${s.seq}` : s.image != null ? `${s.image} px` : '';
  const devices = s.devices > 1 ? ` · ${F.integer(s.devices)} devices each` : '';
  $('w-title').innerHTML = `<strong>${F.esc(doc.model.name)}</strong> · ${F.count(doc.model.params)} params · batch ${F.esc(s.batch)}${what ? ` · ${what}` : ''} · ${F.esc(s.precision)} · ${F.esc(s.optimizer)}${devices}`;
  const budget = budgetWords(doc);
  $('w-budget').textContent = budget ? `Time to train and cost are for ${budget}${s.price_per_hour != null ? ` at $${s.price_per_hour}/h` : ' at each accelerator’s cheapest cloud price'}.` : '';
  // Each cell carries its column's name (data-label): narrow cards show it above the number.
  const rate = language ? 'Tokens/s' : 'Samples/s';
  $('w-table').innerHTML = `<caption class="visually-hidden">Predicted training step per accelerator</caption>
    <thead><tr><th scope="col">Accelerator</th><th scope="col">Memory</th><th scope="col">Step</th><th scope="col">${rate}</th><th scope="col">Time to train</th><th scope="col">Cost</th></tr></thead>
    <tbody>${rows
      .map(
        (r) => `<tr class="${r.id === best?.id ? 'best' : ''} ${r.fits ? '' : 'nofit'}"><th scope="row">${F.esc(r.name)}${r.id === best?.id ? '<span class="badge best">best</span>' : ''}${calibratedBadge(r)}</th>
        <td data-label="Memory">${F.gib(r.peak)} ${r.fits ? '<span class="fits">fits</span>' : '<span class="nofit-label">too big</span>'}</td>
        <td data-label="Step">${F.ms(r.step)}</td><td data-label="${rate}">${F.si(language ? r.tokensPerS : r.samplesPerS)}</td>
        <td data-label="Time to train">${F.hours(r.hours)}</td><td data-label="Cost">${F.usd(r.cost)}</td></tr>`,
      )
      .join('')}</tbody>`;
  $('w-busy').hidden = true;
  document.documentElement.dataset.ready = 'true';
  postSize();
}

if (typeof document !== 'undefined') {
  main().catch((error) => fail(`The widget failed: ${error.message ?? error}`));
  new ResizeObserver(postSize).observe(document.body);
}
