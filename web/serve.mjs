// A small static file server for dist/ (npm start, the browser tests and the benchmarks). Node's http only,
// with the MIME types a static host must send (.wasm as application/wasm, .mjs as JavaScript). It serves
// files under its root and nothing else: no directory listings, no paths outside the root.
//   node web/serve.mjs [root=dist] [port=8080]     (port 0 picks a free one)
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
};

/** Starts serving `root`; resolves to {server, port, url, close()}. `log(entry)` sees every request. */
export function serve({ root = 'dist', port = 0, host = '127.0.0.1', log = null } = {}) {
  const base = resolve(root);
  const server = createServer((req, res) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    if (pathname.endsWith('/')) pathname += 'index.html';
    const file = normalize(join(base, pathname));
    let status = 200;
    let stat = null;
    if (file !== base && !file.startsWith(base + sep)) status = 403;
    else {
      try {
        stat = statSync(file);
        if (!stat.isFile()) status = 404;
      } catch {
        status = 404;
      }
    }
    log?.({ method: req.method, path: pathname, status });
    if (req.method !== 'GET' && req.method !== 'HEAD') status = 405;
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${status}\n`);
      return;
    }
    res.writeHead(200, {
      'content-type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      resolvePromise({
        server,
        port: actual,
        url: `http://${host}:${actual}/`,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? 'dist';
  const first = Number(process.argv[3] ?? process.env.PORT ?? 8080);
  const host = process.env.HOST ?? '127.0.0.1';
  let started = null;
  // The asked-for port, else the next free one (then any free one).
  for (const port of [...Array(20).keys()].map((i) => first + i).concat(0)) {
    try {
      started = await serve({ root, port, host });
      break;
    } catch (error) {
      if (error.code !== 'EADDRINUSE' && error.code !== 'EACCES') throw error;
    }
  }
  const shown = host === '0.0.0.0' ? started.url.replace('0.0.0.0', 'localhost') : started.url;
  console.log(`PreNeT web calculator: ${shown}   (serving ${resolve(root)}; Ctrl-C stops)`);
}
