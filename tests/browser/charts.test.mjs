// The charts of time and cost (issue #26, item 6) read: only the accelerators that can hold the step are drawn
// when any can, so one that cannot (a P4 at days or years) no longer sets the linear scale; the axis counts in
// the unit of the largest bar's label; each bar's value starts right of the plot's edge (it used to be centred
// on the bar's end, over the names), and names get their room (they were clipped on the left), shortened with
// "…" only on a narrow screen.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { settled, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 800 } });

// The chart's numbers once drawn: bars, unit, the scale (in the axis unit), where values start, the names.
async function chart(page, id = 'chart') {
  await page.waitForFunction((id) => document.getElementById(id).dataset.scaleMax != null && document.querySelector(`#${id} canvas`), id);
  return page.$eval(`#${id}`, (el) => ({
    bars: Number(el.dataset.bars),
    unit: el.dataset.unit,
    min: Number(el.dataset.scaleMin),
    max: Number(el.dataset.scaleMax),
    valuesFrom: Number(el.dataset.valuesFrom),
    plotLeft: Number(el.dataset.plotLeft),
    names: JSON.parse(el.dataset.names),
  }));
}

// The results' rows as the page holds them (hours, fits) and the table's time-to-train text per accelerator.
const rows = (page) =>
  page.evaluate(() =>
    window.prenet.last().rows.map((r) => ({ name: r.name, hours: r.hours, fits: r.fits, text: document.querySelector(`#results-table tr:has([data-pick="${CSS.escape(r.id)}"]) [data-col="hours"]`)?.textContent ?? null })),
  );

const PER_HOUR = { s: 3600, min: 60, h: 1, days: 1 / 24, years: 1 / 24 / 365 };

describe('charts', () => {
  test('accelerators that cannot hold the step are left out of the scale; the axis is in the labels\' unit', async () => {
    const page = await harness().page('index.html');
    await settled(page);
    const all = await rows(page);
    const fitting = all.filter((r) => r.fits);
    const cannot = all.filter((r) => !r.fits);
    assert.ok(fitting.length > 10 && cannot.length > 0, `GPT-2 at batch 8: ${fitting.length} fit, ${cannot.length} do not`);
    const c = await chart(page);
    assert.equal(c.bars, fitting.length, 'one bar per accelerator that fits');
    assert.match(await page.textContent('#chart-note'), new RegExp(`^Left out: ${cannot.length} accelerators? that cannot hold this step`));
    const longest = Math.max(...fitting.map((r) => r.hours));
    const slowest = Math.max(...cannot.map((r) => r.hours));
    assert.ok(slowest > longest * 1.2, 'a left-out accelerator is slower than every drawn one (it would have set the scale)');
    const maxHours = c.max / PER_HOUR[c.unit];
    assert.ok(maxHours >= longest && maxHours <= longest * 1.1, `the scale ends just past the longest drawn bar: ${maxHours} h for ${longest} h`);
    // The unit is the one the longest bar's label is written in ("3.34 days": days, not raw hours).
    const label = fitting.find((r) => r.hours === longest).text;
    assert.ok(label.endsWith(` ${c.unit}`), `axis in ${c.unit}, the longest bar's label is "${label}"`);
    assert.ok(c.valuesFrom >= c.plotLeft, `values start at ${c.valuesFrom} px, right of the names' edge at ${c.plotLeft} px`);
    assert.ok(!c.names.some((n) => n.endsWith('…')), `at 1280 px every name is whole: ${c.names.join(', ')}`);
    assert.ok(c.names.some((n) => n.length > 30), 'the long names are there in full');
    const cost = await chart(page, 'chart-cost');
    assert.equal(cost.bars, fitting.length);
    assert.ok(cost.valuesFrom >= cost.plotLeft);
    // The log scale: from a decade below the fastest drawn bar to past the slowest.
    await page.check('#chart-log');
    await page.waitForFunction(() => Number(document.getElementById('chart').dataset.scaleMin) > 0);
    const log = await chart(page);
    const fastest = Math.min(...fitting.map((r) => r.hours)) * PER_HOUR[log.unit];
    assert.ok(log.min > 0 && log.min <= fastest && log.min > fastest / 10.001, `log scale starts at ${log.min} ${log.unit} for ${fastest}`);
    assert.ok(log.max >= longest * PER_HOUR[log.unit]);
  });

  test('on a phone the names are shortened to leave the bars room, still clear of the values', async () => {
    const page = await harness().page('index.html', { viewport: { width: 390, height: 844 } });
    await settled(page);
    const c = await chart(page);
    assert.ok(c.names.some((n) => n.endsWith('…')), 'a long name is shortened');
    assert.ok(c.valuesFrom >= c.plotLeft);
    assert.ok(c.plotLeft <= 0.45 * 390, `names take at most about 40% of the width: ${c.plotLeft} px`);
  });

  test('where no accelerator can hold the step, every one is drawn and the note says none fits', async () => {
    const page = await harness().page('index.html#model=llama3-8b&seq=8192');
    await settled(page, 60_000);
    const all = await rows(page);
    assert.ok(all.every((r) => !r.fits), 'llama3-8b at batch 8 x 8192 fits no single accelerator');
    const c = await chart(page);
    assert.equal(c.bars, all.length);
    assert.match(await page.textContent('#chart-note'), /^None of these accelerators can hold this step/);
  });
});
