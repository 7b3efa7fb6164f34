// The widget's two embed snippets for a host folder and a few attributes: the script tag (embed.js) and the
// iframe with its resize listener. Pure: Node's tests import it; docs/web.md shows its output.

const attr = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** {script, iframe, src} for `host` (the calculator's folder, ending in /) and {model, hardware, gpus, ...}. */
export function embedSnippets(host, choices) {
  const base = host.endsWith('/') ? host : `${host}/`;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(choices)) if (v != null && String(v).trim() !== '') query.set(k, String(v).trim());
  const src = `${base}widget.html${query.size ? `?${query}` : ''}`;
  const data = [...query].map(([k, v]) => ` data-${k}="${attr(v)}"`).join('');
  const origin = new URL(base).origin;
  const script = `<script src="${attr(`${base}embed.js`)}"${data} async></script>`;
  const iframe = `<iframe src="${attr(src)}" title="PreNeT: predicted training time and cost" width="100%" height="320" frameborder="0" loading="lazy"></iframe>
<script>
  // Keeps the PreNeT widget as tall as its table (it posts its height).
  window.addEventListener('message', function (e) {
    if (e.origin !== '${origin}' || !e.data || e.data.type !== 'prenet-widget-size') return;
    document.querySelectorAll('iframe').forEach(function (f) {
      if (f.contentWindow === e.source) f.style.height = Math.min(e.data.height, 4000) + 'px';
    });
  });
</script>`;
  return { script, iframe, src };
}
