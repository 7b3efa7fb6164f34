// Details a practitioner hits (issue #26, items 8 and 9): the CSV says what each row ran on, labels and
// placeholders are not cut off, and the widget embedded by script tag on another page sizes itself and keeps
// its column names on narrow cards.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { settled, useHarness } from './helpers.mjs';

const harness = useHarness({ viewport: { width: 1280, height: 800 } });

/** Parses the page's CSV (no quoted commas in these rows): [{column: text}]. */
function parseCsv(text) {
  const [header, ...lines] = text.trim().split('\n');
  const names = header.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [names[i], v])));
}

describe('exports', () => {
  async function csvOf(page) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    return readFileSync(await download.path(), 'utf8');
  }

  test('the CSV of an 8-device fine-tune: devices, plan, the micro-batch it runs, MFU and fine-tuning columns', async () => {
    const page = await harness().page('index.html#model=llama2-7b&hw=h100-sxm5-80gb,a100-sxm4-80gb&gpus=8&ft=full&seq=1024');
    await settled(page, 120_000);
    const text = await csvOf(page);
    const header = text.split('\n')[0].split(',');
    assert.ok(!header.includes('batch'), 'no unlabelled batch column');
    for (const column of ['micro_batch', 'grad_accum', 'global_batch', 'devices', 'plan', 'mfu', 'finetune', 'lora_rank', 'trainable_params'])
      assert.ok(header.includes(column), `${column} in ${header}`);
    const reply = await page.evaluate(() => window.prenet.last().predict);
    const rows = parseCsv(text);
    assert.equal(rows.length, 2);
    for (const row of rows) {
      const result = reply.results.find((r) => r.hardware === row.hardware);
      assert.equal(row.devices, '8', 'an 8-device row says so');
      assert.match(row.plan, /^dp \d+ · tp \d+ · pp \d+/);
      assert.equal(Number(row.micro_batch), result.plan.micro_batch, 'the micro-batch the plan runs');
      assert.equal(Number(row.global_batch), result.plan.global_batch, 'the plan\'s samples per step');
      assert.ok(Number(row.mfu) > 0 && Number(row.mfu) < 1, row.mfu);
      assert.equal(row.finetune, 'full');
      assert.equal(row.lora_rank, '');
    }
  });

  test('the CSV of a LoRA fine-tune on one device: its rank and trainable parameters', async () => {
    const page = await harness().page('index.html#model=llama2-7b&hw=h100-sxm5-80gb&ft=lora&seq=1024');
    await settled(page, 60_000);
    const [row] = parseCsv(await csvOf(page));
    const reply = await page.evaluate(() => window.prenet.last().predict);
    assert.deepEqual([row.devices, row.plan, row.finetune], ['1', 'one device', 'lora']);
    assert.equal(Number(row.lora_rank), reply.settings.lora_rank);
    assert.equal(Number(row.trainable_params), reply.model.trainable_params);
    assert.ok(Number(row.trainable_params) < reply.model.params / 100, 'LoRA trains a sliver of the model');
  });
});

describe('layout at 1280 px', () => {
  test('the model tabs show their whole labels, and a long default is not cut off in its field', async () => {
    const page = await harness().page('index.html#model=gpt2&hw=t4&gpus=16');
    await settled(page, 60_000);
    const tabs = await page.evaluate(() => {
      const list = document.querySelector('[role=tablist]').getBoundingClientRect();
      return [...document.querySelectorAll('[role=tab]')].map((t) => {
        const r = t.getBoundingClientRect();
        return { text: t.textContent.trim(), inside: r.left >= list.left - 0.5 && r.right <= list.right + 0.5, clipped: t.scrollWidth > t.clientWidth };
      });
    });
    assert.ok(tabs.some((t) => t.text === 'Upload a file'));
    for (const t of tabs) assert.ok(t.inside && !t.clipped, `tab "${t.text}" is cut off: ${JSON.stringify(t)}`);
    // A placeholder wider than its field is cut off; the field's default then stands under it, whole.
    const fields = await page.evaluate(() =>
      [...document.querySelectorAll('#cluster-form input[type=number], #train-form input[type=number]')].filter((el) => el.offsetParent).map((el) => {
        const style = getComputedStyle(el);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${style.fontSize} ${style.fontFamily}`;
        const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const note = document.getElementById(`${el.id}-default`);
        return { id: el.id, placeholder: el.placeholder, fits: ctx.measureText(el.placeholder).width <= room, note: note && !note.hidden ? note.textContent : '' };
      }),
    );
    for (const f of fields) assert.ok(f.fits, `the placeholder of ${f.id} is cut off: "${f.placeholder}"`);
    const perNode = fields.find((f) => f.id === 'gpus_per_node');
    assert.ok(perNode, 'the devices-per-node field is shown for a cluster question');
    assert.match(perNode.note, /^Blank: the spec sheet's usual node/);
    assert.equal(await page.locator('#gpus_per_node').getAttribute('aria-describedby'), 'gpus_per_node-error gpus_per_node-default');
  });
});

describe('the widget by script tag on another page', () => {
  test('a narrow frame: as tall as the widget (not 320 px), its cards keep their column names; embed.html has margins', async () => {
    const h = harness();
    const page = await h.context.newPage();
    await page.setViewportSize({ width: 320, height: 700 });
    // A host page of another origin (about:blank) with the documented script tag in a 300 px column.
    await page.setContent(`<!doctype html><body style="margin:0"><div id="col" style="width:300px">
      <script src="${h.url}embed.js" data-model="gpt2" data-hardware="t4,a100-sxm4-80gb" data-batch="8" async></script></div></body>`);
    const frame = page.locator('#col iframe');
    await frame.waitFor();
    const widget = page.frameLocator('#col iframe');
    await widget.locator('html[data-ready=true]').waitFor({ timeout: 60_000 });
    // The host resizes the frame from the widget's message.
    await page.waitForFunction(() => {
      const f = document.querySelector('#col iframe');
      return f.style.height && parseFloat(f.style.height) !== 320;
    }, null, { timeout: 10_000 });
    const inner = await widget.locator('.widget-wrap').evaluate((el) => ({ height: el.getBoundingClientRect().bottom, width: document.documentElement.clientWidth }));
    const outer = await frame.evaluate((f) => f.getBoundingClientRect().height);
    assert.ok(inner.width <= 300, `the frame is the column's width: ${inner.width}`);
    assert.ok(Math.abs(outer - inner.height) <= 2, `the frame (${outer} px) is as tall as the widget (${inner.height} px)`);
    // Narrow cards: each number under its column's name.
    const labels = await widget.locator('#w-table tbody td').evaluateAll((cells) =>
      cells.map((td) => getComputedStyle(td, '::before').content.replace(/^"|"$/g, '')),
    );
    assert.ok(labels.length >= 10);
    for (const label of labels) assert.ok(label && label !== 'none', `a card cell without its column name: ${JSON.stringify(labels)}`);
    assert.ok(labels.includes('Time to train') && labels.includes('Cost'));

    const embed = await h.page('embed.html');
    const margin = await embed.locator('main.embed-page').evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left + parseFloat(getComputedStyle(el).paddingLeft), right: document.documentElement.clientWidth - r.right + parseFloat(getComputedStyle(el).paddingRight) };
    });
    assert.ok(margin.left >= 12 && margin.right >= 12, `embed.html's text has margins: ${JSON.stringify(margin)}`);
  });
});

describe('compare', () => {
  test('no no-op change, Δ labels on phone cards, and two pins compared with each other', async () => {
    const page = await harness().page('index.html#model=gpt2&hw=t4,a10', { viewport: { width: 390, height: 844 } });
    await settled(page, 60_000);
    await page.click('#pin');
    // The model's own sequence typed in: the same run, so no difference to list.
    await page.fill('#seq', '1024');
    await page.locator('#seq').dispatchEvent('change');
    await page.waitForFunction(() => location.hash.includes('seq=1024'));
    await settled(page, 60_000);
    await page.waitForSelector('#compare-card:not([hidden]) #compare table tbody tr');
    await page.waitForFunction(() => /nothing differs yet/.test(document.querySelector('#compare h3')?.textContent ?? ''), null, { timeout: 20_000 });
    // A second pin, then a real change: pin 1 against now, and pin 1 against pin 2.
    await page.click('#pin');
    await page.fill('#batch', '16');
    await page.locator('#batch').dispatchEvent('change');
    await settled(page, 60_000);
    await page.waitForFunction(() => [...document.querySelectorAll('#compare h3')].some((h) => /Pinned 2 → now: Batch size 8 → 16/.test(h.textContent)), null, { timeout: 20_000 });
    const headings = await page.locator('#compare h3').allTextContents();
    assert.ok(headings.some((t) => /^Pinned 1 → pinned 2/.test(t)), `pins compared with each other: ${headings.join(' | ')}`);
    assert.ok(!headings.some((t) => /Sequence length/.test(t)), `no no-op change: ${headings.join(' | ')}`);
    // Phone cards: the difference columns are labelled as differences.
    const labels = await page.locator('#compare tbody tr').first().locator('td').evaluateAll((cells) => cells.map((td) => getComputedStyle(td, '::before').content.replace(/^"|"$/g, '')));
    assert.deepEqual(labels.slice(-2), ['Δ time', 'Δ cost']);
  });
});
