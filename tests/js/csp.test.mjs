// The site's Content-Security-Policy, checked in the sources (no build, no browser; tests/browser checks it
// served and enforced): web/hosting/_headers and both pages' <meta> carry one policy, and nothing in the pages
// or the HTML the modules write needs more than it allows (inline scripts, style attributes, event handlers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { headersFor, parseHeadersFile } from '../../web/serve.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const web = join(root, 'web');
const rules = parseHeadersFile(readFileSync(join(web, 'hosting/_headers'), 'utf8'));
const policy = rules.find((r) => r.path === '/*').headers.find(([name]) => name === 'content-security-policy')[1];

test('one policy: _headers, and the <meta> of index.html and widget.html', () => {
  assert.match(policy, /^default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self';/);
  for (const directive of ["connect-src 'self'", "worker-src 'self'", "object-src 'none'", "base-uri 'none'"]) assert.ok(policy.includes(directive), directive);
  assert.doesNotMatch(policy, /'unsafe-inline'|'unsafe-eval'|\*|https?:|data:|blob:/);
  for (const page of ['index.html', 'widget.html', 'embed.html']) {
    const html = readFileSync(join(web, page), 'utf8');
    assert.equal(html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/)[1], policy, page);
  }
});

test('the calculator may be framed by its own site only, the widget anywhere', () => {
  for (const path of ['/', '/index.html']) assert.match(headersFor(rules, path)['content-security-policy'], new RegExp(`^${policy.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, frame-ancestors 'self'$`), path);
  assert.equal(headersFor(rules, '/widget.html')['content-security-policy'], policy);
  assert.equal(headersFor(rules, '/js/worker.js')['content-security-policy'], policy, 'workers run under it too');
  assert.equal(headersFor(rules, '/wasm/prenet.wasm')['content-type'], 'application/wasm');
});

const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []));

test('no inline script, inline style or event-handler attribute in the pages or in the HTML the modules write', () => {
  for (const page of ['index.html', 'widget.html', 'embed.html']) {
    const html = readFileSync(join(web, page), 'utf8');
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, `${page}: inline script`);
    assert.doesNotMatch(html, /\sstyle=|<style/, `${page}: inline style`);
    assert.doesNotMatch(html, /\son[a-z]+=/, `${page}: event-handler attribute`);
  }
  for (const file of sources(join(web, 'js'))) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /\sstyle="|<style|setAttribute\(['"]style/, `${file}: a style attribute (set styles through the CSSOM)`);
    assert.doesNotMatch(text, /\son[a-z]+="/, `${file}: an event-handler attribute`);
    assert.doesNotMatch(text, /\beval\(|new Function\(/, `${file}: eval`);
  }
});
