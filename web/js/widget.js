// The embeddable widget: widget.html?model=gpt2&hardware=a100-sxm4-80gb,h100-sxm5-80gb&batch=8&precision=bf16
// (also seq, image, optimizer, tokens, samples, epochs; hardware defaults to all) renders a compact table.
// Embed it with an iframe; it posts its height to the parent page ({type: 'prenet-widget-size', height}).
import { createClient } from './client.js';
import * as F from './format.js';
import { buildRows, pickBest, sortRows } from './results.js';
import * as S from './state.js';

const $ = (id) => document.getElementById(id);
const q = new URLSearchParams(location.search);
const client = createClient();

// The query takes the page's URL keys (the option table's `url` column: batch, seq, image, precision,
// optimizer, tokens, samples, epochs, ...), plus model and hardware (a list of ids, or all).
async function stateFromQuery(table) {
  const hash = new URLSearchParams(q);
  hash.delete('hardware');
  const s = await S.fromHash(hash.toString(), table);
  const hw = q.get('hardware');
  if (hw && hw !== 'all') s.hw = S.hardwareIds(hw);
  return s;
}

function postSize() {
  if (window.parent !== window) window.parent.postMessage({ type: 'prenet-widget-size', height: document.documentElement.scrollHeight }, '*');
}

async function main() {
  const fail = (message) => {
    $('w-busy').hidden = true;
    $('w-error').hidden = false;
    $('w-error').textContent = message;
    postSize();
  };
  const options = await client.call({ command: 'options' });
  if (options.error) return fail(options.error.message);
  const table = S.optionTable(options.doc);
  const state = await stateFromQuery(table);
  $('w-open').href = `index.html${await S.toHash(state, table)}`;
  const request = S.predictRequest(state, table);
  const [reply, hardware] = await Promise.all([client.call(request), client.call({ command: 'hardware' })]);
  if (reply.error) return fail(reply.error.message);
  const language = reply.doc.model?.tokens_per_sample > 0;
  const catalogue = new Map((hardware.doc.hardware ?? []).map((h) => [h.id, h]));
  const rows = sortRows(buildRows(reply.doc, { hardware: catalogue, request }), 'step', 1);
  const { best } = pickBest(rows);
  const s = reply.doc.settings;
  const what = s.seq != null ? `seq ${s.seq}` : s.image != null ? `${s.image} px` : '';
  $('w-title').innerHTML = `<strong>${F.esc(reply.doc.model.name)}</strong> · ${F.count(reply.doc.model.params)} params · batch ${F.esc(s.batch)}${what ? ` · ${what}` : ''} · ${F.esc(s.precision)} · ${F.esc(s.optimizer)}`;
  $('w-table').innerHTML = `<caption class="visually-hidden">Predicted training step per accelerator</caption>
    <thead><tr><th scope="col">Accelerator</th><th scope="col">Step</th><th scope="col">${language ? 'Tokens/s' : 'Samples/s'}</th><th scope="col">Memory</th><th scope="col">Time to train</th><th scope="col">Cost</th></tr></thead>
    <tbody>${rows
      .map(
        (r) => `<tr class="${r.id === best?.id ? 'best' : ''} ${r.fits ? '' : 'nofit'}"><th scope="row">${F.esc(r.name)}${r.id === best?.id ? '<span class="badge best">best</span>' : ''}</th>
        <td>${F.ms(r.step)}</td><td>${F.si(language ? r.tokensPerS : r.samplesPerS)}</td>
        <td>${F.gb(r.peak)} ${r.fits ? '<span class="fits">fits</span>' : '<span class="nofit-label">too big</span>'}</td>
        <td>${F.hours(r.hours)}</td><td>${F.usd(r.cost)}</td></tr>`,
      )
      .join('')}</tbody>`;
  $('w-busy').hidden = true;
  document.documentElement.dataset.ready = 'true';
  postSize();
}

main().catch((error) => {
  $('w-error').hidden = false;
  $('w-error').textContent = `The calculator failed: ${error.message ?? error}`;
});
new ResizeObserver(postSize).observe(document.body);
