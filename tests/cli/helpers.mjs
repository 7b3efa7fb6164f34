// Shared by the CLI contract tests: the built binary, run with a timeout, and the shape of a refusal.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const binary = resolve(root, process.env.PRENET ?? 'build/prenet');

/** Runs the CLI; a short timeout by default (a FIFO that blocked the reader would hang here). */
export function prenet(args, { timeout = 20_000 } = {}) {
  const r = spawnSync(binary, args, { encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return r;
}

/** Runs the CLI on these arguments, with a timeout long enough for a plan search. */
export const run = (...args) => prenet(args, { timeout: 120_000 });

/** The CLI's --json reply; a non-zero exit fails the test with its message. */
export function json(...args) {
  const r = run(...args, '--json');
  assert.equal(r.status, 0, `prenet ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** A file of tests/fixtures/<dir>/. */
export const fixture = (dir, file) => resolve(root, 'tests', 'fixtures', dir, file);

/** The CLI refuses `args`: exit status 2, no signal, one `prenet: error:` line matching `pattern`. */
export function assertFails(args, pattern) {
  const r = prenet(args);
  assert.equal(r.signal, null, `prenet ${args.join(' ')} died of ${r.signal}`);
  assert.equal(r.status, 2, `prenet ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  assert.match(r.stderr, /^prenet: error: \S.*\n$/);
  assert.match(r.stderr, pattern);
  return r.stderr;
}
