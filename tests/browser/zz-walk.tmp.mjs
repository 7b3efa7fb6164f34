// temporary: the practitioner's walk, dumping what the page says
import { writeFileSync } from 'node:fs';
import { start, settled, shot } from './helpers.mjs';
const h = await start({ viewport: { width: 1280, height: 800 } });
const out = [];
const T = async (page, sel) => (await page.locator(sel).count()) ? (await page.locator(sel).first().innerText()).replace(/\n+/g, ' | ') : '(none)';
async function dump(page, label) {
  out.push(`\n===== ${label}`);
  for (const sel of ['#model-in-use', '#model-summary', '#link-note', '#error', '#verdict', '#assumptions', '#refused', '#chart-note', '#breakdown', '#compare', '#cli'])
    out.push(`--- ${sel}: ${await T(page, sel)}`);
  const rows = page.locator('#results-table tbody tr');
  const n = await rows.count();
  out.push(`--- table rows ${n}; head: ${await T(page, '#results-table thead')}`);
  for (let i = 0; i < Math.min(n, 8); i++) out.push(`   ${(await rows.nth(i).innerText()).replace(/\s+/g, ' ')}`);
}
// 1. pretrain on a cluster
let page = await h.page('index.html#model=llama3-8b&gpus=64&seq=8192&gtokens=1048576');
await settled(page, 120_000);
await dump(page, '1 pretrain on a cluster (link)');
await page.click('#results-table tbody tr >> nth=0');
await dump(page, '1b first row picked');
await shot(page, 'walk-1');
await page.close();
// 2. fine-tune on a 24 GB card
page = await h.page('index.html#model=llama2-7b&hw=rtx-4090');
await settled(page, 120_000);
await dump(page, '2a llama2-7b on rtx-4090 before fine-tune');
writeFileSync('/tmp/s15/walk/out.txt', out.join('\n'));
const train = await page.locator('#train-form').innerText();
out.push('--- train form: ' + train.replace(/\n+/g, ' | '));
writeFileSync('/tmp/s15/walk/out.txt', out.join('\n'));
await h.close();
