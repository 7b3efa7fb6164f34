// Issue #26, items 1, 3 and 4: a cluster question leaves the micro-batch to the plan search (the zoo model's
// single-device batch is the page's default for one device only); the words under the results say what the
// run is (a cluster step's tokens, plurals, LoRA's trainable parameters, attention only where there is some,
// no CLI flags or docs paths); an input too large for the model is that input's error, not the model's, with
// the earlier results dimmed and the message inside its box.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cli, compareReplies, root, settled, splitCommand, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 800 } });

const reply = (page) => page.evaluate(() => window.prenet.last().predict);
const text = async (page, selector) => (await page.locator(selector).textContent()).replace(/\s+/g, ' ');
const cliText = (page) => page.locator('#cli').textContent();

describe('cluster questions, the words that describe the run, inputs too large for the model', () => {
  test('a cluster question leaves the micro-batch to the plan search; one typed is sent; one device keeps the page’s batch', async () => {
    const cluster = 'model=llama3-8b&gpus=64&seq=8192&gtokens=1048576&precision=bf16&hw=h100-sxm5-80gb';
    const page = await harness().page(`index.html#${cluster}`);
    await settled(page, 180_000);
    const command = await cliText(page);
    assert.doesNotMatch(command, / --batch /, 'a blank batch on a cluster question is not sent');
    // A language model's budget is tokens: the samples budget the API would not use is not in the command.
    assert.doesNotMatch(command, / --samples | --epochs /);
    assert.match(command, / --tokens \d+ /);
    // The field says who chooses it, in the option table's words.
    assert.equal(await page.getAttribute('#batch', 'placeholder'), 'searched with the layout');
    const r = await reply(page);
    const plan = r.results[0].plan;
    assert.equal(plan.searched, true);
    // The page's answer is the CLI's without --batch (the micro-batch searched, not pinned at 8).
    compareReplies(r, cli(['predict', '--model', 'llama3-8b', '--hardware', 'h100-sxm5-80gb', '--gpus', '64', '--seq', '8192',
      '--global-batch-tokens', '1048576', '--precision', 'bf16', '--tokens', '1000000000', '--json']), 'cluster, batch searched');
    compareReplies(r, cli(splitCommand(command).slice(1)), 'the page’s command line');
    // The step is the plan's global batch, 1,048,576 tokens, not one micro-batch's.
    const assumptions = await text(page, '#assumptions');
    assert.match(assumptions, /on a global batch of 128 sequences of 8,192 tokens \(1,048,576 tokens\) per optimizer step/);
    assert.doesNotMatch(assumptions, /a batch of 8 sequences/);
    // A micro-batch the user types is pinned.
    await page.fill('#batch', '2');
    await settled(page, 180_000);
    assert.match(await cliText(page), / --batch 2 /);
    assert.equal((await reply(page)).results[0].plan.micro_batch, 2);
    // One device again (a global batch is a cluster question too): the page's own default batch is back.
    await page.fill('#batch', '');
    await page.fill('#global_batch_tokens', '');
    await page.fill('#gpus', '1');
    await settled(page, 60_000);
    assert.match(await cliText(page), / --batch 8 /);
    assert.equal(await page.getAttribute('#batch', 'placeholder'), '8');
    assert.match(await text(page, '#assumptions'), /on a batch of 8 sequences of 8,192 tokens \(65,536 tokens\)/);
  });

  test('a flag with words is a select: sequence parallelism off and a checkpointing kind reach the API and the command line', async () => {
    const page = await harness().page('index.html#model=gpt2-large&gpus=8&dp=2&tp=4&pp=1&batch=4&gbatch=8&precision=bf16&hw=a100-sxm4-80gb');
    await settled(page, 60_000);
    const options = (id) => page.$$eval(`#${id} option`, (els) => els.map((el) => el.value));
    assert.deepEqual(await options('sequence_parallel'), ['', 'on', 'off']);
    const kinds = await options('checkpointing');
    assert.equal(kinds[0], '');
    assert.ok(kinds.includes('attention-core') && kinds.includes('full') && !kinds.includes('on'), kinds.join());
    assert.equal((await reply(page)).results[0].plan.sequence_parallel, true, 'tp 4 and not asked: on');
    await page.$eval('#sequence_parallel-field', (el) => { const d = el.closest('details'); if (d) d.open = true; });
    await page.selectOption('#sequence_parallel', 'off');
    await page.waitForFunction(() => window.prenet.last().request?.sequence_parallel === 'off', null, { timeout: 60_000 });
    await page.$eval('#checkpointing-field', (el) => { const d = el.closest('details'); if (d) d.open = true; });
    await page.selectOption('#checkpointing', 'attention-core');
    await page.waitForFunction(() => window.prenet.last().request?.checkpointing === 'attention-core', null, { timeout: 60_000 });
    await settled(page, 60_000);
    const command = await cliText(page);
    assert.match(command, / --sequence-parallel off /);
    assert.match(command, / --checkpointing attention-core /);
    const r = await reply(page);
    assert.equal(r.results[0].plan.sequence_parallel, false);
    compareReplies(r, cli(splitCommand(command).slice(1)), 'the page’s command line');
    // Back to the default: the words leave the request and the command line.
    await page.selectOption('#sequence_parallel', '');
    await page.waitForFunction(() => window.prenet.last().request?.sequence_parallel === undefined, null, { timeout: 60_000 });
    await settled(page, 60_000);
    assert.doesNotMatch(await cliText(page), /--sequence-parallel/);
  });

  test('the words: one is singular, LoRA’s trainable parameters shown, no attention for a GRU, no flags, docs paths or run-together names', async () => {
    // Selective checkpointing makes one device a (one-device) cluster question: a plan on "1 device".
    const page = await harness().page('index.html#model=gpt2&batch=1&ckpt=selective&hw=gb300');
    await settled(page, 60_000);
    const assumptions = await text(page, '#assumptions');
    assert.match(assumptions, /\bon 1 device of each accelerator/);
    assert.match(assumptions, /global batch of 1 sequence of 1,024 tokens \(1,024 tokens\)/);
    assert.doesNotMatch(assumptions, /\b1 (devices|sequences)\b/);
    assert.doesNotMatch(assumptions, /--|docs\/|precision source/, 'no CLI flags or repository paths');
    // The fields' tooltips (the option table's help) name fields, not flags, and no repository paths.
    const tips = await page.locator('#train-form [title], #cluster-form [title]').evaluateAll((els) => els.map((el) => el.title));
    assert.ok(tips.length > 10);
    for (const tip of tips) assert.doesNotMatch(tip, /--[a-z]|\((docs|models)\//, tip);
    assert.match(await page.getAttribute('#batch', 'title'), /a step is “Gradient accumulation” micro-batches/);
    await page.click('[data-pick="gb300"]');
    assert.match(await text(page, '#breakdown'), /Plan on 1 device\b/);
    // The vendor and the name are two words, to a screen reader and in copied text.
    assert.match(await text(page, '#results-table tbody th'), /^NVIDIA GB300/);
    assert.doesNotMatch(await page.locator('#results-table').textContent(), /NVIDIAGB300/);

    // LoRA: the trainable count is shown, and the parameters' tooltip no longer calls all of them trainable.
    await page.goto(`${harness().url}index.html#model=llama2-7b&ft=lora&hw=h100-sxm5-80gb&batch=1&seq=512`);
    await settled(page, 60_000);
    await page.waitForFunction(() => window.prenet.last().features?.trainable_params === 4194304, null, { timeout: 60_000 });
    const stats = page.locator('#model-summary .stat');
    assert.equal(await stats.filter({ hasText: 'Trainable' }).locator('.value').textContent(), '4.19M');
    assert.equal(await stats.filter({ hasText: 'Parameters' }).getAttribute('title'), '6,742,609,920 parameters, 4,194,304 of them trainable');
    assert.match(await text(page, '#assumptions'), /\(6\.74B parameters, of which 4\.19M trainable\)/);

    // A recurrent model has no attention: nothing about attention kernels.
    await page.goto(`${harness().url}index.html#hw=h100-sxm5-80gb`);
    await settled(page);
    await page.click('#tab-file');
    await page.setInputFiles('#file-input', join(root, 'tests/fixtures/keras/embedding-gru-tfjs.json'));
    await page.waitForSelector('#file-status.good');
    await page.waitForFunction(() => window.prenet.last().predict?.model?.name !== 'gpt2' && window.prenet.settled());
    assert.equal((await reply(page)).settings.attention, null, 'the API reports no attention kernel for a GRU');
    assert.doesNotMatch(await text(page, '#assumptions'), /Attention runs/);
    // A Keras functional model's class is Model: "a Keras Model", not "a Keras Model model".
    await page.setInputFiles('#file-input', join(root, 'tests/fixtures/keras/mnist-functional-keras2.1.1.json'));
    await page.waitForFunction(() => /^Using mnist-functional/.test(document.getElementById('file-status').textContent));
    assert.match(await text(page, '#file-status'), /a Keras Model\b/);
    assert.doesNotMatch(await text(page, '#file-status'), /Model model/);
  });

  test('a batch or sequence too large for the model: that field is marked, the model is not blamed, the results dim, the numbers wrap', async () => {
    const page = await harness().page('index.html#model=gpt2&hw=h100-sxm5-80gb');
    await settled(page, 60_000);
    const before = await reply(page);
    for (const [field, value] of [['batch', '1000000000'], ['seq', '10000000']]) {
      await page.fill(`#${field}`, value);
      await page.waitForSelector(`#${field}[aria-invalid=true]`, { timeout: 60_000 });
      assert.match(await text(page, `#${field}-error`), new RegExp(`'${field}' ${value} is too large for this model`));
      const error = await text(page, '#error');
      assert.doesNotMatch(error, /The model has an error/);
      assert.match(error, /Not updated: the results below are for the last valid input/);
      if (field === 'batch') assert.match(error, /last valid input \(Batch size 8\)/, 'the value the kept results are for');
      assert.equal(await page.locator('[data-option=model].invalid').count(), 0, 'the model panel is not marked');
      assert.doesNotMatch(await text(page, '#model-summary'), /too large|elements|position table/);
      assert.equal(await page.locator('.results-card.stale').count(), 1, 'the earlier results are dimmed');
      assert.deepEqual(await reply(page), before, 'the results kept are those of the last valid input');
      // Long numbers wrap inside the error box and beside the field.
      for (const box of ['#error', `#${field}-error`])
        assert.ok(await page.locator(box).evaluate((el) => el.scrollWidth <= el.clientWidth + 1), `${box} overflows`);
      await page.fill(`#${field}`, '');
      await settled(page, 60_000);
      assert.notEqual(await page.getAttribute(`#${field}`, 'aria-invalid'), 'true');
      assert.equal(await page.locator('.results-card.stale').count(), 0);
    }
  });
});
