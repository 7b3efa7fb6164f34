// The bad-input corpus (tests/fixtures/bad/) in the page, each case the way a user (or a stranger's link)
// would hand it in: model documents as uploaded files, custom accelerators in a link, and the rest as the
// page's own requests to its worker. Every case shows its message, the wasm module never traps (no
// restart), and the page keeps computing. Fails on any console error or CSP violation (helpers.mjs).
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { cases } from '../fixtures/bad/corpus.mjs';
import { settled, start } from './helpers.mjs';

let h;
let scratch;
before(async () => {
  h = await start();
  scratch = mkdtempSync(join(tmpdir(), 'prenet-bad-'));
});
after(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});
afterEach(async () => {
  for (const page of h.context.pages()) await page.close();
  assert.deepEqual(h.problems.splice(0), [], 'console errors, outside requests or CSP violations');
});

const corpus = cases();
const statusText = (page) => page.locator('#file-status').textContent();

// The page reads a model file within limits of its own that are tighter than the API's: at most 5 MB
// (a model description is a small file). A case the API refuses for its size is refused for that.
const PAGE_FILE_BYTES = 5e6;

/** Waits until the page no longer shows a recompute pending, whatever the outcome (results or an error). */
async function computed(page) {
  await page.waitForFunction(() => !document.getElementById('busy').classList.contains('on') && window.prenet.last().request != null);
}

describe('the bad-input corpus in the page', () => {
  test('model documents as uploaded files: each refused with its message; the page keeps working', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#tab-file');
    const model = await page.locator('#model-in-use').textContent();
    const files = corpus.filter((c) => c.route === 'model' || c.bytes);
    assert.ok(files.length >= 60, `${files.length} model cases`);
    for (const [i, c] of files.entries()) {
      const name = `case-${i}.json`;
      const bytes = c.bytes ?? Buffer.from(c.input());
      // Playwright posts buffers up to 50 MB; a bigger upload goes as a file.
      let file = { name, mimeType: 'application/json', buffer: bytes };
      if (bytes.length > 40e6) writeFileSync((file = join(scratch, name)), bytes);
      await page.setInputFiles('#file-input', file);
      await page.waitForFunction((n) => {
        const s = document.getElementById('file-status');
        return s.classList.contains('bad') && s.textContent.includes(n);
      }, name);
      const message = await statusText(page);
      if (c.bytes) assert.match(message, /is not UTF-8 text/, c.name);
      else if (bytes.length > PAGE_FILE_BYTES) assert.match(message, /under 5 MB/, c.name);
      else if (c.contains) assert.ok(message.includes(c.contains), `${c.name}: "${message}" lacks "${c.contains}"`);
      assert.ok(message.length < 2200, `${c.name}: the message should not echo the document`);
    }
    // Still the model from before, and still computing.
    assert.equal(await page.locator('#model-in-use').textContent(), model);
    await page.fill('#batch', '2');
    await settled(page);
    assert.equal((await page.evaluate(() => window.prenet.last().predict)).settings.batch, 2);
    assert.equal(await page.evaluate(() => window.prenet.client.remote.restarts()), 0);
  });

  test('custom accelerators from a link: each bad sheet said (an error or a note); a good link works after each', async () => {
    const page = await h.page('index.html#hw=t4');
    await settled(page);
    const sheets = corpus.filter((c) => c.route === 'sheet');
    assert.ok(sheets.length >= 15, `${sheets.length} sheet cases`);
    for (const c of sheets) {
      // The link as a stranger would make it: the sheet's own text, packed as the page packs (deflate) but
      // without being parsed first.
      const packed = 'z' + deflateRawSync(Buffer.from(`[${c.input()}]`)).toString('base64url');
      await page.evaluate((hash) => (location.hash = hash), `#hw=t4&custom=${packed}`);
      await page.waitForFunction(() => !document.getElementById('error').hidden || !document.getElementById('link-note').hidden);
      await computed(page);
      const said = await page.evaluate(() => [document.getElementById('error'), document.getElementById('link-note')].filter((e) => !e.hidden).map((e) => e.textContent).join(' '));
      assert.ok(said.trim(), c.name);
      if (c.contains) assert.ok(said.includes(c.contains), `${c.name}: "${said}" lacks "${c.contains}"`);
      // A good link right after: the results are back and nothing is said.
      await page.evaluate(() => (location.hash = '#hw=t4&batch=4'));
      await settled(page);
      assert.equal(await page.locator('#link-note').isHidden(), true, c.name);
      assert.equal(await page.locator('#error').isHidden(), true, c.name);
      await page.evaluate(() => (location.hash = '#hw=t4'));
      await settled(page);
    }
    assert.equal(await page.evaluate(() => window.prenet.client.remote.restarts()), 0);
  });

  test('every other case as a request to the page\'s worker: its error, no trap, and the page still computes', async () => {
    const page = await h.page();
    await settled(page);
    const requests = corpus.filter((c) => c.route === 'request' && !c.bytes);
    assert.ok(requests.length >= 25, `${requests.length} request cases`);
    for (const c of requests) {
      const { reply, restarted } = await page.evaluate((text) => window.prenet.client.remote.request(text), c.input());
      assert.equal(restarted, false, `${c.name}: the module trapped`);
      const error = JSON.parse(reply).error;
      assert.ok(error?.message, `${c.name}: no error: ${reply.slice(0, 200)}`);
      if (c.code) assert.equal(error.code, c.code, `${c.name}: ${error.message}`);
      if (c.field !== undefined) assert.equal(error.field, c.field, `${c.name}: ${error.message}`);
      if (c.contains) assert.ok(error.message.includes(c.contains), `${c.name}: ${error.message}`);
    }
    await page.fill('#batch', '3');
    await settled(page);
    assert.equal((await page.evaluate(() => window.prenet.last().predict)).settings.batch, 3);
    assert.equal(await page.evaluate(() => window.prenet.client.remote.restarts()), 0);
  });
});
