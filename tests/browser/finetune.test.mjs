// Fine-tuning in the page (issue #15): the "Training" choice with its LoRA fields, the trainable parameters of
// each mode, and the advice that knows fine-tuning ("fits with QLoRA rank 16"), applied by a button. Every number
// shown is compared with the native CLI's, run with the command line the page shows.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cli, compareReplies, settled, splitCommand, useHarness } from './helpers.mjs';

const harness = useHarness();

const reply = (page) => page.evaluate(() => window.prenet.last().predict);
async function checkCommandLine(page, label) {
  const args = splitCommand(await page.locator('#cli').textContent());
  compareReplies(await reply(page), cli(args.slice(1)), label);
}

describe('fine-tuning in the page', () => {
  test('LoRA, QLoRA and frozen parts: the fields each mode needs, its trainable parameters, the CLI\'s numbers', async () => {
    const page = await harness().page('index.html#model=llama2-7b&hw=a100-sxm4-80gb&batch=1&seq=512');
    await settled(page, 60_000);
    // Pre-training: no LoRA fields, every parameter trains.
    assert.equal(await page.locator('#lora_rank').isVisible(), false);
    const pre = await reply(page);
    assert.equal(pre.model.trainable_params ?? pre.model.params, pre.model.params);

    await page.selectOption('#finetune', 'lora');
    await page.locator('#lora_rank').waitFor({ state: 'visible' });
    await page.fill('#lora_rank', '8');
    await page.fill('#lora_targets', 'q,v');
    await page.locator('#lora_targets').dispatchEvent('change');
    await page.waitForFunction(() => window.prenet.last().predict?.model?.trainable_params === 4194304, null, { timeout: 60_000 });
    await settled(page, 60_000);
    // PEFT's print_trainable_parameters() for Llama-2-7B, r=8 on q_proj and v_proj.
    assert.equal((await reply(page)).model.trainable_params, 4194304);
    await checkCommandLine(page, 'lora r8 q,v');

    await page.selectOption('#finetune', 'qlora');
    await page.waitForFunction(() => window.prenet.last().predict?.settings?.finetune === 'qlora', null, { timeout: 60_000 });
    await settled(page, 60_000);
    const q = await reply(page);
    assert.ok(q.results[0].memory.peak_bytes_per_device < pre.results[0].memory.peak_bytes_per_device / 4, 'a 4-bit base: far less memory than pre-training');
    await checkCommandLine(page, 'qlora');

    await page.selectOption('#finetune', 'freeze');
    // What to freeze is an advanced field: under "More training options".
    await page.locator('#freeze').waitFor({ state: 'attached' });
    if (!(await page.locator('#freeze').isVisible())) await page.locator('#train-form details.more > summary').click();
    await page.locator('#freeze').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#lora_rank').isVisible(), false, 'no LoRA fields when freezing');
    await page.fill('#freeze', 'embeddings');
    await page.locator('#freeze').dispatchEvent('change');
    await page.waitForFunction(() => window.prenet.last().predict?.settings?.freeze === 'embeddings', null, { timeout: 60_000 });
    await settled(page, 60_000);
    const f = await reply(page);
    assert.ok(f.model.trainable_params < f.model.params && f.model.trainable_params > 0.9 * f.model.params, `${f.model.trainable_params}`);
    await checkCommandLine(page, 'freeze embeddings');
  });

  test('a full fine-tune that does not fit on a 24 GB card: the advice offers LoRA rank 16, and its button applies it', async () => {
    const page = await harness().page('index.html#model=llama2-7b&hw=rtx-4090&batch=1&seq=512&ft=full');
    await settled(page, 60_000);
    const advice = (await reply(page)).results[0].memory.advice.finetune;
    assert.deepEqual(advice.options, { finetune: 'lora', lora_rank: 16 }, 'bf16 (the page\'s default): LoRA is the lightest change');
    const button = page.locator('#verdict [data-apply]', { hasText: /LoRA rank 16/ });
    await button.first().waitFor();
    const label = await button.first().textContent();
    assert.match(label, /^Use LoRA rank 16 \([\d.]+ GB\)$/);
    assert.doesNotMatch(await page.locator('#verdict').textContent(), /--|rtx-4090/, 'the page\'s words: no flags, no ids');
    await button.first().click();
    await page.waitForFunction(() => window.prenet.last().predict?.settings?.finetune === 'lora', null, { timeout: 60_000 });
    await settled(page, 60_000);
    const r = await reply(page);
    assert.equal(r.settings.lora_rank, 16);
    assert.equal(r.results[0].memory.fits, true);
    assert.equal(await page.inputValue('#finetune'), 'lora');
    await checkCommandLine(page, 'after the QLoRA suggestion');
  });
});
