// The importers through the page's upload (issue #16): a Keras model.to_json() file and Hugging Face configs of
// the newer families, each with the CLI's parameter count; a layer the importer cannot model is listed on the
// page, not dropped; a broken file of each kind is refused with its message and the page keeps working.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, root, settled, useHarness } from './helpers.mjs';

const harness = useHarness();

const status = (page) => page.locator('#file-status').textContent();

async function upload(page, name, text) {
  await page.setInputFiles('#file-input', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
  await page.waitForFunction((n) => {
    const s = document.getElementById('file-status');
    return /good|bad/.test(s.className) && s.textContent.includes(n);
  }, name, { timeout: 60_000 });
}

describe('importers through the page', () => {
  test('Keras and Hugging Face uploads: the kind named, the CLI\'s parameter count, unknown layers listed', async () => {
    const page = await harness().page('index.html#hw=a100-sxm4-80gb');
    await settled(page);
    await page.click('#tab-file');
    const fixtures = [
      ['tests/fixtures/keras/mnist-sequential-keras2.1.1.json', /a Keras Sequential model/],
      ['tests/fixtures/keras/mnist-functional-keras2.1.1.json', /a Keras (Functional model|Model\b)/],
      ['tests/fixtures/hf/gemma-2-2b.json', /a Hugging Face config \(gemma2\)/],
      ['tests/fixtures/hf/qwen3-30b-a3b.json', /a Hugging Face config \(qwen3_moe\)/],
      ['tests/fixtures/hf/deepseek-v3.json', /a Hugging Face config \(deepseek_v3\)/],
    ];
    for (const [path, kind] of fixtures) {
      const file = join(root, path);
      const name = path.split('/').pop();
      await upload(page, name, readFileSync(file, 'utf8'));
      const said = await status(page);
      assert.match(said, kind, said);
      assert.equal(await page.locator('#file-status').getAttribute('class'), 'file-status good', said);
      const native = cli(['features', '--model', file, '--json']);
      await page.waitForFunction((p) => window.prenet.last().features?.params === p, native.params, { timeout: 60_000 });
      await settled(page, 60_000);
    }
    // A Keras layer PreNeT cannot model is listed under the upload, by name, not dropped in silence.
    const doc = JSON.parse(readFileSync(join(root, 'tests/fixtures/keras/mnist-sequential-keras2.1.1.json'), 'utf8'));
    doc.config.splice(1, 0, { class_name: 'GaussianNoise', config: { name: 'noise_1', stddev: 0.1 } });
    await upload(page, 'with-noise.json', JSON.stringify(doc));
    const notes = await page.locator('#file-status .import-notes li').allTextContents();
    assert.ok(notes.some((n) => /GaussianNoise/.test(n)), notes.join(' | '));
    const dir = mkdtempSync(join(tmpdir(), 'prenet-keras-'));
    writeFileSync(join(dir, 'with-noise.json'), JSON.stringify(doc));
    const native = cli(['features', '--model', join(dir, 'with-noise.json'), '--json']);
    rmSync(dir, { recursive: true, force: true });
    assert.ok(native.import_notes?.some((n) => /GaussianNoise/.test(n)), JSON.stringify(native.import_notes));
    assert.equal(await page.evaluate(() => window.prenet.last().features?.params), native.params);
  });

  test('a broken file of each kind: its message, and the page keeps the model it had', async () => {
    const page = await harness().page('index.html#hw=t4');
    await settled(page);
    await page.click('#tab-file');
    const before = await page.locator('#model-in-use').textContent();
    const keras = { class_name: 'Sequential', config: { layers: [{ class_name: 'Dense', config: { units: 4 } }] } };
    await upload(page, 'keras-no-input.json', JSON.stringify(keras));
    assert.match(await status(page), /keras-no-input\.json could not be used: .*input shape/);
    const gemma = JSON.parse(readFileSync(join(root, 'tests/fixtures/hf/gemma-2-2b.json'), 'utf8'));
    gemma.layer_types = ['sliding_attention'];
    await upload(page, 'gemma-bad-layer-types.json', JSON.stringify(gemma));
    assert.match(await status(page), /gemma-bad-layer-types\.json could not be used: .*layer_types/);
    assert.equal(await page.locator('#model-in-use').textContent(), before);
    await page.fill('#batch', '2');
    await settled(page);
  });
});
