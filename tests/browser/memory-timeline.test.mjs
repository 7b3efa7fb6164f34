// Memory over one step on the page (web/js/results/memory-timeline.js): the default result's breakdown draws the
// selected accelerator's `memory.timeline` as a chart with the capacity line and the peak marked, and the peak it
// names is the one the breakdown states (the device's, and the reserved and allocated peaks in its table).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { settled, shots, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 900 } });

test('the default result charts memory over one step, its peak the breakdown\'s', async () => {
  const page = await harness().page();
  await settled(page);
  const chart = page.locator('#memory-timeline svg.memory-timeline');
  await chart.waitFor({ timeout: 60_000 });
  assert.equal(await chart.getAttribute('role'), 'img');
  assert.match(await chart.locator('title').first().textContent(), /^Memory over one step: peak /);
  assert.equal(await chart.locator('.mt-capacity line').count(), 1, 'a capacity line');
  assert.equal(await chart.locator('.mt-peak path').count(), 1, 'a peak marker');
  assert.equal(await chart.locator('.mt-peak-point').count(), 1, 'one peak column');

  // The breakdown's header states the device's peak ("Memory: 12.3 GiB of 80 GiB"); the chart's label says the same.
  const header = (await page.locator('#breakdown h3', { hasText: /^Memory/ }).first().textContent()).replace(/\s+/g, ' ');
  const devicePeak = header.match(/^Memory[^:]*: (.+? GiB) of /)[1];
  assert.equal(await chart.locator('.mt-peak-label').textContent(), `peak ${devicePeak}`);
  // The breakdown's reserved and allocated peaks are the chart's peak row, as its table gives it to screen readers.
  const notes = (await page.locator('#breakdown').textContent()).replace(/\s+/g, ' ');
  const [, reserved, allocated] = notes.match(/reserved peak (.+? GiB), allocated (.+? GiB)/);
  const peakRow = page.locator('#memory-timeline tr.mt-peak-row td');
  assert.deepEqual(await peakRow.allTextContents(), [allocated, reserved, devicePeak]);

  // The chart's numbers are the selected accelerator's reply's.
  const memory = await page.evaluate(() => {
    const last = window.prenet.last();
    const id = document.querySelector('#sel').value;
    return last.predict.results.find((r) => r.hardware === id).memory;
  });
  assert.equal(Number(await chart.getAttribute('data-peak-bytes')), memory.peak_bytes_per_device);
  assert.equal(Number(await chart.getAttribute('data-capacity-bytes')), memory.capacity_bytes);
  await page.locator('#memory-timeline').screenshot({ path: join(shots, 'memory-timeline.png') });
});
