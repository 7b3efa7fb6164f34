// ONNX files through the page's upload (docs/importers.md): the binary file is read on the device and handed to
// the wasm module base64-encoded; its parameters equal the CLI's, the command line names the file, unknown ops
// are named on the page, and a bad file shows a message while the page keeps its model.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, compareReplies, root, settled, shot, splitCommand, start } from './helpers.mjs';

let h;
before(async () => {
  h = await start({ testHooks: true });
});
after(async () => h?.close());
afterEach(async () => {
  for (const page of h.context.pages()) await page.close();
  const problems = h.problems.splice(0);
  assert.deepEqual(problems, [], 'console errors or outside requests');
});

const fixtures = join(root, 'tests/fixtures/onnx');
const reply = (page) => page.evaluate(() => window.prenet.last().predict);
const cliText = (page) => page.locator('#cli').textContent();

describe('ONNX upload', () => {
  test('an exported model imports with the CLI\'s numbers', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#tab-file');
    const fixture = join(fixtures, 'resnet18.onnx');
    await page.setInputFiles('#file-input', fixture);
    await page.waitForSelector('#file-status.good');
    assert.match(await page.locator('#file-status').textContent(), /resnet18\.onnx: an ONNX model, 11\.7M parameters/);
    await settled(page);
    assert.match(await page.locator('#model-in-use').textContent(), /resnet18\.onnx/);
    const native = cli(['features', '--model', fixture, '--json']);
    assert.equal(native.params, JSON.parse(readFileSync(join(fixtures, 'fixtures.json'), 'utf8')).models.resnet18.params);
    await page.waitForFunction((params) => window.prenet.last().features?.params === params, native.params);
    // The command line names the file and prints the same numbers.
    const command = await cliText(page);
    assert.match(command, /--model resnet18\.onnx /);
    compareReplies(await reply(page), cli(splitCommand(command.replace('resnet18.onnx', fixture)).slice(1)), 'resnet18.onnx upload');
  });

  test('unknown ops are named on the page', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#tab-file');
    await page.setInputFiles('#file-input', join(fixtures, 'unknown_op.onnx'));
    await page.waitForSelector('#file-status.good');
    assert.match(await page.locator('#file-status').textContent(), /1 op with no kind of their own \(com\.example\.Frobnicate\)/);
    await settled(page);
    await page.waitForSelector('#model-summary .unknown-ops');
    assert.match(await page.locator('#model-summary .unknown-ops').textContent(), /com\.example\.Frobnicate × 1/);
    assert.deepEqual((await reply(page)).model.unknown_ops, [{ op: 'com.example.Frobnicate', count: 1 }]);
    await shot(page, 'onnx-unknown-ops');
  });

  test('a bad ONNX file shows a message and the page keeps its model', async () => {
    const page = await h.page();
    await settled(page);
    const before = await reply(page);
    await page.click('#tab-file');
    const good = readFileSync(join(fixtures, 'lstm_lm_tied.onnx'));
    const truncated = join(tmpdir(), 'prenet-truncated.onnx');
    writeFileSync(truncated, good.subarray(0, good.length >> 1));
    await page.setInputFiles('#file-input', truncated);
    await page.waitForFunction(() => /could not be used/.test(document.querySelector('#file-status').textContent));
    assert.equal(await page.locator('#file-status').getAttribute('class'), 'file-status bad');
    assert.match(await page.locator('#file-status').textContent(), /truncated or corrupt/);
    const text = join(tmpdir(), 'prenet-not-onnx.onnx');
    writeFileSync(text, '{"model_type": "gpt2"}');
    await page.setInputFiles('#file-input', text);
    await page.waitForFunction(() => /looks like JSON/.test(document.querySelector('#file-status').textContent));
    await shot(page, 'onnx-bad-file');
    // Still the model it had, and still computing.
    assert.deepEqual((await reply(page)).model, before.model);
    await page.fill('#batch', '2');
    await settled(page);
    assert.equal((await reply(page)).settings.batch, 2);
  });
});
