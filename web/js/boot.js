// Starts the calculator's worker, the wasm download and that of the build's precomputed first replies
// (startup.json), shared by index.html and widget.html. A classic script in <head>, so it runs before the
// page's module graph has loaded: the first result needs the wasm module most, so its download and
// (streaming) compilation start here and the compiled module is handed to the worker (js/worker.js?wasm=posted).
// js/client.js picks the worker up from window.prenetWorker; without this script (or without
// Worker/WebAssembly) the client starts a worker that fetches the module itself.
(function () {
  if (!window.Worker || !window.WebAssembly || window.prenetWorker !== undefined) return;
  var base = document.currentScript ? new URL('..', document.currentScript.src) : new URL('.', location.href);
  // window.prenetTestHooks: set only by the browser tests (before any page script runs) to turn on the worker's
  // test hooks (js/worker.js); nothing a link or an input can set.
  var hooks = window.prenetTestHooks === true ? '&test-hooks=1' : '';
  var worker = (window.prenetWorker = new Worker(new URL('js/worker.js?wasm=posted' + hooks, base), { type: 'module' }));
  // Kept for js/client.js, which hands the same compiled module to the extra workers of a cluster question.
  var compiled = (window.prenetWasm = fetch(new URL('wasm/prenet.wasm', base)).then(function (r) {
    if (!r.ok) throw new Error('cannot load wasm/prenet.wasm: HTTP ' + r.status);
    var streaming = WebAssembly.compileStreaming && /^application\/wasm/.test(r.headers.get('content-type') || '');
    return streaming ? WebAssembly.compileStreaming(r) : r.arrayBuffer().then(WebAssembly.compile);
  }));
  // The build's own answers to the page's first requests (web/startup-replies.mjs), used by js/client.js: a
  // small file, so it arrives long before the module is ready. null when it cannot be read (the worker answers).
  window.prenetStartup = fetch(new URL('startup.json', base))
    .then(function (r) { return r.ok ? r.json() : null; })
    .catch(function () { return null; });
  compiled.then(
    function (module) { worker.postMessage({ type: 'prenet-wasm', module: module }); },
    function (error) { worker.postMessage({ type: 'prenet-wasm', error: String(error) }); },
  );
})();
