// The page's module (prenet.mjs + prenet.wasm, built once) under Node, for the tests and benchmarks: the very
// code the page runs. `createPrenet(options)` as the page's glue exports it; cmake/Wasm.cmake copies this file
// beside the module.
// Emscripten 3.1.6's ES6 glue has two habits on Node (docs/toolchain.md): it fetch()es the .wasm by path, which
// Node's fetch cannot read, so the factory is handed the bytes (`wasmBinary`); and its start reads the CommonJS
// global __dirname, which ES modules lack, so the global is defined while the factory starts (synchronously) and
// put back after. Its only use of require(), reading files, is never reached once the bytes are given.
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import createPrenet from './prenet.mjs';

const folder = dirname(fileURLToPath(import.meta.url));
let wasmBinary = null;

export default function createPrenetForNode(options = {}) {
  wasmBinary ??= readFileSync(new URL('./prenet.wasm', import.meta.url));
  const had = Object.getOwnPropertyDescriptor(globalThis, '__dirname');
  globalThis.__dirname = folder;
  try {
    return createPrenet({ wasmBinary, ...options });
  } finally {
    if (had) Object.defineProperty(globalThis, '__dirname', had);
    else delete globalThis.__dirname;
  }
}
