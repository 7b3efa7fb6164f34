// The questions people bring to the page (issue #14): a cluster from a share link, an uploaded language model
// with the page's defaults, "does not fit" made actionable, invalid inputs named, the layout at 1280 px and on
// a phone, pinned scenarios compared, a very long model that never freezes the page, and the widget.
// Every number shown is compared with the native CLI's run with the command line the page shows.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, compareReplies, root, settled, shot, splitCommand, start } from './helpers.mjs';

let h;
before(async () => {
  h = await start({ viewport: { width: 1280, height: 800 } });
});
after(async () => {
  await h?.close();
});
afterEach(async () => {
  for (const page of h.context.pages()) await page.close();
  const problems = h.problems.splice(0);
  assert.deepEqual(problems, [], 'console errors or outside requests');
});

const accelerators = cli(['hardware', '--json']).hardware.length;
const reply = (page) => page.evaluate(() => window.prenet.last().predict);
const cliText = (page) => page.locator('#cli').textContent();
const text = async (page, selector) => (await page.locator(selector).textContent()).replace(/\s+/g, ' ');

/** The page's command line, run natively (a file it names replaced by its path), against the page's reply. */
async function checkCommandLine(page, label, files = {}) {
  let command = await cliText(page);
  for (const [name, path] of Object.entries(files)) command = command.replace(` ${name} `, ` ${path} `);
  const args = splitCommand(command);
  compareReplies(await reply(page), cli(args.slice(1)), label);
}

describe('the questions people bring', () => {
  test('a cluster question from a share link: devices per row, the plan, MFU, pin this layout, progress and cancel', async () => {
    const page = await h.page('index.html#model=llama2-7b&gpus=8&batch=1&precision=bf16&hw=h100-sxm5-80gb,a100-sxm4-80gb,tpu-v4');
    await settled(page, 120_000);
    assert.equal(await page.inputValue('#gpus'), '8', 'the devices field holds the link’s value');
    const r = await reply(page);
    assert.equal(r.settings.gpus, 8);
    // Every row has its plan: the TPU v4 sheet publishes its ICI (a 3D torus, issue 29), so nothing is refused.
    for (const id of ['h100-sxm5-80gb', 'a100-sxm4-80gb', 'tpu-v4']) {
      const row = page.locator(`#results-table tr[data-id="${id}"]`);
      assert.match(await row.locator('.plan-text').textContent(), /^8 × · dp \d+ · tp \d+ · pp \d+ · (ZeRO \d|DDP)/);
      assert.match(await row.locator('td[data-col=mfu]').textContent(), /\d+(\.\d)?%\s*\d+(\.\d+)? TFLOP\/s/);
      assert.match(await row.locator('td[data-col=hours]').textContent(), /GPU-hours/);
    }
    assert.equal(await page.locator('#refused').isHidden(), true, 'no accelerator refused');
    assert.match(await text(page, '#assumptions'), /on 8 devices of each accelerator/);
    const command = await cliText(page);
    assert.match(command, / --gpus 8 /);
    await checkCommandLine(page, 'cluster link');
    // The breakdown: the plan, exposed communication per kind, the bubble when there are stages.
    await page.click('[data-pick="h100-sxm5-80gb"]');
    const breakdown = await text(page, '#breakdown');
    assert.match(breakdown, /Plan on 8 devices \(searched: the fastest that fits\)/);
    assert.match(breakdown, /Exposed communication/);
    assert.match(breakdown, /Data parallel communication\s*[\d.]+ ms exposed of [\d.]+ ms/);
    // A TPU's torus: its slice and links, as the reply's plan.scale_up names them.
    await page.click('[data-pick="tpu-v4"]');
    assert.match(await text(page, '#breakdown'), /Fabric\s*a torus slice of 2 × 2 × 2, 6 links of [\d.,]+ GB\/s each way; rings open/);
    await page.click('[data-pick="h100-sxm5-80gb"]');
    await shot(page, 'cluster-link');
    // Pin the H100's layout: the cluster fields take it, the plan is no longer searched, the numbers stay the CLI's.
    const plan = r.results.find((x) => x.hardware === 'h100-sxm5-80gb').plan;
    await page.click('[data-pin-layout="h100-sxm5-80gb"]');
    await settled(page, 120_000);
    for (const key of ['dp', 'tp', 'pp', 'zero']) assert.equal(await page.inputValue(`#${key}`), String(plan[key]), key);
    const pinned = (await reply(page)).results.find((x) => x.hardware === 'h100-sxm5-80gb');
    assert.equal(pinned.plan.searched, false);
    assert.equal(pinned.step.total_ms, r.results.find((x) => x.hardware === 'h100-sxm5-80gb').step.total_ms, 'the pinned layout is the searched one');
    assert.match(await cliText(page), / --dp \d+ --tp \d+ --pp \d+/);
    await checkCommandLine(page, 'pinned layout');
    // Every accelerator, 16 devices: the search reports its progress; a newer input cancels it.
    await page.fill('#dp', '');
    await page.fill('#tp', '');
    await page.fill('#pp', '');
    await page.fill('#zero', '');
    await page.evaluate(() => {
      window.progressSeen = [];
      new MutationObserver(() => window.progressSeen.push(document.getElementById('busy').textContent)).observe(document.getElementById('busy'), { childList: true, characterData: true, subtree: true });
    });
    await page.click('#hw-all');
    await page.fill('#gpus', '16');
    await page.waitForFunction((n) => window.progressSeen.some((t) => new RegExp(`Searching layouts: [1-9]\\d* of ${n} accelerators`).test(t)), accelerators, { timeout: 60_000 });
    const cancelledBefore = await page.evaluate(() => window.prenet.last().cancelled);
    await page.fill('#gpus', '4');
    await settled(page, 180_000);
    assert.ok((await page.evaluate(() => window.prenet.last().cancelled)) > cancelledBefore, 'the 16-device search was cancelled');
    assert.equal((await reply(page)).settings.gpus, 4);
    assert.equal((await reply(page)).results.length, accelerators);
  });

  test('an uploaded language model (8,192 context, eager attention in its config) fits on 8 x H100 with the page’s defaults', async () => {
    const config = JSON.parse(readFileSync(join(root, 'tests/fixtures/hf/llama2_7b.json'), 'utf8'));
    Object.assign(config, { max_position_embeddings: 8192, attn_implementation: 'eager' });
    const file = join(tmpdir(), 'llama-7b-8k.json');
    writeFileSync(file, JSON.stringify(config));
    const page = await h.page('index.html#hw=h100-sxm5-80gb');
    await settled(page);
    await page.click('#tab-file');
    await page.setInputFiles('#file-input', file);
    await page.waitForSelector('#file-status.good');
    await settled(page, 60_000);
    await page.fill('#gpus', '8');
    await settled(page, 120_000);
    const r = await reply(page);
    assert.equal(r.settings.attention, 'flash');
    assert.equal(r.settings.seq, 4096);
    const result = r.results[0];
    // The preset's micro-batch 1 is a default, not a typed value: on 8 devices the plan search chooses it.
    assert.equal(result.plan.searched, true);
    assert.ok(Number.isInteger(result.plan.micro_batch) && result.plan.micro_batch >= 1, `micro-batch ${result.plan.micro_batch}`);
    assert.doesNotMatch(await cliText(page), / --batch /, 'the page sends no micro-batch');
    assert.equal(result.memory.fits, true, 'fits on 8 x H100');
    assert.match(await text(page, '#verdict'), /Best choice: NVIDIA H100 SXM5 80GB on 8 devices trains in/);
    // Every default is named, and one click from its field.
    const assumptions = await text(page, '#assumptions');
    for (const words of ['flash attention', '4,096 tokens per sequence', '1,048,576 tokens per optimizer step']) assert.ok(assumptions.includes(words), words);
    await page.click('#assumptions [data-focus="attention"]');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'attention');
    await checkCommandLine(page, 'llm upload on 8 x h100', { 'llama-7b-8k.json': file });
    await shot(page, 'llm-upload-8xh100');
  });

  test('“does not fit” says what would, in the page’s words, and each suggestion is a button that applies it', async () => {
    const page = await h.page('index.html#model=llama2-7b&hw=h100-sxm5-80gb,b200&batch=8&precision=bf16');
    await settled(page, 60_000);
    const verdict = await text(page, '#verdict');
    assert.match(verdict, /Nothing fits with these settings/);
    assert.doesNotMatch(verdict, /--|b200|h100-sxm5|mi250/, 'no flags, no ids');
    const buttons = page.locator('#verdict [data-apply]');
    assert.ok((await buttons.count()) >= 2, verdict);
    // The breakdown's advice offers the same changes.
    await page.click('[data-pick="b200"]');
    const advice = await text(page, '#breakdown .advice');
    assert.match(advice, /Does not fit by [\d.]+ GiB\. It would fit with:/);
    assert.doesNotMatch(advice, /--/);
    // The ranked changes name the checkpointing kind, its reserved peak and its step-time cost.
    const checkpointing = page.locator('#verdict [data-apply]', { hasText: /^Use full activation checkpointing \(/ });
    assert.match(await checkpointing.textContent(), /^Use full activation checkpointing \([\d.]+ GiB reserved, step \+\d+%\)$/);
    await checkpointing.click();
    await settled(page, 60_000);
    assert.equal((await reply(page)).settings.checkpointing, true);
    assert.equal(await page.inputValue('#checkpointing'), 'full');  // the bare flag, as the option table names it
    assert.match(await text(page, '#verdict'), /Best choice: NVIDIA B200/);
    await checkCommandLine(page, 'after a suggestion');
  });

  test('an invalid value: its message beside the field, and the results say which input keeps them from updating', async () => {
    const page = await h.page('index.html#hw=h100-sxm5-80gb');
    await settled(page);
    const before = await reply(page);
    for (const [field, value, message] of [
      ['batch', '0', /Batch size must be at least 1/],
      ['batch', '-4', /Batch size must be at least 1/],
      ['batch', '1.5', /Batch size must be a whole number/],
      ['seq', '0', /Sequence length must be/],
      ['tokens', '0', /must be (at least|more than)/],
    ]) {
      await page.fill(`#${field}`, value);
      await page.waitForSelector('#stale:not([hidden])');
      assert.match(await text(page, `#${field}-error`), message, `${field}=${value}`);
      assert.equal(await page.getAttribute(`#${field}`, 'aria-invalid'), 'true');
      assert.match(await text(page, '#stale'), message);
      assert.match(await text(page, '#stale'), /Not updated: .* The results below are for the last valid input/);
      assert.equal(await page.locator('.results-card.stale').count(), 1);
      await page.waitForTimeout(250);
      assert.deepEqual(await reply(page), before, 'nothing recomputed');
      await page.fill(`#${field}`, '');
      await page.waitForSelector('#stale[hidden]', { state: 'attached' });
    }
    await page.fill('#batch', '4');
    await settled(page);
    assert.equal((await reply(page)).settings.batch, 4);
    assert.equal(await text(page, '#batch-error'), '');
  });

  test('the layout: memory beside the name, no duplicate column, a header that stays, 1280 px without sideways scroll, log scale, two charts, cards on a phone', async () => {
    const page = await h.page('index.html#model=llama2-7b&gpus=8&batch=1&precision=bf16&hw=h100-sxm5-80gb,a100-sxm4-80gb,mi300x,l40s');
    await settled(page, 120_000);
    const heads = await page.locator('#results-table thead th').evaluateAll((ths) => ths.map((t) => t.dataset.col));
    assert.deepEqual(heads.slice(0, 2), ['name', 'memory']);
    assert.ok(!heads.includes('gpu_hours'), 'GPU-hours are the time column’s second line');
    const fit = await page.evaluate(() => {
      const w = document.querySelector('.results-wrap');
      return { scroll: w.scrollWidth, client: w.clientWidth, sticky: getComputedStyle(document.querySelector('#results-table thead th')).position, max: getComputedStyle(w).maxHeight };
    });
    assert.ok(fit.scroll <= fit.client, `no sideways scroll at 1280 px (${fit.scroll} > ${fit.client})`);
    assert.equal(fit.sticky, 'sticky');
    assert.notEqual(fit.max, 'none', 'the table scrolls in its own box, so its header stays in view');
    // One device: no GPU-hours line, the time to train alone.
    const single = await h.page('index.html#hw=h100-sxm5-80gb,a100-sxm4-80gb');
    await settled(single);
    assert.equal(await single.locator('#results-table [data-col=gpu_hours]').count(), 0);
    assert.equal(await single.locator('#results-table thead [data-col=mfu]').count(), 0);
    await single.close();
    await page.waitForSelector('#chart canvas');
    await page.waitForSelector('#chart-cost canvas');
    await page.check('#chart-log');
    await page.waitForFunction(() => location.hash.includes('log=1'));
    await page.waitForSelector('#chart canvas');
    await shot(page, 'layout-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(300);
    const card = await page.evaluate(() => ({
      head: getComputedStyle(document.querySelector('#results-table thead')).display,
      row: getComputedStyle(document.querySelector('#results-table tbody tr')).display,
      label: getComputedStyle(document.querySelector('#results-table td[data-col=step]'), '::before').content,
      wide: document.querySelector('.results-wrap').scrollWidth <= document.querySelector('.results-wrap').clientWidth,
    }));
    assert.deepEqual(card, { head: 'none', row: 'grid', label: '"Step time"', wide: true });
    await page.locator('.results-card').screenshot({ path: join(root, 'test-results/phone-cards.png') });
  });

  test('pin a scenario, change something: both side by side with the difference, and the pins live in the URL', async () => {
    const page = await h.page('index.html#hw=h100-sxm5-80gb,a100-sxm4-80gb');
    await settled(page);
    await page.click('#pin');
    await page.fill('#batch', '16');
    await settled(page);
    await page.waitForSelector('#compare-card:not([hidden]) #compare table tbody tr');
    const heading = await text(page, '#compare h3');
    assert.match(heading, /Pinned 1 → now: Batch size 8 → 16/);
    assert.equal(await page.locator('#compare tbody tr').count(), 2);
    assert.match(await text(page, '#compare tbody tr[data-id="h100-sxm5-80gb"] [data-col=dtime]'), /^[+−±]/);
    assert.equal(await page.locator('#compare .compare-bars li').count(), 2, 'and as bars');
    // The differences are those of the two replies.
    const now = await reply(page);
    const then = await page.evaluate(async () => (await window.prenet.client.call({ command: 'predict', model: 'gpt2', hardware: ['h100-sxm5-80gb'], batch: 8, precision: 'bf16', samples: 1281167, epochs: 1, tokens: 1e9 })).doc);
    const dt = Number(await page.getAttribute('#compare tbody tr[data-id="h100-sxm5-80gb"] [data-col=dtime]', 'data-value'));
    const h100 = (d) => d.results.find((r) => r.hardware === 'h100-sxm5-80gb').run.hours;
    assert.ok(Math.abs(dt - (h100(now) - h100(then))) < 1e-9, `${dt}`);
    await page.waitForFunction(() => location.hash.includes('pins='));
    const link = page.url();
    const again = await h.page(link.slice(link.indexOf('index.html')));
    await settled(again);
    await again.waitForSelector('#compare-card:not([hidden]) #compare table tbody tr');
    assert.match(await text(again, '#compare h3'), /Batch size 8 → 16/);
    await shot(again, 'compare');
    await again.click('[data-unpin="0"]');
    await again.waitForSelector('#compare-card[hidden]', { state: 'attached' });
  });

  test('a model of 99,999 layers (4.9 MB): the page stays responsive, every layer is in the table, the numbers are the CLI’s', async () => {
    const layers = [];
    for (let i = 0; i < 99_998; i++) layers.push({ type: 'linear', out_features: 8, name: i.toString(36) });
    layers.push({ type: 'cross_entropy', name: 'loss' });
    const file = join(tmpdir(), 'prenet-long-model.json');
    writeFileSync(file, JSON.stringify({ name: 'long-mlp', input: { shape: [8] }, layers }));
    const page = await h.page('index.html#hw=h100-sxm5-80gb,a100-sxm4-80gb,l4');
    await settled(page);
    // A timer on the page: it must keep firing while the file is read, checked and computed.
    await page.evaluate(() => {
      window.gaps = [];
      let t = performance.now();
      setInterval(() => {
        const n = performance.now();
        window.gaps.push(n - t);
        t = n;
      }, 50);
    });
    await page.click('#tab-file');
    await page.setInputFiles('#file-input', file);
    await page.waitForSelector('#file-status.good', { timeout: 120_000 });
    assert.match(await text(page, '#file-status'), /99,999 layers \(all of them computed\)/);
    await settled(page, 180_000);
    await page.locator('#layer-table-box summary').click();
    await page.waitForSelector('#layer-table tbody tr');
    assert.match(await text(page, '#layer-table-box summary'), /99,999 rows/);
    assert.match(await text(page, '#layer-table-note'), /All 99,999 layers are in the table/);
    assert.ok((await page.locator('#layer-table tbody tr').count()) < 200, 'only the rows in view are drawn');
    await page.evaluate(() => {
      const w = document.getElementById('layer-table');
      w.scrollTop = w.scrollHeight;
    });
    await page.waitForFunction(() => [...document.querySelectorAll('#layer-table tbody td:nth-child(2)')].some((td) => td.textContent === 'loss'));
    const gaps = await page.evaluate(() => window.gaps);
    assert.ok(gaps.length > 20, `the timer fired ${gaps.length} times`);
    assert.ok(Math.max(...gaps) < 1000, `the longest pause of the main thread: ${Math.max(...gaps)} ms`);
    // The editor says it does not take a model this long; the model is still computed in full.
    await page.click('#tab-layers');
    await page.click('#tab-file');
    const native = cli(['features', '--model', file, '--batch', '8', '--precision', 'bf16', '--json']);
    assert.equal((await page.evaluate(() => window.prenet.last().features.params)), native.params);
    await checkCommandLine(page, 'long model', { 'prenet-long-model.json': file });
  });

  test('the widget: its own words for errors, the budget it assumes, invalid attributes reported, gpus; the snippet page', async () => {
    const page = await h.page('widget.html?model=gpt2&hardware=a100-sxm4-80gb,h100-sxm5-80gb&batch=8&precision=bf16');
    await page.waitForSelector('html[data-ready=true]');
    assert.match(await text(page, '#w-budget'), /Time to train and cost are for 1B tokens at each accelerator’s cheapest cloud price\./);
    const bad = await h.page('widget.html?model=no-such-model');
    await bad.waitForSelector('#w-error:not([hidden])');
    const message = await text(bad, '#w-error');
    assert.match(message, /Unknown model “no-such-model”: the widget takes a model id from the calculator's zoo/);
    assert.doesNotMatch(message, /prenet |`|--/);
    assert.doesNotMatch(await text(bad, '#w-title'), /loading|computing/i);
    const attrs = await h.page('widget.html?model=gpt2&batch=-3&colour=red');
    await attrs.waitForSelector('#w-error:not([hidden])');
    const problems = await text(attrs, '#w-error');
    assert.match(problems, /batch=-3: Batch size must be at least 1/);
    assert.match(problems, /colour: not an attribute the widget knows/);
    assert.equal(await attrs.locator('#w-table tbody tr').count(), 0, 'nothing shown for a replaced value');
    const cluster = await h.page('widget.html?model=llama2-7b&hardware=h100-sxm5-80gb&gpus=8&batch=1');
    await cluster.waitForSelector('html[data-ready=true]', { timeout: 60_000 });
    assert.match(await text(cluster, '#w-title'), /8 devices each/);
    const embed = await h.page('embed.html');
    await embed.fill('#e-gpus', '8');
    await embed.fill('#e-host', 'https://example.org/prenet/');
    const script = await embed.locator('#snippet-script').textContent();
    const iframe = await embed.locator('#snippet-iframe').textContent();
    assert.equal(script, '<script src="https://example.org/prenet/embed.js" data-model="gpt2" data-hardware="a100-sxm4-80gb,h100-sxm5-80gb" data-gpus="8" async></script>');
    assert.match(iframe, /^<iframe src="https:\/\/example\.org\/prenet\/widget\.html\?model=gpt2&amp;hardware=a100-sxm4-80gb%2Ch100-sxm5-80gb&amp;gpus=8"/);
    assert.match(iframe, /addEventListener\('message'[\s\S]*e\.origin !== 'https:\/\/example\.org'[\s\S]*prenet-widget-size/);
    await embed.waitForFunction(() => document.getElementById('preview').contentDocument?.documentElement?.dataset.ready === 'true', null, { timeout: 60_000 });
    // embed.js on a page: it inserts the widget's frame and follows its height.
    await embed.close();
  });
});
