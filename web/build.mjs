// Builds the static web calculator into dist/ from web/, the wasm module (build-wasm/) and two vendored npm
// packages. No bundler: the page is plain ES modules; this script only copies files, wraps uPlot's minified
// build as an ES module, draws the PWA icons, and writes the service worker with a cache named after the
// build (package version + a hash of every file it caches). Every path in dist/ is relative, so the folder
// works from any directory of any static host.
//   node web/build.mjs [--out dist] [--wasm build-wasm]
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { deflateSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const out = resolve(root, arg('out', 'dist'));
const wasmDir = resolve(root, arg('wasm', 'build-wasm'));
const web = join(root, 'web');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function need(file, hint) {
  if (!existsSync(file)) {
    console.error(`web build: ${relative(root, file)} not found; ${hint}`);
    process.exit(1);
  }
  return file;
}
const write = (path, data) => {
  mkdirSync(dirname(join(out, path)), { recursive: true });
  writeFileSync(join(out, path), data);
};
const copy = (from, to) => write(to, readFileSync(from));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// 1. The page itself: everything in web/ but the tooling (this script, the dev server, the SW template).
const tooling = new Set(['build.mjs', 'serve.mjs', 'startup-replies.mjs', 'sw.js', 'README.md']);
for (const entry of readdirSync(web)) {
  if (tooling.has(entry)) continue;
  if (entry === 'hosting') continue;
  cpSync(join(web, entry), join(out, entry), { recursive: true });
}
// Host configuration files (MIME type of .wasm, caching), harmless where a host ignores them.
cpSync(join(web, 'hosting'), out, { recursive: true });

// 2. The wasm module (scripts/build.sh wasm).
const hint = 'run: bash scripts/build.sh wasm';
copy(need(join(wasmDir, 'prenet.mjs'), hint), 'wasm/prenet.mjs');
copy(need(join(wasmDir, 'prenet.wasm'), hint), 'wasm/prenet.wasm');
// ... and its answers to the page's requests before its first result (web/startup-replies.mjs), made by the
// same module under Node, so that a cold visit shows the default result without waiting for the worker.
{
  const { default: createPrenet } = await import(pathToFileURL(need(join(wasmDir, 'prenet_node.mjs'), hint)).href);
  const { startupReplies } = await import('./startup-replies.mjs');
  write('startup.json', JSON.stringify(await startupReplies(await createPrenet())));
}

// 3. Vendored npm dependencies (see docs/web.md for why these two).
const nm = join(root, 'node_modules');
const npmHint = 'run: npm ci';
copy(need(join(nm, 'comlink/dist/esm/comlink.min.mjs'), npmHint), 'vendor/comlink.mjs');
// uPlot ships a minified IIFE (`var uPlot = function(){...}();`) and an unminified ES module; exporting the
// IIFE's variable gives a minified ES module without a bundler.
const uplot = readFileSync(need(join(nm, 'uplot/dist/uPlot.iife.min.js'), npmHint), 'utf8');
write('vendor/uplot.mjs', `${uplot}\nexport default uPlot;\n`);
copy(join(nm, 'uplot/dist/uPlot.min.css'), 'vendor/uplot.css');
const licence = (name, file) => `${name}\n${'='.repeat(name.length)}\n\n${readFileSync(join(nm, file), 'utf8').trim()}\n`;
write(
  'vendor/LICENSES.txt',
  [
    `comlink ${JSON.parse(readFileSync(join(nm, 'comlink/package.json'), 'utf8')).version}`,
    licence('comlink (Apache-2.0)', 'comlink/LICENSE'),
    `uPlot ${JSON.parse(readFileSync(join(nm, 'uplot/package.json'), 'utf8')).version}`,
    licence('uPlot (MIT)', 'uplot/LICENSE'),
  ].join('\n'),
);

// 4. Data the layer editor offers: the layers-JSON schema (attributes per layer type) and the examples.
copy(join(root, 'schemas/layers.schema.json'), 'data/layers.schema.json');
for (const f of readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.json')))
  copy(join(root, 'examples', f), `examples/${f}`);

// 5. PWA icons as PNG (installability wants raster icons at 192 and 512 px), drawn here.
write('icons/icon-192.png', icon(192, false));
write('icons/icon-512.png', icon(512, false));
write('icons/maskable-512.png', icon(512, true));

// 6. The build id, then the service worker that caches exactly these files under a name made of it.
const files = listFiles(out).filter((f) => !/^(\.htaccess|_headers|_redirects|\.nojekyll)$/.test(f));
const hash = createHash('sha256');
for (const f of files) hash.update(f).update('\0').update(readFileSync(join(out, f))).update('\0');
const build = `${pkg.version}-${hash.digest('hex').slice(0, 10)}`;
const precache = [...files.map((f) => `./${f}`), './version.json'];
const sw = readFileSync(join(web, 'sw.js'), 'utf8')
  .replace('__BUILD__', build)
  .replace('__FILES__', JSON.stringify(precache, null, 1).replace(/\n\s*/g, ' '));
write('sw.js', sw);
write('version.json', `${JSON.stringify({ name: pkg.name, version: pkg.version, build, files: files.length + 1 }, null, 2)}\n`);

let bytes = 0;
for (const f of listFiles(out)) bytes += statSync(join(out, f)).size;
console.log(`web build: ${relative(root, out) || '.'}/ ${listFiles(out).length} files, ${(bytes / 1e6).toFixed(2)} MB, build ${build}`);

// ---- helpers ----------------------------------------------------------------------------------------------

function listFiles(dir, base = dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listFiles(path, base));
    else found.push(relative(base, path).split(sep).join('/'));
  }
  return found.sort();
}

// The app icon: three rising bars and a baseline on a blue tile (maskable: a full-bleed tile with the
// glyph inside the 80% safe zone). A minimal PNG encoder: RGBA rows, filter 0, zlib, CRC32 chunks.
function icon(size, maskable) {
  const px = Buffer.alloc(size * size * 4);
  const bg = [0x1d, 0x4e, 0x89], fg = [0xff, 0xff, 0xff], accent = [0xff, 0xc8, 0x57];
  const radius = maskable ? 0 : size * 0.18;
  const s = (v) => v * size;
  const inset = maskable ? 0.1 : 0;
  const g = (v) => s(inset + v * (1 - 2 * inset));
  const bars = [
    [0.2, 0.55, 0.33, 0.78, fg],
    [0.42, 0.4, 0.55, 0.78, fg],
    [0.64, 0.22, 0.77, 0.78, accent],
  ];
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const cx = Math.min(x, size - 1 - x), cy = Math.min(y, size - 1 - y);
      let inside = true;
      if (cx < radius && cy < radius) inside = (radius - cx) ** 2 + (radius - cy) ** 2 <= radius ** 2;
      let c = inside ? bg : null;
      if (inside) {
        for (const [x0, y0, x1, y1, col] of bars) if (x >= g(x0) && x < g(x1) && y >= g(y0) && y < g(y1)) c = col;
        if (x >= g(0.14) && x < g(0.86) && y >= g(0.8) && y < g(0.84)) c = fg;
      }
      const o = (y * size + x) * 4;
      if (c) [px[o], px[o + 1], px[o + 2], px[o + 3]] = [...c, 255];
    }
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) px.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(buf) {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
