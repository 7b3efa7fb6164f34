// A small static file server for dist/ (npm start, the browser tests and the benchmarks). Node's http only,
// with the MIME types a static host must send (.wasm as application/wasm, .mjs as JavaScript). It serves
// files under its root and nothing else: no directory listings, no paths outside the root. It also sends the
// headers of the root's `_headers` file (Netlify / Cloudflare Pages format, web/hosting/_headers), so that
// local serving and the browser tests run under the same Content-Security-Policy as the published site.
//   node web/serve.mjs [root=dist] [port=8080]     (port 0 picks a free one)
import { createServer } from 'node:http';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
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

/**
 * Parses a `_headers` file: a path pattern at the start of a line (`*` matches anything, `:name` one path
 * segment), then indented `Name: value` lines. Returns [{pattern: RegExp, headers: [[name, value]]}].
 */
export function parseHeadersFile(text) {
  const rules = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim() || line.trim().startsWith('#')) continue;
    if (!/^\s/.test(line)) {
      const source = line.trim().replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/:\w+/g, '[^/]+');
      rules.push({ path: line.trim(), pattern: new RegExp(`^${source}$`), headers: [] });
    } else if (rules.length) {
      const at = line.indexOf(':');
      if (at > 0) rules.at(-1).headers.push([line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim()]);
    }
  }
  return rules;
}

/** The headers the rules give `pathname`: every matching rule, in order; a repeated name is joined with ", ". */
export function headersFor(rules, pathname) {
  const out = {};
  for (const rule of rules) {
    if (!rule.pattern.test(pathname)) continue;
    for (const [name, value] of rule.headers) out[name] = out[name] ? `${out[name]}, ${value}` : value;
  }
  return out;
}

/**
 * Starts serving `root`; resolves to {server, port, url, close()}. `log(entry)` sees every request.
 * `cspReport(report)`, when given, gets every Content-Security-Policy violation the browser reports: each policy
 * served gets `report-uri /__csp-report`, whose POSTs (from pages and workers alike) are parsed and passed on.
 */
export function serve({ root = 'dist', port = 0, host = '127.0.0.1', log = null, cspReport = null } = {}) {
  const base = resolve(root);
  const headersFile = join(base, '_headers');
  const rules = existsSync(headersFile) ? parseHeadersFile(readFileSync(headersFile, 'utf8')) : [];
  const server = createServer((req, res) => {
    if (cspReport && req.method === 'POST' && req.url === '/__csp-report') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        let report;
        try {
          report = JSON.parse(body);
        } catch {
          report = { unparsed: body };
        }
        cspReport(report['csp-report'] ?? report);
        res.writeHead(204).end();
      });
      return;
    }
    let pathname;
    let requested;
    try {
      requested = new URL(req.url, 'http://x').pathname;
      pathname = decodeURIComponent(requested);
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
    const extra = headersFor(rules, requested);
    if (cspReport && extra['content-security-policy'])
      extra['content-security-policy'] = extra['content-security-policy']
        .split(', ')
        .map((policy) => `${policy}; report-uri /__csp-report`)
        .join(', ');
    res.writeHead(200, {
      'content-type': MIME[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      ...extra,
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
