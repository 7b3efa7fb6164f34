/* PreNeT's widget by script tag: put
 *   <script src="https://YOUR-HOST/prenet/embed.js" data-model="gpt2" data-hardware="h100-sxm5-80gb" data-gpus="8" async></script>
 * where the table should appear. It inserts an <iframe> of widget.html (beside this file) with the data-*
 * attributes as its query (data-model -> model=..., any of the widget's attributes) and keeps the frame as tall
 * as the widget says it is. A classic script with no dependencies: it runs on the host page, not in the widget. */
(function () {
  var script = document.currentScript;
  if (!script) return;
  var base = new URL('widget.html', script.src);
  var query = new URLSearchParams();
  for (var i = 0; i < script.attributes.length; i++) {
    var a = script.attributes[i];
    if (a.name.indexOf('data-') === 0) query.set(a.name.slice(5), a.value);
  }
  base.search = query.toString();
  var frame = document.createElement('iframe');
  frame.src = base.href;
  frame.title = script.getAttribute('title') || 'PreNeT: predicted training time and cost';
  frame.loading = 'lazy';
  frame.width = '100%';
  frame.height = '320';
  frame.setAttribute('frameborder', '0');
  frame.style.border = '0';
  frame.style.width = '100%';
  script.parentNode.insertBefore(frame, script);
  window.addEventListener('message', function (e) {
    if (e.source !== frame.contentWindow || e.origin !== base.origin) return;
    if (!e.data || e.data.type !== 'prenet-widget-size' || !(e.data.height > 0)) return;
    frame.style.height = Math.min(e.data.height, 4000) + 'px';
  });
})();
