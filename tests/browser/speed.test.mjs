// Fast re-plans (issue #26, item 10): a cluster question's plan searches (one per accelerator) are spread over
// the client's workers, the merged answer is the one the API gives for all accelerators in one request, and an
// edit that leaves an accelerator's request as it was reuses that accelerator's answer instead of searching again.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { settled, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 800 } });
const HW = ['h100-sxm5-80gb', 'a100-sxm4-80gb', 'mi300x', 'l40s'];
const asked = (page) => page.evaluate(() => window.prenet.client.asked());
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const hashFor = (hw, batch) => `model=llama2-7b&gpus=8&batch=${batch}&precision=bf16&hw=${hw.join(',')}`;

async function ask(page, hash) {
  await page.evaluate((hash) => (location.hash = hash), hash);
  await page.waitForFunction((hash) => location.hash === `#${hash}`, hash);
  await settled(page, 120_000);
  return page.evaluate(() => window.prenet.last().predict);
}

describe('fast re-plans', () => {
  test('a cluster question over the worker pool: the one-request answer, every worker used, unchanged accelerators reused', async () => {
    const page = await harness().page(`index.html#${hashFor(HW, 1)}`);
    await settled(page, 120_000);
    const spread = await page.evaluate(() => window.prenet.last().predict);
    assert.equal(spread.results.length, HW.length);
    assert.ok(spread.results.every((r) => r.plan), 'every accelerator has its plan');
    // The same request in one piece, to one worker: the API answers every accelerator at once.
    const whole = await page.evaluate(async () => (await window.prenet.client.call(window.prenet.last().request)).doc);
    assert.deepEqual(spread, whole, 'the merged answer is the one-request answer, value for value');

    const poolSize = await page.evaluate(() => window.prenet.client.poolSize);
    const before = await asked(page);
    assert.equal(sum(before), HW.length, 'one request per accelerator');
    if (poolSize > 1) assert.ok(before.filter((n) => n > 0).length >= 2, `more than one worker searched: ${before}`);

    // One accelerator fewer: the other three requests are as they were, so nothing is searched again.
    const three = await ask(page, hashFor(HW.slice(0, 3), 1));
    assert.equal(sum(await asked(page)), HW.length, 'no accelerator searched again');
    assert.deepEqual(three.results, spread.results.slice(0, 3));

    // Another micro-batch changes every request: each is searched once more.
    const batch2 = await ask(page, hashFor(HW.slice(0, 3), 2));
    assert.equal(sum(await asked(page)), HW.length + 3);
    assert.equal(batch2.settings.batch, 2);
    assert.deepEqual(batch2, (await page.evaluate(async () => (await window.prenet.client.call(window.prenet.last().request)).doc)));

    // Back to batch 1: the answers kept from the first question.
    const again = await ask(page, hashFor(HW.slice(0, 3), 1));
    assert.equal(sum(await asked(page)), HW.length + 3);
    assert.deepEqual(again, three);
  });
});
