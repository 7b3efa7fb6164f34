// The page's number formatting (web/js/format.js): SI prefixes, parameter counts, durations, money,
// energy, and HTML escaping. Pure: runs in Node without a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as F from '../../web/js/format.js';

test('SI prefixes with three significant digits, and a unit after the prefix', () => {
  assert.equal(F.si(999), '999');
  assert.equal(F.si(1234), '1.23 k');
  assert.equal(F.si(1.5e12, 'FLOP'), '1.5 TFLOP');
  assert.equal(F.si(2.5e18, 'FLOP'), '2.5 EFLOP');
  assert.equal(F.si(12, 'B'), '12 B');
  assert.equal(F.si(-4.5e6), '-4.5 M');
  assert.equal(F.flops(3.14159e15), '3.14 PFLOP');
});

test('parameter counts the way papers write them', () => {
  assert.equal(F.count(124439808), '124M');
  assert.equal(F.count(7e9), '7B');
  assert.equal(F.count(1.8e12), '1.8T');
  assert.equal(F.count(512), '512');
  assert.equal(F.count(40_960), '41k');
});

test('step times in ms or s, training time from seconds to years', () => {
  assert.equal(F.ms(0.123), '0.12 ms');
  assert.equal(F.ms(12.3456), '12.35 ms');
  assert.equal(F.ms(1234), '1.23 s');
  assert.equal(F.hours(0.001), '3.6 s');
  assert.equal(F.hours(0.5), '30 min');
  assert.equal(F.hours(10), '10 h');
  assert.equal(F.hours(100), '4.17 days');
  assert.equal(F.hours(24 * 400), '1.1 years');
});

test('money, energy, memory, rates and shapes', () => {
  assert.equal(F.usd(1234.5), '$1,235');
  assert.equal(F.usd(1.234), '$1.23');
  assert.equal(F.usd(0), '$0.00');
  assert.equal(F.usd(0.001234), '$0.0012');
  assert.equal(F.kwh(12.34), '12.3 kWh');
  assert.equal(F.kwh(1234), '1.23 MWh');
  assert.equal(F.gib(80 * 2 ** 30), '80 GiB');  // binary, as frameworks report and vendors' "80GB" hold
  assert.equal(F.gib(80e9), '74.5 GiB');
  assert.equal(F.rate(1500, 'tokens/s'), '1.5 k tokens/s');
  assert.equal(F.shape([8, 1024]), '[8, 1024]');
  assert.equal(F.integer(1234567.8), '1,234,568');
});

test('anything that is not a finite number shows as a dash', () => {
  for (const f of [F.si, F.count, F.ms, F.hours, F.usd, F.kwh, F.gib, F.integer, F.num])
    for (const bad of [NaN, Infinity, null, undefined, '12']) assert.equal(f(bad), '—', `${f.name}(${bad})`);
  assert.equal(F.rate(null, 'samples/s'), '—');
  assert.equal(F.shape(null), '—');
  assert.equal(F.isNum(0), true);
  assert.equal(F.isNum(-Infinity), false);
});

test('HTML escaping covers the five special characters', () => {
  assert.equal(F.esc(`<a href="x">&'`), '&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
  assert.equal(F.esc(null), '');
  assert.equal(F.esc(42), '42');
});
