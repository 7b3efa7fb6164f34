// Share links a stranger made (issue #26, item 7): what the page cannot use is said in one note above the
// results and left out, and the rest of the link still computes. One unknown accelerator id used to fail the
// whole request (an error listing all 46 ids, no row even for the valid H100); invalid batch, gpus or precision
// values were dropped silently; an unknown model showed "`prenet zoo` lists them" and two empty charts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { settled, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 800 } });

const note = (page) => page.locator('#link-note').textContent();
const rowIds = (page) => page.$$eval('#results-table [data-pick]', (els) => els.map((e) => e.dataset.pick));

describe('share links', () => {
  test('one unknown accelerator and invalid values: a note names each, the valid accelerator is computed', async () => {
    const page = await harness().page('index.html#hw=zzz,h100-sxm5-80gb&batch=abc&gpus=-3&precision=fp7&seq=512');
    await settled(page);
    assert.deepEqual(await rowIds(page), ['h100-sxm5-80gb']);
    assert.equal(await page.locator('#error').isHidden(), true);
    assert.equal(await page.locator('#link-note').isHidden(), false);
    const said = await note(page);
    for (const part of ['(zzz)', 'left out, the others are shown', 'batch=abc', 'gpus=-3', 'precision=fp7'])
      assert.ok(said.includes(part), `the note "${said}" lacks "${part}"`);
    assert.ok(!said.includes('h100-sxm5-80gb') && !said.includes('seq='), `the note names only what was refused: ${said}`);
    assert.ok(said.length < 400, `one short note, not the catalogue: ${said.length} characters`);
    // The valid values are kept, the refused ones are the page's defaults, and the link the page now holds is clean.
    const request = await page.evaluate(() => window.prenet.last().request);
    assert.deepEqual([request.hardware, request.seq, request.batch, request.precision, request.gpus], [['h100-sxm5-80gb'], 512, 8, 'bf16', undefined]);
    await page.waitForFunction(() => !location.hash.includes('zzz'));
    // The same link typed into the address bar of an open page says the same.
    await page.evaluate(() => (location.hash = '#hw=t4&batch=8'));
    await settled(page);
    assert.equal(await page.locator('#link-note').isHidden(), true);
    await page.evaluate(() => (location.hash = '#hw=zzz,t4'));
    await page.waitForFunction(() => document.getElementById('link-note').textContent.includes('zzz'));
    await settled(page);
    assert.deepEqual(await rowIds(page), ['t4']);
  });

  test('an unknown model: a clear note, the default model computed and charted instead', async () => {
    const page = await harness().page('index.html#model=nosuch');
    await settled(page);
    const said = await note(page);
    assert.match(said, /model nosuch is not a built-in model: the page shows its default, gpt2, instead/);
    assert.equal(await page.locator('#error').isHidden(), true);
    assert.ok(!(await page.textContent('body')).includes('prenet zoo'), 'no CLI words');
    assert.equal((await page.evaluate(() => window.prenet.last().request)).model, 'gpt2');
    assert.ok((await rowIds(page)).length > 40, 'every accelerator');
    await page.waitForSelector('#chart canvas');
    await page.waitForSelector('#chart-cost canvas');
  });

  test('only unknown accelerators: said, and every accelerator shown instead of none', async () => {
    const page = await harness().page('index.html#hw=zzz,yyy');
    await settled(page);
    assert.match(await note(page), /accelerators the page does not know \(zzz, yyy\): every accelerator is shown instead/);
    assert.ok((await rowIds(page)).length > 40);
  });

  test('a link followed in an open page: the page is not settled until it has read it, and an edit made meanwhile stays', async () => {
    const page = await harness().page('index.html#hw=t4&batch=8');
    await settled(page);
    // A link followed (no reload): until the page has read it, its results are not the link's.
    const right = await page.evaluate(() => {
      history.pushState(null, '', '#hw=t4&batch=4');
      return window.prenet.settled();
    });
    assert.equal(right, false, 'settled() before the hashchange event was handled');
    await page.evaluate(() => window.dispatchEvent(new HashChangeEvent('hashchange')));
    await settled(page);
    assert.equal((await page.evaluate(() => window.prenet.last().request)).batch, 4);
    // A field edited while a newer link is still being read (fromHash is asynchronous): the edit is the newer
    // input and stays, and the address follows it.
    await page.evaluate(() => {
      history.pushState(null, '', '#hw=t4&batch=2');
      window.dispatchEvent(new HashChangeEvent('hashchange'));
      const field = document.getElementById('batch');
      field.value = '16';
      field.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.waitForFunction(() => /batch=16/.test(location.hash));
    await settled(page);
    assert.equal((await page.evaluate(() => window.prenet.last().request)).batch, 16);
    assert.equal(await page.inputValue('#batch'), '16');
  });

  test('a link with nothing to compute: the error says why, and the charts point to it instead of standing empty', async () => {
    const page = await harness().page('index.html#hw=none');
    await page.waitForFunction(() => !document.getElementById('error').hidden);
    assert.match(await page.textContent('#error'), /No accelerator selected/);
    for (const id of ['#chart', '#chart-cost']) assert.equal((await page.textContent(id)).trim(), 'No results to chart: see the message above the table.');
  });
});
