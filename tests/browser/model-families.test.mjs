// The model families of issue #30 through the page's upload: a diffusers SDXL UNet config (fine-tuned with LoRA
// on an RTX 4090, the everyday question) and a Mamba-2 config (pretraining on an H100). Each is named for what it
// is, and the page's results are the CLI's for the command line the page shows.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { cli, compareReplies, root, settled, splitCommand, useHarness } from './helpers.mjs';

const harness = useHarness();
const MAMBA2 = 'tests/fixtures/hf/mamba-codestral-7b-v0.1.json';
const SDXL = 'tests/fixtures/diffusers/sdxl_unet.json';

const reply = (page) => page.evaluate(() => window.prenet.last().predict);
const cliText = (page) => page.locator('#cli').textContent();

async function uploadAndCompare(page, path, kind, cliOptions = []) {
  const fixture = join(root, path);
  const name = path.split('/').pop();
  await page.click('#tab-file');
  await page.setInputFiles('#file-input', fixture);
  await page.waitForSelector('#file-status.good', { timeout: 60_000 });
  const said = await page.locator('#file-status').textContent();
  assert.match(said, kind, said);
  // The page's options (a LoRA fine-tune counts its adapters among the parameters) with the CLI's.
  const native = cli(['features', '--model', fixture, ...cliOptions, '--json']);
  await page.waitForFunction((p) => window.prenet.last().features?.params === p, native.params, { timeout: 60_000 });
  await settled(page, 60_000);
  const command = await cliText(page);
  assert.match(command, new RegExp(`--model ${name.replace('.', '\\.')} `));
  const page_reply = await reply(page);
  assert.ok(page_reply.results.length > 0 && page_reply.results.every((r) => r.step.total_ms > 0), JSON.stringify(page_reply.results?.[0]?.step));
  compareReplies(page_reply, cli(splitCommand(command.replace(name, fixture)).slice(1)), `${name} upload`);
  return page_reply;
}

// One config of every type issue #30 added, each named for what it is and with the CLI's parameter count. The
// diffusers configs come after the language models: the language-model preset's global batch in tokens must not be
// carried over to a model without tokens (it was, and the page stood on an error).
const EVERY_TYPE = [
  ...['llava-1.5-7b-hf', 'llava-v1.6-mistral-7b-hf', 'paligemma-3b-pt-224', 'qwen2-vl-2b-instruct', 'qwen2.5-vl-7b-instruct',
    'idefics3-8b-llama3', 'llama-4-scout-17b-16e', 'llama-4-maverick-17b-128e-text', 'olmo-2-1124-7b', 'mamba-2.8b-hf',
    'falcon-mamba-7b', 'jamba-v0.1', 'zamba2-2.7b', 'falcon-h1-0.5b-base', 'bamba-9b'].map((f) => [`tests/fixtures/hf/${f}.json`, /a Hugging Face config \(\w+\)/]),
  ...['sd15_unet', 'sd21_unet', 'sd3_medium_transformer', 'flux_dev_transformer'].map((f) => [`tests/fixtures/diffusers/${f}.json`, /a diffusers \w+ config/]),
];

describe('model families through the page', () => {
  test('an SDXL UNet config, fine-tuned with LoRA on an RTX 4090: a diffusers config, the CLI\'s numbers', async () => {
    const page = await harness().page('index.html#hw=rtx-4090&ft=lora&batch=1');
    await settled(page, 60_000);
    const running = await uploadAndCompare(page, SDXL, /a diffusers UNet2DConditionModel config/, ['--finetune', 'lora']);
    // The pipeline's frozen encoders: a field of a diffusers config's own. Cached (latents and text embeddings
    // computed ahead), the step is the denoiser's alone, and the command line says so.
    assert.equal(await page.$eval('#encoders-field', (el) => el.hidden), false, 'the encoders field shows for a diffusers config');
    await page.$eval('#encoders-field', (el) => (el.closest('details').open = true));
    await page.selectOption('#encoders', 'cached');
    await page.waitForFunction(() => window.prenet.last().request?.encoders === 'cached', null, { timeout: 60_000 });
    await settled(page, 60_000);
    const command = await cliText(page);
    assert.match(command, / --encoders cached\b/);
    const cached = await reply(page);
    compareReplies(cached, cli(splitCommand(command.replace('sdxl_unet.json', join(root, SDXL))).slice(1)), 'SDXL, encoders cached');
    assert.ok(cached.results[0].step.forward_ms < running.results[0].step.forward_ms, 'no encoder forward passes');
    // Another model has no encoders: the field hides and the choice is not carried over.
    await page.setInputFiles('#file-input', join(root, 'tests/fixtures/hf/olmo-2-1124-7b.json'));
    await page.waitForFunction(() => /olmo-2/.test(document.getElementById('file-status').textContent));
    await settled(page, 60_000);
    assert.equal(await page.$eval('#encoders-field', (el) => el.hidden), true);
    assert.doesNotMatch(await cliText(page), /--encoders/);
  });

  test('every new config type uploads, is named for what it is and has the CLI\'s parameter count', async () => {
    const page = await harness().page('index.html#hw=h100-sxm5-80gb');
    await settled(page, 60_000);
    await page.click('#tab-file');
    for (const [path, kind] of EVERY_TYPE) {
      const fixture = join(root, path);
      await page.setInputFiles('#file-input', fixture);
      const name = path.split('/').pop();
      await page.waitForFunction((n) => {
        const s = document.getElementById('file-status');
        return /good|bad/.test(s.className) && s.textContent.includes(n);
      }, name, { timeout: 60_000 });
      const said = await page.locator('#file-status').textContent();
      assert.equal(await page.locator('#file-status').getAttribute('class'), 'file-status good', said);
      assert.match(said, kind, said);
      const native = cli(['features', '--model', fixture, '--json']);
      await page.waitForFunction((p) => window.prenet.last().features?.params === p, native.params, { timeout: 60_000 });
      await settled(page, 60_000);
      assert.ok((await reply(page)).results[0].step.total_ms > 0, `${name}: a step time`);
      if (path.includes('diffusers')) assert.equal((await page.evaluate(() => window.prenet.state())).global_batch_tokens ?? null, null);
    }
  });

  test('a Mamba-2 config on an H100: a Hugging Face config (mamba2), the CLI\'s numbers', async () => {
    const page = await harness().page('index.html#hw=h100-sxm5-80gb');
    await settled(page, 60_000);
    await uploadAndCompare(page, MAMBA2, /a Hugging Face config \(mamba2\)/);
    assert.equal(await page.$eval('#encoders-field', (el) => el.hidden), true, 'no encoders field for a language model');
  });
});
