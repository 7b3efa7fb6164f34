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

test('a cluster question charts the fullest stage\'s device over one step, its peak the table\'s', async () => {
  // A single device under a global batch of 1M tokens is a plan (gradient accumulation searched): a cluster
  // question whose breakdown used to send the user to the CLI for this chart.
  const page = await harness().page('index.html#model=llama2-7b&gpus=8&precision=bf16&gtokens=1048576&hw=h100-sxm5-80gb');
  await settled(page, 120_000);
  const chart = page.locator('#memory-timeline svg.memory-timeline');
  await chart.waitFor({ timeout: 120_000 });
  const memory = await page.evaluate(() => window.prenet.last().predict.results[0].memory);
  assert.equal(Number(await chart.getAttribute('data-peak-bytes')), memory.peak_bytes_per_device);
  assert.equal(Number(await chart.getAttribute('data-capacity-bytes')), memory.capacity_bytes);
  const breakdown = (await page.locator('#breakdown').textContent()).replace(/\s+/g, ' ');
  assert.match(breakdown, /Plan on 8 devices/);
  assert.match(breakdown, /Per-layer times are for runs on one device/);
  assert.doesNotMatch(breakdown, /the CLI draws/);
  // On one device of an 8-device node, the plan names neither a node it does not fill nor data parallelism.
  await page.fill('#gpus', '1');
  await settled(page, 120_000);
  await page.waitForFunction(() => window.prenet.last().predict?.results?.[0]?.plan?.gpus === 1);
  const one = (await page.locator('#breakdown').textContent()).replace(/\s+/g, ' ');
  assert.match(one, /Plan on 1 device .*Devices\s*1 of a node of 8/);
  assert.doesNotMatch(await page.locator('#breakdown .plan-line').textContent(), /DDP|ZeRO/);
});

test('a pipeline\'s breakdown lists every stage\'s peak, the API\'s memory.stages, and says which is charted', async () => {
  const page = await harness().page('index.html#model=gpt2&gpus=4&pp=4&dp=1&tp=1&precision=bf16&batch=1&accum=8&hw=a100-sxm4-80gb');
  await settled(page, 120_000);
  await page.locator('#memory-timeline svg.memory-timeline').waitFor({ timeout: 120_000 });
  const result = await page.evaluate(() => window.prenet.last().predict.results[0]);
  assert.equal(result.memory.stages.length, 4);
  const breakdown = (await page.locator('#breakdown').textContent()).replace(/\s+/g, ' ');
  const listed = breakdown.match(/each pipeline stage's allocated peak, first to last: ([^;.]*(?:\.\d+[^;.]*)*)/);
  assert.ok(listed, breakdown);
  assert.equal(listed[1].split(', ').length, 4, listed[1]);
  assert.match(breakdown, new RegExp(`the fullest, stage ${result.plan.fullest_stage + 1}, is charted below`));
});
