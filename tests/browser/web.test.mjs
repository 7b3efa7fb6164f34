// The web calculator (dist/, built by `npm run build`) in headless Chromium: the default table, choosing a
// model and accelerators through the page, uploading configs (good and broken), the layer editor, custom
// hardware, the URL round trip, the widget, exports, and the page's numbers against the native CLI's.
// Every test fails on a console error or on any request that does not go to the local server.
// Screenshots go to test-results/.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TIME_TOLERANCE, cli, compareReplies, dist, divergences, root, settled, shot, splitCommand, start } from './helpers.mjs';

let h;
const catalogue = cli(['hardware', '--json']).hardware;

before(async () => {
  h = await start({ testHooks: true });
});
after(async () => {
  await h?.close();
  if (divergences.length)
    console.log(`wasm and native differ beyond 1e-9 (within ${TIME_TOLERANCE * 100}%) in ${divergences.length} numbers, e.g.:\n  ${divergences.slice(0, 5).join("\n  ")}`);
});
afterEach(async () => {
  for (const page of h.context.pages()) await page.close();
  const problems = h.problems.splice(0);
  assert.deepEqual(problems, [], 'console errors or outside requests');
});

const rows = (page) => page.locator('#results-table tbody tr');
const reply = (page) => page.evaluate(() => window.prenet.last().predict);
const cliText = (page) => page.locator('#cli').textContent();

/** Runs the command line the page shows and compares its numbers with the page's. */
async function checkCommandLine(page, label) {
  const args = splitCommand(await cliText(page));
  assert.equal(args[0], 'prenet');
  assert.equal(args[1], 'predict');
  compareReplies(await reply(page), cli(args.slice(1)), label);
}

describe('web calculator', () => {
  test('lists every accelerator with the sources its sheet cites, linked', async () => {
    const page = await h.page();
    await settled(page);
    const ids = await page.$$eval('#hw-list input[data-hw]', (els) => els.map((e) => e.dataset.hw));
    assert.deepEqual(new Set(ids), new Set(catalogue.map((hw) => hw.id)));
    for (const id of ['tpu-v6e', 'mi355x', 'trainium2', 'gaudi3']) assert.ok(ids.includes(id), id);
    const item = page.locator('.hw-item', { has: page.locator('input[data-hw="tpu-v4"]') });
    await item.locator('.hw-sources summary').click();
    const cited = catalogue.find((hw) => hw.id === 'tpu-v4').sources;
    assert.ok(Object.keys(cited).length >= 2);
    const links = await item.locator('.hw-sources a').evaluateAll((as) => as.map((a) => a.href));
    assert.ok(links.some((href) => href.startsWith('https://cloud.google.com/tpu/')), links.join(' '));
    assert.equal(await item.locator('.hw-sources li').count(), Object.keys(cited).length);
  });

  test('loads with every catalogue accelerator for GPT-2, batch 8, bf16, AdamW', async () => {
    const page = await h.page();
    await settled(page);
    assert.equal(await rows(page).count(), catalogue.length);
    assert.equal(await page.locator('#results-table tr.best').count(), 1, 'one best choice highlighted');
    assert.match(await page.locator('#verdict').textContent(), /Best choice: .+ trains in .+ for \$/);
    const assumptions = await page.locator('#assumptions').textContent();
    for (const words of ['gpt2', 'batch of 8', '1,024 tokens', 'bf16', 'AdamW', 'one accelerator']) assert.ok(assumptions.includes(words), `assumptions mention ${words}`);
    const command = await cliText(page);
    assert.ok(command.startsWith('prenet predict --model gpt2 --hardware all --batch 8 --precision bf16 '), command);
    assert.ok(command.endsWith(' --json'), command);
    await checkCommandLine(page, 'default');
    // The model panel, the chart and the breakdown follow.
    await page.waitForSelector('#model-summary .stat');
    assert.match(await page.locator('#model-summary').textContent(), /124M/);
    await page.waitForSelector('#chart canvas');
    assert.match(await page.locator('#breakdown').textContent(), /gemm/);
    // The selected accelerator's layers, timed by a request of their own: GPT-2's MLPs lead (with the default
    // fused attention; eager attention, materialising the scores, led before flash became the default).
    await page.waitForSelector('#layer-breakdown .bars li');
    assert.match(await page.locator('#layer-breakdown .bars li').first().textContent(), /mlp ×12/);
    assert.match((await page.locator('#privacy').textContent()).replace(/\s+/g, ' '), /Nothing you enter or upload leaves this page/);
    await shot(page, 'default-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(300);
    await shot(page, 'default-phone', { fullPage: false });
    await page.locator('.results-card').screenshot({ path: join(root, 'test-results/default-phone-results.png') });
  });

  test("precomputed first result: the default question is answered from the build's startup.json, as the worker answers it", async () => {
    const page = await h.page();
    await settled(page);
    const given = (await page.evaluate(() => window.prenet.client.precomputed())).map((t) => JSON.parse(t).command);
    assert.deepEqual(given, ['options', 'predict', 'features'], 'the page found its first requests in the file');
    // The worker's own answer to the request the table shows: the same, value for value.
    const worker = await page.evaluate(async () => JSON.parse((await window.prenet.client.remote.request(JSON.stringify(window.prenet.last().request))).reply));
    assert.deepEqual(await reply(page), worker);
    // A second identical request goes to the worker (each precomputed reply is given once).
    const again = await page.evaluate(async () => (await window.prenet.client.call({ command: 'options' })).doc);
    assert.equal(await page.evaluate(() => window.prenet.client.precomputed().length), 3);
    assert.ok(Array.isArray(again.options) && again.options.length > 0);

    // A file that is not the build's answers (broken JSON, the wrong shapes): the worker answers everything.
    for (const body of ['{"replies": [', '{"replies": {"options": 1}}', '{"replies": [null, 1, {"request": {"command": "options"}, "reply": null}]}']) {
      await page.route('**/startup.json', (route) => route.fulfill({ status: 200, contentType: 'application/json', body }));
      await page.reload();
      await settled(page);
      assert.deepEqual(await page.evaluate(() => window.prenet.client.precomputed()), [], body);
      assert.equal(await rows(page).count(), catalogue.length, body);
      assert.deepEqual(await reply(page), worker, body);
      await page.unroute('**/startup.json');
    }
    // A link that asks another question finds no answer in the file but the option table.
    const linked = await h.page('index.html#model=gpt2&batch=16');
    await settled(linked);
    assert.deepEqual((await linked.evaluate(() => window.prenet.client.precomputed())).map((t) => JSON.parse(t).command), ['options']);
    assert.equal((await reply(linked)).settings.batch, 16);
  });

  test('a zoo model and three accelerators chosen through the page', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#tab-zoo');
    await page.fill('#zoo-search', 'llama3');
    await page.check('input[name=zoo][value="llama3-8b"]');
    // Clear every accelerator, then pick three.
    await page.click('#hw-clear-shown');
    // None selected: the API's error (code "missing", field "hardware") says so and marks the list.
    await page.waitForSelector('#hw-list.invalid');
    assert.match(await page.locator('#error').textContent(), /No accelerator selected/);
    await page.fill('#hw-search', 'H100');
    await page.click('#hw-select-shown');
    await page.fill('#hw-search', '');
    await page.check('[data-hw="a100-sxm4-80gb"]');
    await page.fill('#batch', '4');
    await page.selectOption('#precision', 'bf16');
    await page.fill('#seq', '4096');
    await settled(page);
    const ids = await page.locator('#results-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.id));
    assert.deepEqual([...ids].sort(), ['a100-sxm4-80gb', 'h100-pcie-80gb', 'h100-sxm5-80gb']);
    assert.ok((await cliText(page)).startsWith('prenet predict --model llama3-8b --hardware a100-sxm4-80gb,h100-pcie-80gb,h100-sxm5-80gb --batch 4 --seq 4096 --precision bf16 '));
    await checkCommandLine(page, 'llama3-8b');
    // What the table shows is the reply's numbers.
    const r = await reply(page);
    for (const result of r.results) {
      const shown = Number(await page.locator(`tr[data-id="${result.hardware}"] td[data-col=step]`).getAttribute('data-value'));
      assert.equal(shown, result.step.total_ms);
    }
    // Sorting by clicking a heading, with the keyboard.
    await page.locator('[data-sort=memory]').focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('th:has([data-sort=memory])').getAttribute('aria-sort'), 'ascending');
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('th:has([data-sort=memory])').getAttribute('aria-sort'), 'descending');
    // The breakdown follows the accelerator picked in the table.
    await page.click('[data-pick="a100-sxm4-80gb"]');
    assert.match(await page.locator('#breakdown h3').first().textContent(), /A100 SXM4 80GB/);
    // Its layers are the A100's: the longest one's time is the CLI's for that accelerator.
    await page.waitForSelector('#layer-breakdown .bars li');
    const layers = cli(['predict', '--model', 'llama3-8b', '--hardware', 'a100-sxm4-80gb', '--batch', '4', '--seq', '4096',
      '--precision', 'bf16', '--optimizer', 'adamw', '--breakdown', '--json']).results[0].step.layers;
    const longest = [...layers].sort((a, b) => b.total_ms - a.total_ms)[0];
    assert.match(await page.locator('#layer-breakdown .bars li').first().textContent(), new RegExp(`^${longest.name}`));
    await shot(page, 'llama3-8b-three-accelerators');
  });

  test('upload a Hugging Face config.json, then broken files: clear messages, the page keeps working', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#tab-file');
    const fixture = join(root, 'tests/fixtures/hf/mistral-7b-v0.1.json');
    await page.setInputFiles('#file-input', fixture);
    await page.waitForSelector('#file-status.good');
    assert.match(await page.locator('#file-status').textContent(), /mistral-7b-v0.1\.json: a Hugging Face config \(mistral\)/);
    await settled(page);
    assert.match(await page.locator('#model-in-use').textContent(), /mistral-7b-v0\.1\.json/);
    const native = cli(['features', '--model', fixture, '--batch', '8', '--precision', 'bf16', '--json']);
    await page.waitForFunction((params) => window.prenet.last().features?.params === params, native.params);
    // The command line names the file (saved next to where it runs) and prints the same numbers.
    const command = await cliText(page);
    assert.match(command, /--model mistral-7b-v0\.1\.json /);
    compareReplies(await reply(page), cli(splitCommand(command.replace('mistral-7b-v0.1.json', fixture)).slice(1)), 'mistral upload');

    const before = await reply(page);
    const broken = join(tmpdir(), 'prenet-broken-config.json');
    writeFileSync(broken, '{"model_type": "llama", "hidden_size": 4096,');
    await page.setInputFiles('#file-input', broken);
    await page.waitForSelector('#file-status.bad');
    assert.match(await page.locator('#file-status').textContent(), /prenet-broken-config\.json is not valid JSON/);
    const unknown = join(tmpdir(), 'prenet-not-a-model.json');
    writeFileSync(unknown, JSON.stringify({ model_type: 'nonsense-arch', hidden_size: 8 }));
    await page.setInputFiles('#file-input', unknown);
    await page.waitForFunction(() => /could not be used/.test(document.querySelector('#file-status').textContent));
    assert.equal(await page.locator('#file-status').getAttribute('class'), 'file-status bad');
    await shot(page, 'upload-broken-file');
    // Still the uploaded model, and still computing.
    assert.match(await page.locator('#model-in-use').textContent(), /mistral-7b-v0\.1\.json/);
    assert.deepEqual((await reply(page)).model, before.model);
    await page.fill('#batch', '2');
    await settled(page);
    assert.equal((await reply(page)).settings.batch, 2);
  });

  test('a layers JSON upload and the layer-by-layer form', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#tab-file');
    await page.setInputFiles('#file-input', join(root, 'examples/mnist-mlp.json'));
    await page.waitForSelector('#file-status.good');
    await settled(page);
    const command = await cliText(page);
    assert.match(command, /--model mnist-mlp\.json /);
    compareReplies(await reply(page), cli(splitCommand(command.replace('mnist-mlp.json', join(root, 'examples/mnist-mlp.json'))).slice(1)), 'mnist-mlp');
    // Into the editor: shapes and parameters beside each layer.
    await page.click('#edit-upload');
    await page.waitForSelector('.le-layer');
    await settled(page);
    const fc1 = page.locator('.le-layer', { has: page.locator('input.le-name[value="fc1"]') });
    await page.waitForFunction(() => /→ \[8, 512\]/.test(document.querySelector('.le-layer .le-out')?.parentElement?.parentElement?.textContent ?? ''));
    assert.match(await fc1.locator('.le-out').textContent(), /\[8, 512\] · 402k params/);
    // Edit a width: the shape and count follow.
    await fc1.locator('[data-field=out_features]').fill('256');
    await page.waitForFunction(() => [...document.querySelectorAll('.le-out')].some((e) => /\[8, 256\] · 201k params/.test(e.textContent)));
    // Add a layer at the end, move it up, then remove it.
    const count = await page.locator('#layers-editor > .le-list > .le-layer').count();
    await page.selectOption('#le-add-type-root', 'dropout');
    await page.click('#le-add-root');
    assert.equal(await page.locator('#layers-editor > .le-list > .le-layer').count(), count + 1);
    const added = page.locator('#layers-editor > .le-list > .le-layer').last();
    const name = await added.locator('input.le-name').inputValue();
    await added.locator('[data-move][data-dir="-1"]').click();
    assert.equal(await page.locator('#layers-editor > .le-list > .le-layer').nth(count - 1).locator('input.le-name').inputValue(), name);
    await page.locator('#layers-editor > .le-list > .le-layer').nth(count - 1).locator('[data-del]').click();
    assert.equal(await page.locator('#layers-editor > .le-list > .le-layer').count(), count);
    // An invalid setting is marked on its layer, with the API's message naming it.
    await fc1.locator('[data-field=out_features]').fill('0');
    await page.waitForSelector('.le-layer.invalid');
    const error = await page.locator('.le-layer.invalid .le-error').textContent();
    assert.match(error, /layer 'fc1'.*out_features/);
    assert.equal(await page.locator('.le-layer.invalid input.le-name').inputValue(), 'fc1');
    assert.equal(await page.locator('.le-layer.invalid [data-field=out_features]').getAttribute('aria-invalid'), 'true');
    await page.locator('#layers-editor').screenshot({ path: join(root, 'test-results/layer-editor-error.png') });
    // Fixed again: the results follow.
    await fc1.locator('[data-field=out_features]').fill('128');
    await settled(page);
    assert.equal(await page.locator('.le-layer.invalid').count(), 0);
    await shot(page, 'layer-editor');
  });

  test('the URL holds the whole state', async () => {
    const page = await h.page();
    await settled(page);
    await page.check('input[name=zoo][value="resnet50"]');
    await page.fill('#batch', '32');
    await page.fill('#image', '192');
    await page.selectOption('#precision', 'fp16');
    await page.selectOption('#optimizer', 'sgd');
    await page.click('details.more > summary');
    await page.selectOption('#mixed', 'half');
    await page.click('#hw-clear-shown');
    await page.check('[data-hw="a100-sxm4-80gb"]');
    await page.check('[data-hw="l4"]');
    await page.check('[data-hw="rtx-4090"]');
    await page.fill('#price-rtx-4090', '0.5');
    await page.click('[data-sort=cost]');
    await settled(page);
    await page.waitForFunction(() => location.hash.includes('price=') && location.hash.includes('sort=cost'));
    const url = page.url();
    const table = await page.locator('#results-table tbody').innerText();
    const command = await cliText(page);
    assert.match(command, /--precision fp16 .*--mixed half/);
    assert.match(await page.locator('#assumptions').innerText(), /half model \+ fp32 master weights/);
    // (Which key holds what, defaults and damaged hashes: tests/js/state.test.mjs.) A new page from the link
    // shows the same table, command and inputs.
    const again = await h.page(url.slice(h.url.length));
    await settled(again);
    assert.equal(await again.locator('#results-table tbody').innerText(), table);
    assert.equal(await cliText(again), command);
    assert.equal(await again.inputValue('#batch'), '32');
    assert.equal(await again.inputValue('#mixed'), 'half');
    assert.equal(await again.inputValue('#precision'), 'fp16');
    assert.equal(await again.isChecked('input[name=zoo][value="resnet50"]'), true);
    assert.equal(await again.isChecked('[data-hw="t4"]'), false);
    assert.equal(await again.inputValue('#price-rtx-4090'), '0.5');
    assert.match(await again.locator('tr[data-id="rtx-4090"] td[data-col=cost]').textContent(), /at \$0\.50\/h ✎ edited/);

    // A model built layer by layer travels in the URL too.
    await again.click('#tab-layers');
    await again.click('#layers-use');
    await settled(again);
    await again.waitForFunction(() => location.hash.includes('src=layers'));
    const params = (await reply(again)).model.params;
    const third = await h.page(again.url().slice(h.url.length));
    await settled(third);
    assert.equal((await reply(third)).model.params, params);
    assert.equal(await third.locator('#tab-layers').getAttribute('aria-selected'), 'true');
    // The editor draws its rows once the model from the link is read; wait for them rather than count at once.
    await third.waitForFunction(() => document.querySelectorAll('.le-layer').length > 3);
  });

  test('a precision a device has no units for is predicted as its fallback, and the row says so', async () => {
    const page = await h.page();
    await settled(page);
    await page.selectOption('#precision', 'fp8');
    await page.click('#hw-clear-shown');
    await page.check('[data-hw="a100-sxm4-80gb"]');
    await page.check('[data-hw="b200"]');
    await settled(page);
    const badge = page.locator('tr[data-id="a100-sxm4-80gb"] .badge.fallback');
    assert.equal((await badge.textContent()).trim(), 'as bf16');
    assert.match(await badge.getAttribute('title'), /fp8/i);
    assert.equal(await page.locator('tr[data-id="b200"] .badge.fallback').count(), 0);
    const results = (await reply(page)).results;
    const a100 = results.find((r) => r.hardware === 'a100-sxm4-80gb');
    assert.equal(a100.matmul_precision_used, 'bf16');
    assert.equal(results.find((r) => r.hardware === 'b200').matmul_precision_used, 'fp8');
  });

  test('a custom accelerator from its spec sheet, saved in the browser', async () => {
    const page = await h.page();
    await settled(page);
    await page.click('#custom-box > summary');
    await page.click('#c-save');
    assert.match(await page.locator('#c-error').textContent(), /a name/);
    await page.fill('#c-name', 'Lab GPU X');
    await page.fill('#c-fp32', '40');
    await page.fill('#c-bf16', '400');
    // The sheet's numbers are checked by the API (hardware/spec.cpp), its words shown and its field marked.
    await page.fill('#c-mem', '0');
    await page.click('#c-save');
    await page.waitForFunction(() => document.querySelector('#c-error').textContent.includes('capacity_gb'));
    assert.equal(await page.locator('#c-mem').getAttribute('aria-invalid'), 'true');
    await page.fill('#c-mem', '64');
    await page.fill('#c-bw', '2000');
    await page.fill('#c-sms', '100');
    await page.fill('#c-clock', '1800');
    await page.fill('#c-tdp', '500');
    await page.fill('#c-price', '1.5');
    await page.click('#c-save');
    await page.waitForSelector('tr[data-id="custom-lab-gpu-x"]');
    await settled(page);
    assert.equal(await rows(page).count(), catalogue.length + 1);
    assert.match(await page.locator('tr[data-id="custom-lab-gpu-x"]').textContent(), /custom/);
    const sheet = await page.evaluate(() => window.prenet.state().custom[0]);
    assert.deepEqual(sheet.peak_tflops, { fp32: 40, bf16: 400, fp16: 400 });
    // The command line uses a spec file; with the sheet saved as that file it prints the same numbers.
    const command = await cliText(page);
    assert.match(command, /--hardware all,custom-lab-gpu-x\.json /);
    const file = join(tmpdir(), 'custom-lab-gpu-x.json');
    writeFileSync(file, JSON.stringify(sheet));
    compareReplies(await reply(page), cli(splitCommand(command.replace('custom-lab-gpu-x.json', file)).slice(1)), 'custom hardware');
    // Saved: a fresh visit without a hash still has it.
    const again = await h.page();
    await settled(again);
    assert.equal(await again.locator('tr[data-id="custom-lab-gpu-x"]').count(), 1);
    await again.click('#custom-box > summary');
    await again.locator('[data-remove-custom="0"]').click();
    await settled(again);
    assert.equal(await rows(again).count(), catalogue.length);
  });

  test('every option the API offers the page is on it: the form is the option table', async () => {
    const page = await h.page();
    await settled(page);
    const options = await page.evaluate(async () => (await window.prenet.client.call({ command: 'options' })).doc.options);
    assert.ok(options.length > 10, `${options.length} options`);
    const onPage = options.filter((o) => o.page != null);
    const missing = await page.evaluate((names) => names.filter((n) => !document.querySelector(`[data-option="${CSS.escape(n)}"]`)), onPage.map((o) => o.name));
    assert.deepEqual(missing, [], 'options the page should offer but does not carry data-option for');
    for (const o of options.filter((o) => o.page == null)) assert.ok(typeof o.page_note === 'string' && o.page_note.trim() !== '', `${o.name}: not on the page, and page_note says why`);
    // The training rows are labelled fields of their type, id = name, advanced ones under "More training options".
    const fields = await page.evaluate(
      (rows) =>
        rows.map((r) => {
          const el = document.querySelector(`#train-form [data-option="${CSS.escape(r.name)}"]`);
          return { name: r.name, id: el?.id, tag: el?.tagName, type: el?.type, label: el?.labels?.[0]?.textContent ?? '', more: Boolean(el?.closest('details.more')), options: el?.tagName === 'SELECT' ? [...el.options].map((o) => o.value) : null };
        }),
      options.filter((o) => o.page === 'training'),
    );
    for (const [i, f] of fields.entries()) {
      const row = options.filter((o) => o.page === 'training')[i];
      assert.equal(f.id, row.name, `${row.name}: input id`);
      assert.ok(f.label.includes(row.label), `${row.name}: labelled "${row.label}" (got "${f.label}")`);
      assert.equal(f.more, row.advanced, `${row.name}: under more options iff advanced`);
      // A flag that also takes words is a select of the default, 'on' unless a word is the bare flag, and the words.
      const words = row.type === 'flag' && row.switch_values;
      const tag = words ? 'SELECT' : { choice: 'SELECT', flag: 'INPUT', count: 'INPUT', number: 'INPUT', text: 'INPUT' }[row.type];
      assert.equal(f.tag, tag, `${row.name}: a ${row.type} field`);
      if (words) assert.deepEqual(f.options, ['', ...(row.switch_bare ? [] : ['on']), ...row.switch_values], `${row.name}: its words`);
      else if (row.type === 'flag') assert.equal(f.type, 'checkbox');
      if (row.type === 'text') assert.equal(f.type, 'text');
      if (row.type === 'count' || row.type === 'number') assert.equal(f.type, 'number');
      if (row.type === 'choice') assert.deepEqual(f.options, [...(row.default == null ? [''] : []), ...row.choices], `${row.name}: its choices`);
    }
    // The cluster rows are the cluster form the same way: advanced ones under "Layout", text rows a text field.
    const clusterRows = options.filter((o) => o.page === 'cluster');
    assert.ok(clusterRows.some((o) => o.name === 'gpus'), 'the devices field');
    const cluster = await page.evaluate(
      (rows) =>
        rows.map((r) => {
          const el = document.querySelector(`#cluster-form [data-option="${CSS.escape(r.name)}"]`);
          return { id: el?.id, type: el?.type ?? el?.tagName, label: el?.labels?.[0]?.textContent ?? '', more: Boolean(el?.closest('details.more')), url: r.url,
            options: el?.tagName === 'SELECT' ? [...el.options].map((o) => o.value) : null };
        }),
      clusterRows,
    );
    for (const [i, f] of cluster.entries()) {
      const row = clusterRows[i];
      assert.equal(f.id, row.name, `${row.name}: input id`);
      assert.ok(f.label.includes(row.label), `${row.name}: labelled`);
      assert.equal(f.more, Boolean(row.advanced), `${row.name}: under Layout iff advanced`);
      const words = row.type === 'flag' && row.switch_values;
      assert.equal(f.type, words ? 'select-one' : { count: 'number', number: 'number', flag: 'checkbox', choice: 'select-one', text: 'text' }[row.type], `${row.name}: a ${row.type} field`);
      if (words) assert.deepEqual(f.options, ['', ...(row.switch_bare ? [] : ['on']), ...row.switch_values], `${row.name}: its words`);
      assert.ok(row.url, `${row.name}: a URL key`);
    }
  });

  test('a request that traps the wasm module: its error is shown, the module restarts, the next request answers', async () => {
    const page = await h.page();
    await settled(page);
    // Through the client: the broken request is an error reply (data), the next one answers.
    const calls = await page.evaluate(async () => {
      const { client } = window.prenet;
      const request = { command: 'predict', model: 'gpt2', hardware: 't4', batch: 4 };
      await client.remote.breakNext();
      const broken = await client.call(request);
      const next = await client.call(request);
      return { broken: broken.error, next: next.doc.results?.length, restarts: await client.remote.restarts() };
    });
    assert.equal(calls.broken.code, 'internal');
    assert.match(calls.broken.message, /engine failed on this request .*it has been restarted/);
    assert.equal(calls.next, 1);
    assert.equal(calls.restarts, 1);
    // Through the page: the recompute that breaks the module shows the message; the next input recomputes.
    await page.evaluate(() => window.prenet.client.remote.breakNext());
    await page.fill('#batch', '16');
    await page.waitForFunction(() => /engine failed on this request/.test(document.getElementById('error').textContent));
    assert.equal(await page.locator('#error').isVisible(), true);
    await page.fill('#batch', '32');
    await settled(page);
    assert.equal(await page.locator('#error').isHidden(), true);
    assert.equal((await reply(page)).settings.batch, 32);
    assert.equal(await rows(page).count(), catalogue.length);
    assert.equal(await page.evaluate(() => window.prenet.client.remote.restarts()), 2);
  });

  test('the Content-Security-Policy: one policy in _headers and both pages\' <meta>, sent with every file, no violation', async () => {
    const headers = readFileSync(join(dist, '_headers'), 'utf8');
    const policy = headers.match(/^\/\*\n(?:\s+.*\n)*?\s+Content-Security-Policy: (.+)$/m)[1];
    assert.match(policy, /default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self';/);
    assert.doesNotMatch(policy, /'unsafe-inline'|'unsafe-eval'|\*|https?:/);
    for (const file of ['index.html', 'widget.html']) {
      const html = readFileSync(join(dist, file), 'utf8');
      assert.equal(html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/)[1], policy, `${file}'s <meta>`);
      // No inline script, no inline style, no event-handler attribute.
      assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, `${file}: inline script`);
      assert.doesNotMatch(html, /\sstyle=|<style|\son[a-z]+=/i, `${file}: inline style or handler`);
    }
    const page = await h.page();
    await settled(page);
    const served = await page.evaluate(async () => {
      const get = async (path) => {
        const response = await fetch(path);
        await response.text();
        return response.headers.get('content-security-policy');
      };
      return { index: await get('index.html'), root: await get('./'), worker: await get('js/worker.js'), widget: await get('widget.html') };
    });
    assert.ok(served.worker.startsWith(policy), 'the worker runs under the policy too');
    assert.ok(served.widget.startsWith(policy));
    assert.doesNotMatch(served.widget, /frame-ancestors/, 'the widget may be embedded anywhere');
    for (const where of ['index', 'root']) assert.match(served[where], /, frame-ancestors 'self'/, where);
    // The page used every part of itself (chart, breakdown, layer table) without a violation.
    await page.locator('#layer-table-box summary').click();
    await page.waitForSelector('#layer-table tbody tr');
    await page.waitForSelector('#chart canvas');
    // The bars' widths, set through the CSSOM (no style attribute).
    await page.waitForSelector('#layer-breakdown .bars li');
    const widths = await page.evaluate(() => [...document.querySelectorAll('.membar span, .stack span, .bars .bar span')].map((el) => el.style.width));
    assert.ok(widths.length > 10 && widths.every((w) => /^\d+(\.\d+)?%$/.test(w)), widths.slice(0, 5).join(' '));
    const widget = await h.page('widget.html?model=gpt2&hardware=t4');
    await widget.waitForSelector('#w-table tbody tr');
    await page.waitForTimeout(300); // reports are posted asynchronously
    assert.deepEqual(h.violations, []);
  });

  test("'wasm-unsafe-eval' is needed: Chromium refuses to compile WebAssembly under script-src 'self' alone", async () => {
    // The smallest module: the 8-byte header.
    const probe = async (policy) => {
      const page = await h.context.newPage();
      await page.route('**/csp-probe.html', (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', headers: { 'content-security-policy': policy }, body: '<!doctype html><title>probe</title>' }),
      );
      await page.goto(`${h.url}csp-probe.html`);
      const outcome = await page.evaluate(() =>
        WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => 'compiled', (e) => `${e.name}: ${e.message}`),
      );
      await page.close();
      return outcome;
    };
    assert.equal(await probe("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"), 'compiled');
    const refused = await probe("default-src 'self'; script-src 'self'");
    assert.match(refused, /CompileError: .*(Content Security Policy|wasm-unsafe-eval)/, refused);
    // That refusal is the one violation expected here.
    const seen = h.problems.splice(0);
    assert.ok(seen.every((p) => /csp-probe|wasm-eval|wasm-unsafe-eval|Content Security Policy/i.test(p)), seen.join('\n'));
    h.violations.splice(0);
  });

  test("the API's errors are data: the field they name is marked, and fixing it clears the mark", async () => {
    // A tokens budget for a model without tokens: code "conflict" on field "tokens".
    const page = await h.page('index.html#model=resnet50&budget=tokens');
    await page.waitForSelector('#tokens[aria-invalid=true]');
    assert.match(await page.locator('#error').textContent(), /'tokens' needs a language model/);
    await page.selectOption('#budget-kind', 'samples');
    await settled(page);
    assert.equal(await page.locator('#tokens').getAttribute('aria-invalid'), null);
    assert.equal(await page.locator('#error').isHidden(), true);
    assert.equal((await reply(page)).settings.samples, 1281167);
    // A sequence longer than GPT-2's position table: the model builds at its own length, so the error is the
    // sequence length's (field "seq"), that field is marked, and the last results stay on the page.
    await page.check('input[name=zoo][value="gpt2"]');
    await settled(page);
    await page.fill('#seq', '100000');
    await page.waitForSelector('#seq[aria-invalid=true]');
    assert.match(await page.locator('#error').textContent(), /'seq' 100000 is too large for this model.*1024.*the results below are for the last valid input/);
    assert.equal(await page.locator('[data-option=model].invalid').count(), 0);
    assert.ok((await rows(page).count()) > 0);
    await page.fill('#seq', '512');
    await settled(page);
    assert.notEqual(await page.locator('#seq').getAttribute('aria-invalid'), 'true');
  });

  test('CSV and JSON exports', async () => {
    const page = await h.page('index.html#hw=a100-sxm4-80gb,h100-sxm5-80gb');
    await settled(page);
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    const lines = readFileSync(await csv.path(), 'utf8').trim().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0], /^hardware,name,model,micro_batch,grad_accum,global_batch,devices,plan,seq,image,precision,optimizer,/);
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#download-json')]);
    const doc = JSON.parse(readFileSync(await json.path(), 'utf8'));
    assert.equal(doc.reply.results.length, 2);
    assert.equal(doc.request.model, 'gpt2');
  });

  test('hostile names from a link are shown as text, and the CSV does not run them as formulas', async () => {
    const S = await import('../../web/js/state.js');
    const markup = '<img src=x id=pwned onerror="window.pwned=1">';
    const model = { name: markup, input: { shape: [8] }, layers: [{ type: 'linear', name: '<b id=layer-b>l</b>', out_features: 8 }, { type: 'cross_entropy' }] };
    const sheet = { id: 'custom-evil', name: '=HYPERLINK("http://x")<i id=sheet-i>', vendor: 'custom', kind: 'gpu', peak_tflops: { fp32: 40 }, memory: { capacity_gb: 64, bandwidth_gbps: 2000 } };
    const page = await h.page(`index.html#src=layers&doc=${await S.pack(model)}&hw=t4&custom=${await S.pack([sheet])}&sel=custom-evil`);
    await settled(page);
    assert.equal(await rows(page).count(), 2);
    assert.ok((await page.locator('#model-in-use').textContent()).includes(markup));
    assert.ok((await page.locator('#results-table').textContent()).includes(sheet.name));
    await page.locator('#layer-table-box summary').click();
    await page.waitForSelector('#layer-table tbody tr');
    assert.ok((await page.locator('#layer-table').textContent()).includes('<b id=layer-b>l</b>'));
    assert.equal(await page.locator('#pwned, #layer-b, #sheet-i').count(), 0, 'no element made from a name');
    assert.equal(await page.evaluate(() => window.pwned), undefined);
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    const text = readFileSync(await csv.path(), 'utf8');
    assert.ok(text.includes(`"'=HYPERLINK(""http://x"")<i id=sheet-i>"`), text);
    // The JSON export too: the custom accelerator's name, wherever it stands, starts with the apostrophe.
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#download-json')]);
    const exported = readFileSync(await json.path(), 'utf8');
    assert.ok(!exported.includes('"=HYPERLINK'), 'no formula-leading string in the JSON export');
    assert.ok(exported.includes(JSON.stringify(`'${sheet.name}`)), 'neutralised with a leading apostrophe');
  });

  test('the embeddable widget', async () => {
    const page = await h.page('widget.html?model=gpt2&hardware=a100-sxm4-80gb,h100-sxm5-80gb,rtx-4090&batch=8&precision=bf16');
    await page.waitForSelector('html[data-ready=true]');
    assert.equal(await page.locator('#w-table tbody tr').count(), 3);
    assert.match(await page.locator('#w-title').textContent(), /gpt2 · 124M params · batch 8/);
    await page.setViewportSize({ width: 560, height: 300 });
    await shot(page, 'widget');
    const bad = await h.page('widget.html?model=no-such-model');
    await bad.waitForSelector('#w-error:not([hidden])');
    assert.match(await bad.locator('#w-error').textContent(), /no-such-model/);
  });

  test('accessibility: axe-core finds no violations (light and dark), controls are labelled, keyboard works', async () => {
    const page = await h.page();
    await settled(page);
    await page.waitForSelector('#chart canvas');
    // From the page's own origin: the Content-Security-Policy allows no inline script, so no injected one either.
    await page.route('**/__axe.min.js', (route) => route.fulfill({ path: join(root, 'node_modules/axe-core/axe.min.js'), contentType: 'text/javascript' }));
    await page.addScriptTag({ url: `${h.url}__axe.min.js` });
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      const violations = await page.evaluate(async () =>
        (await window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })).violations.map(
          (v) => `${v.id}: ${v.help} (${v.nodes.length}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')})`,
        ),
      );
      assert.deepEqual(violations, [], `axe-core, ${scheme} scheme`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, button, textarea')]
        .filter((el) => el.type !== 'hidden' && !el.closest('[hidden]'))
        .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || (el.tagName === 'BUTTON' && el.textContent.trim())))
        .map((el) => el.outerHTML.slice(0, 120)),
    );
    assert.deepEqual(unlabelled, []);
    // Tabs with the arrow keys; the zoo with the keyboard.
    await page.locator('#tab-zoo').focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.locator('#tab-layers').getAttribute('aria-selected'), 'true');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.locator('#tab-zoo').getAttribute('aria-selected'), 'true');
    await page.locator('input[name=zoo][value="gpt2"]').focus();
    await page.keyboard.press('ArrowDown');
    await settled(page);
    assert.equal((await reply(page)).model.name, 'gpt2-medium');
  });
});

describe('installable offline app', () => {
  let offline;
  before(async () => {
    offline = await start({ serviceWorkers: 'allow' });
  });
  after(async () => {
    await offline?.close();
  });

  test('manifest, service worker, and a reload with the network off', async () => {
    const page = await offline.page();
    await settled(page);
    const manifest = await page.evaluate(() => fetch('manifest.webmanifest').then((r) => r.json()));
    assert.ok(manifest.icons.some((i) => i.sizes === '512x512'));
    assert.equal(manifest.display, 'standalone');
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null || document.querySelector('#offline-status').textContent.includes('offline'), null, { timeout: 30_000 });
    const cache = await page.evaluate(async () => (await caches.keys()).find((k) => k.startsWith('prenet-')));
    const version = JSON.parse(readFileSync(join(dist, 'version.json'), 'utf8'));
    assert.equal(cache, `prenet-${version.build}`);
    await page.waitForFunction(async () => (await (await caches.open((await caches.keys())[0])).keys()).length >= 20);
    await offline.context.setOffline(true);
    await page.reload();
    await settled(page);
    assert.ok((await rows(page).count()) > 10);
    await offline.context.setOffline(false);
    const problems = offline.problems.splice(0);
    assert.deepEqual(problems, []);
  });
});
