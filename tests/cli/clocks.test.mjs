// CLI contract of sustained clocks and power limits (docs/clocks.md): a user sheet's `power.limit_w` below the
// TDP slows the step and shows `step.sustained_clock`; a catalogue sheet's reply has no such key; bad limits are
// refused with one error line naming the field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assertFails, binary, prenet, root } from './helpers.mjs';

let dir;
const file = (name) => join(dir, name);
const h100 = JSON.parse(readFileSync(resolve(root, 'hardware/h100-sxm5-80gb.json'), 'utf8'));
const withLimit = (id, limit) => ({ ...h100, id, power: { ...h100.power, limit_w: limit } });

before(() => {
  assert.ok(existsSync(binary), `${binary} not found; build it or set PRENET`);
  dir = mkdtempSync(join(tmpdir(), 'prenet-clocks-'));
  writeFileSync(file('h100-500w.json'), JSON.stringify(withLimit('h100-500w', 500)));
  writeFileSync(file('h100-700w.json'), JSON.stringify(withLimit('h100-700w', 700)));
  writeFileSync(file('h100-0w.json'), JSON.stringify(withLimit('h100-0w', 0)));
  writeFileSync(file('h100-huge.json'), JSON.stringify(withLimit('h100-huge', 5e6)));
});
after(() => dir && rmSync(dir, { recursive: true, force: true }));

function predict(hardware) {
  const r = prenet(['predict', '--model', 'gpt2', '--hardware', hardware, '--precision', 'bf16', '--batch', '8',
    '--tokens', '1e9', '--json']);
  assert.equal(r.status, 0, r.stderr);
  return Object.fromEntries(JSON.parse(r.stdout).results.map((x) => [x.hardware, x]));
}

test('a 500 W limit on an H100 predicts a slower step and says why; 700 W changes nothing', () => {
  const r = predict(`h100-sxm5-80gb,${file('h100-500w.json')},${file('h100-700w.json')}`);
  const base = r['h100-sxm5-80gb'], capped = r['h100-500w'], full = r['h100-700w'];
  assert.equal(base.step.sustained_clock, undefined, 'a catalogue sheet at its TDP shows no clock');
  assert.equal(full.step.total_ms, base.step.total_ms);
  assert.ok(capped.step.total_ms > base.step.total_ms);
  assert.ok(capped.step.matmul_ms / base.step.matmul_ms <= 1 / capped.step.sustained_clock.matrix_factor + 1e-9);
  const c = capped.step.sustained_clock;
  assert.equal(c.reference_mhz, 1830);
  assert.ok(Math.abs(c.mhz - 1579.05) < 0.01, `sustained ${c.mhz}`);
  assert.ok(Math.abs(c.matrix_factor - 0.86287) < 1e-4);
  assert.match(c.basis, /500 W/);
  assert.equal(full.step.sustained_clock.matrix_factor, 1);
  assert.match(full.step.sustained_clock.basis, /changes nothing/);
  assert.ok(capped.run.average_power_w < base.run.average_power_w, 'matrix time draws the limit');
});

test('a limit that is zero or implausibly large is refused naming limit_w', () => {
  assertFails(['predict', '--model', 'gpt2', '--hardware', file('h100-0w.json'), '--json'], /limit_w/);
  assertFails(['predict', '--model', 'gpt2', '--hardware', file('h100-huge.json'), '--json'], /limit_w/);
});
