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

async function uploadAndCompare(page, path, kind) {
  const fixture = join(root, path);
  const name = path.split('/').pop();
  await page.click('#tab-file');
  await page.setInputFiles('#file-input', fixture);
  await page.waitForSelector('#file-status.good', { timeout: 60_000 });
  const said = await page.locator('#file-status').textContent();
  assert.match(said, kind, said);
  const native = cli(['features', '--model', fixture, '--json']);
  await page.waitForFunction((p) => window.prenet.last().features?.params === p, native.params, { timeout: 60_000 });
  await settled(page, 60_000);
  const command = await cliText(page);
  assert.match(command, new RegExp(`--model ${name.replace('.', '\\.')} `));
  const page_reply = await reply(page);
  assert.ok(page_reply.results.length > 0 && page_reply.results.every((r) => r.step.total_ms > 0), JSON.stringify(page_reply.results?.[0]?.step));
  compareReplies(page_reply, cli(splitCommand(command.replace(name, fixture)).slice(1)), `${name} upload`);
  return page_reply;
}

describe('model families through the page', () => {
  test('an SDXL UNet config, fine-tuned with LoRA on an RTX 4090: a diffusers config, the CLI\'s numbers', async () => {
    const page = await harness().page('index.html#hw=rtx-4090&ft=lora&batch=1');
    await settled(page, 60_000);
    await uploadAndCompare(page, SDXL, /diffusers/i);
  });

  test('a Mamba-2 config on an H100: a Hugging Face config (mamba2), the CLI\'s numbers', async () => {
    const page = await harness().page('index.html#hw=h100-sxm5-80gb');
    await settled(page, 60_000);
    await uploadAndCompare(page, MAMBA2, /a Hugging Face config \(mamba2\)/);
  });
});
