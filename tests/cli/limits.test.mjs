// Issue #13's limits as the CLI meets them: only regular files are read (a FIFO or /dev/zero is refused at
// once, never a hang), deep or huge files are refused before parsing, and user strings printed in a table
// cannot drive the terminal (control characters are escaped). The API-level corpus: tests/api-bad-inputs-test.cpp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertFails, prenet as run } from './helpers.mjs';

let dir;
const file = (name) => join(dir, name);
const prenet = (...args) => run(args);

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'prenet-limits-'));
  writeFileSync(file('deep.json'), '['.repeat(100000) + ']'.repeat(100000));
  writeFileSync(file('big.json'), Buffer.alloc(64 * 1024 * 1024 + 1, 0x20));
  writeFileSync(file('named.json'), JSON.stringify({
    input: { shape: [8] },
    layers: [{ type: 'linear', name: 'fc\u001b[2J\u001b]0;pwned\u0007\u009b31m', out_features: 4 }],
  }));
  spawnSync('mkfifo', [file('fifo.json')]);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('a FIFO as --model is refused, not read', { skip: process.platform === 'win32' }, () => {
  if (!existsSync(file('fifo.json'))) return;  // no mkfifo
  assertFails(['features', '--model', file('fifo.json')], /not a regular file/);
  assertFails(['predict', '--model', 'gpt2', '--hardware', file('fifo.json')], /not a regular file/);
});

test('/dev/zero as --model or --hardware is refused', { skip: !existsSync('/dev/zero') }, () => {
  assertFails(['features', '--model', '/dev/zero'], /not a regular file/);
  assertFails(['predict', '--model', 'gpt2', '--hardware', '/dev/zero'], /not a regular file/);
});

test('a directory as --model is refused', () => {
  assertFails(['features', '--model', dir], /not a regular file/);
});

test('JSON nested 10^5 deep is refused before parsing', () => {
  assertFails(['features', '--model', file('deep.json')], /nested more than 64 levels/);
  assertFails(['predict', '--model', 'gpt2', '--hardware', file('deep.json')], /nested more than 64 levels/);
});

test('a file over 64 MiB is refused without reading it', () => {
  assertFails(['features', '--model', file('big.json')], /64 MiB/);
});

test('control characters in a layer name are escaped in the table, kept in the JSON', () => {
  const r = prenet('features', '--model', file('named.json'));
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  assert.match(r.stdout, /fc\\x1b\[2J\\x1b\]0;pwned\\x07\\u009b31m/);
  const j = JSON.parse(prenet('features', '--model', file('named.json'), '--json').stdout);
  assert.ok(j.layers.some((l) => l.name === 'fc\u001b[2J\u001b]0;pwned\u0007\u009b31m'));
});
