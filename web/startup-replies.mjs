// The replies a cold visit to the page needs before its first result, answered at build time by the same wasm
// module the page runs (build-wasm/prenet_node.mjs loads the very prenet.wasm copied into dist/), written to
// dist/startup.json by web/build.mjs. The page asks its worker for them otherwise; the worker's first requests
// are slow on a cold load (V8 compiles the module's functions as they first run: about 0.4 s of the first
// result on 2 cores, docs/performance.md), and these answers cannot differ from the worker's, so js/client.js
// answers an identical request from this file once, and every other request from the worker.
// Which requests: the option table, and the default predict and features requests as the page builds them
// from it (js/state.js on an empty link; no calibration or custom sheet saved in the browser). A request the
// page makes differently simply finds no answer here and goes to the worker: the browser tests check that
// the default one is found (tests/browser/web.test.mjs, "precomputed first result").
import * as S from './js/state.js';

/** The page's own requests before its first result, from the module's option table. */
export async function startupRequests(optionsReply) {
  const table = S.optionTable(optionsReply);
  const state = await S.fromHash('', table, []);
  return [{ command: 'options' }, S.predictRequest(state, table), S.featuresRequest(state, table)];
}

/**
 * {about, version, replies: [{request, reply}]} for `prenet`, an instance of the module (handleRequest,
 * version). Replies are the module's JSON, parsed; a request it refuses is not kept (the worker answers it).
 */
export async function startupReplies(prenet) {
  const ask = (request) => JSON.parse(prenet.handleRequest(JSON.stringify(request)));
  const requests = await startupRequests(ask({ command: 'options' }));
  const replies = requests.map((request) => ({ request, reply: ask(request) })).filter(({ reply }) => !reply.error);
  return {
    about: 'Replies of this build\'s wasm module to the page\'s requests before its first result (web/startup-replies.mjs).',
    version: prenet.version(),
    replies,
  };
}
