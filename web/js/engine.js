// The wasm module behind the API, kept answering whatever a request does to it. A request that makes the
// module trap or abort (a C++ bug, the wasm stack or memory exhausted, an uncaught exception: anything that
// throws out of handleRequest instead of returning a reply) leaves its memory and stack pointer in an unknown
// state, and an aborted Emscripten module fails every later call. So the engine answers that request with an
// error reply, like any API error (errors are data: the page shows the message), and makes a fresh instance
// of the same, already compiled module for the next request (instantiation only: no download, no compile).
// Pure: no DOM, no worker globals; js/worker.js uses it in the page, tests/js/engine.test.mjs under Node.

/** The reply for a request that broke the module: the API's error shape, code "internal". */
export function engineFailure(thrown) {
  const what = thrown instanceof Error ? thrown.message || thrown.name : String(thrown);
  return JSON.stringify({
    error: {
      message: `The calculator's engine failed on this request (${what}); it has been restarted, so other requests work.`,
      field: null,
      code: 'internal',
      path: null,
      attr: null,
    },
  });
}

/**
 * `instantiate()` resolves to a ready module (an object with handleRequest and version). Returns
 * {ready(): Promise<module>, request(text): Promise<{reply, ms, restarted}>, restarts: number}.
 * request() rejects only when no instance can be made (the module failed to load or to instantiate).
 */
export function createEngine(instantiate) {
  let current = instantiate();
  current.catch(() => {}); // reported by the next request
  const engine = {
    restarts: 0,
    ready: () => current,
    /** Runs one request on the current instance; if it throws, replaces the instance and answers an error. */
    async request(text, { before } = {}) {
      const prenet = await current;
      const start = performance.now();
      try {
        before?.(prenet);
        const reply = prenet.handleRequest(text);
        return { reply, ms: performance.now() - start, restarted: false };
      } catch (thrown) {
        engine.restarts++;
        current = instantiate();
        current.catch(() => {});
        return { reply: engineFailure(thrown), ms: performance.now() - start, restarted: true };
      }
    },
  };
  return engine;
}

/**
 * Test hook: breaks a module the way a runaway request does, so that its next call traps inside the module
 * (it moves the wasm stack pointer out of the module's memory: the first stack access is out of bounds).
 * Only js/worker.js?test-hooks=1 and the Node tests use it; the page never turns it on by itself.
 */
export function breakModule(prenet) {
  const restore = prenet.stackRestore ?? prenet.asm?.stackRestore;
  if (typeof restore !== 'function') throw new Error('the module exports no stackRestore');
  restore(-16);
}
