// The page by keyboard alone (issue #26, item 2): Tab walks the whole page in order, from the top to the share
// buttons, through every accelerator and the results, without falling back to <body> (a re-render that
// destroyed the focused element sent the next Tab to the page's top: from the first price field Tab never
// reached the second accelerator); each accelerator is its checkbox, its price and its sources; toggling or editing in the accelerator list keeps the keyboard's place.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { settled, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 800 } });

// The focused element in words: its id, else its tag and data-* attributes (the accelerator rows' inputs
// and the table's buttons have no id of their own), else its tag, section and text (a <summary>).
const focused = (page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return 'BODY';
    if (a.id) return `#${a.id}`;
    const data = Object.keys(a.dataset).length ? JSON.stringify({ ...a.dataset }) : '';
    return data ? `${a.tagName}${data}` : `${a.tagName} in #${a.parentElement.closest('[id]')?.id} “${a.textContent.trim().slice(0, 40)}”`;
  });

async function ready(page) {
  await settled(page);
  await page.waitForFunction(() => document.querySelectorAll('#hw-list input[data-hw]').length > 1 && document.querySelector('#chart canvas'));
}

describe('keyboard', () => {
  test('Tab walks the whole page once, through every accelerator and the results, to the share buttons', async () => {
    const page = await harness().page('index.html');
    await ready(page);
    const accelerators = await page.$$eval('#hw-list input[data-hw]', (els) => els.map((e) => e.dataset.hw));
    const picks = await page.$$eval('#results-table [data-pick]', (els) => els.length);
    const walk = [];
    const last = '#copy-cli';
    // Generous: every control on the page is well under this many stops.
    for (let i = 0; i < 600 && walk.at(-1) !== last; i++) {
      await page.keyboard.press('Tab');
      walk.push(await focused(page));
    }
    assert.equal(walk.at(-1), last, `Tab never reached the command line's copy button; the walk ended: ${walk.slice(-6).join(' → ')}`);
    const body = walk.indexOf('BODY');
    assert.equal(body, -1, `focus fell back to <body> after ${walk.slice(Math.max(0, body - 3), body).join(' → ')}`);
    const twice = walk.filter((k, i) => walk.indexOf(k) !== i);
    assert.deepEqual(twice, [], 'each control is reached once');
    const at = (key) => walk.indexOf(key);
    // Every accelerator's checkbox, price and sources, in the list's order.
    for (const id of accelerators) {
      assert.ok(at(`INPUT{"hw":"${id}"}`) >= 0, `accelerator ${id} reached`);
      assert.equal(at(`#price-${id}`), at(`INPUT{"hw":"${id}"}`) + 1, `${id}'s price follows its checkbox`);
      assert.equal(at(`SUMMARY{"sources":"${id}"}`), at(`#price-${id}`) + 1, `${id}'s sources follow its price`);
    }
    assert.ok(at(`INPUT{"hw":"${accelerators[1]}"}`) > at(`SUMMARY{"sources":"${accelerators[0]}"}`), 'the second accelerator after the first one\'s sources');
    // Then the results (every row's button), the chart's scale, and the share buttons.
    assert.equal(walk.filter((k) => k.startsWith('BUTTON{"pick"')).length, picks, 'every results row reached');
    const order = ['#hw-all', 'BUTTON{"sort":"name"}', '#chart-log', '#copy-link', '#download-csv', '#download-json', last].map(at);
    assert.ok(order.every((i, n) => i >= 0 && (n === 0 || i > order[n - 1])), `in page order: ${order.join(', ')}`);
  });

  test('toggling an accelerator and leaving a cleared price keep the keyboard\'s place', async () => {
    const page = await harness().page('index.html');
    await ready(page);
    const [first, second, third] = await page.$$eval('#hw-list input[data-hw]', (els) => els.slice(0, 3).map((e) => e.dataset.hw));
    // Space on the second accelerator: the list is rebuilt for the new selection, focus stays on it.
    await page.focus(`#hw-list input[data-hw="${second}"]`);
    await page.keyboard.press('Space');
    await page.waitForFunction((id) => !document.querySelector(`#hw-list input[data-hw="${id}"]`).checked, second);
    assert.equal(await focused(page), `INPUT{"hw":"${second}"}`);
    await page.keyboard.press('Space');
    await settled(page);
    assert.equal(await focused(page), `INPUT{"hw":"${second}"}`);
    // A price typed, then cleared and left with Tab: the catalogue price is back, and focus is on the next row.
    const catalogue = await page.inputValue(`#price-${first}`);
    await page.focus(`#price-${first}`);
    await page.fill(`#price-${first}`, '9');
    await page.fill(`#price-${first}`, '');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), `SUMMARY{"sources":"${first}"}`);
    assert.equal(await page.inputValue(`#price-${first}`), catalogue);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), `INPUT{"hw":"${second}"}`);
    for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
    assert.equal(await focused(page), `INPUT{"hw":"${third}"}`);
  });
});
