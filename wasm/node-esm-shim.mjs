// Prepended (--extern-pre-js) to the Node-only build prenet_node.mjs. Emscripten 3.1.6's ES6 output still
// uses the CommonJS globals require() and __dirname on its Node path; ES modules do not have them.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const __dirname = dirname(fileURLToPath(import.meta.url));
