// embed.html: the widget's snippet generator. From a few choices it writes the script tag (embed.js) and the
// iframe with its resize listener, and previews the widget. The snippets are text only (shown, copied), never
// run on this page.
import { embedSnippets } from './snippets.js';

const $ = (id) => document.getElementById(id);

function choices() {
  const v = (id) => $(id).value.trim();
  return { model: v('e-model'), hardware: v('e-hardware'), gpus: v('e-gpus'), batch: v('e-batch'), precision: v('e-precision'), tokens: v('e-tokens') };
}

function render() {
  const host = $('e-host').value.trim() || new URL('.', location.href).href;
  const { script, iframe, src } = embedSnippets(host, choices());
  $('snippet-script').textContent = script;
  $('snippet-iframe').textContent = iframe;
  const local = new URL(new URL(src).search ? `widget.html${new URL(src).search}` : 'widget.html', location.href).href;
  if ($('preview').src !== local) $('preview').src = local;
}

$('e-host').placeholder = new URL('.', location.href).href;
$('embed-form').addEventListener('input', render);
$('embed-form').addEventListener('submit', (e) => e.preventDefault());
document.addEventListener('click', async (e) => {
  const b = e.target.closest('[data-copy]');
  if (!b) return;
  try {
    await navigator.clipboard.writeText($(b.dataset.copy).textContent);
    $('embed-status').textContent = 'Copied.';
  } catch {
    $('embed-status').textContent = 'Select the snippet to copy it.';
  }
});
window.addEventListener('message', (e) => {
  if (e.source === $('preview').contentWindow && e.data?.type === 'prenet-widget-size' && e.data.height > 0) $('preview').style.height = `${Math.min(e.data.height, 4000)}px`;
});
render();
