// The option table drives the command line: every row with a flag is accepted by each command it lists,
// named in that command's --help, echoed with the value used (rows marked echo), and refused by the commands
// it does not list. Nothing here names an option: the rows come from `prenet options --json`.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const binary = resolve(root, process.env.PRENET ?? 'build/prenet');
const run = (...args) => spawnSync(binary, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 });

const { options } = JSON.parse(run('options', '--json').stdout);
const commands = [...new Set(options.flatMap((o) => o.commands))];
// A value worth trying for some rows and the flags it needs beside it.
const exampleRows = JSON.parse(readFileSync(resolve(root, 'tests/fixtures/option-examples.json'), 'utf8')).rows;
const exampleOf = (row) => exampleRows[row.name] ?? {};

// Command-line values a row accepts, other than its default, made from the row alone (and its example).
function examples(row) {
  const { value } = exampleOf(row);
  if (value !== undefined && row.type === 'document') return [resolve(root, value)];  // a file in the repository
  if (value !== undefined) return [value];
  if (row.type === 'count') return ['64'];
  if (row.type === 'number') return [String(row.min + (row.min_exclusive ? 1 : 1.5))];
  if (row.type === 'choice') return row.choices;
  if (row.type === 'flag') return [null];
  if (row.type === 'document') return [resolve(root, 'models/kernels.json')];  // kernel models, as `prenet fit` writes
  if (row.type === 'hardware') return ['t4,a100-sxm4-80gb'];
  if (row.type === 'model') return ['gpt2'];
  return [];
}

const asEchoed = (row, text) =>
  text === null ? true : row.type === 'choice' || row.type === 'text' ? text : Number(text);

test('the table has rows for every command and each row names its commands', () => {
  assert.ok(options.length >= 20);
  for (const c of ['predict', 'features', 'kernels', 'fit', 'zoo', 'options']) assert.ok(commands.includes(c), c);
});

test('every option example names a predict row, and the table serves no examples', () => {
  assert.ok(Object.keys(exampleRows).length >= 10);
  for (const name of Object.keys(exampleRows))
    assert.ok(options.some((o) => o.name === name && o.commands.includes('predict')), `${name} is no predict row`);
  for (const row of options) assert.ok(!('example' in row) && !('example_with' in row), row.name);
});

describe('every predict option is accepted and echoed', () => {
  // bf16 for the mixed recipe, a sample budget for epochs; a vision model for image. The row's flag replaces
  // the base's own.
  const base = { '--hardware': 't4', '--precision': 'bf16', '--samples': '1000' };
  for (const row of options.filter((o) => o.flag && o.api && o.commands.includes('predict'))) {
    for (const value of examples(row)) {
      test(`${row.flag} ${value ?? ''}`, () => {
        let echoed = false, answered = 0;
        const withFlags = exampleOf(row).with ?? [];
        const needs = Object.fromEntries(withFlags.flatMap((w, i, all) => (i % 2 ? [] : [[w, all[i + 1]]])));
        for (const model of ['gpt2', 'resnet18']) {
          const flags = { ...base, '--model': model, ...needs, [row.flag]: value };
          const args = ['predict', '--json', ...Object.entries(flags).flatMap(([f, v]) => (v === null ? [f] : [f, v]))];
          const r = run(...args);
          // A parallel layout one of the models cannot take (tensor parallelism of a CNN) is a clear refusal;
          // every other option must work for both.
          if (r.status === 2 && withFlags.length && r.stderr.trim()) continue;
          assert.equal(r.status, 0, `prenet ${args.join(' ')}: ${r.stderr}`);
          answered += 1;
          const doc = JSON.parse(r.stdout);
          if (!row.echo || doc.settings[row.name] === asEchoed(row, value)) echoed = true;
        }
        assert.ok(answered > 0, `no model answers ${row.flag} ${value}`);
        assert.ok(echoed, `${row.flag} ${value} is not echoed as settings.${row.name}`);
      });
    }
  }
});

describe('every flag is in the --help of each command that takes it, and refused by the others', () => {
  for (const command of commands) {
    const help = run(command, '--help');
    test(`prenet ${command} --help`, () => {
      assert.equal(help.status, 0, help.stderr);
      for (const row of options.filter((o) => o.flag && o.commands.includes(command) && o.name !== 'version'))
        assert.ok(help.stdout.includes(`${row.flag}`), `${command} --help does not mention ${row.flag}`);
    });
  }
  test('a flag of another command is an error naming it', () => {
    for (const row of options.filter((o) => o.flag && !o.commands.includes('zoo'))) {
      const args = ['zoo', row.flag, ...(row.type === 'flag' ? [] : ['1'])];
      const r = run(...args);
      assert.equal(r.status, 2, `prenet ${args.join(' ')} exited ${r.status}`);
      assert.ok(r.stderr.includes(row.flag), r.stderr);
    }
  });
});

test("a flag's words: only flags take them, and the word the bare flag means is one of them", () => {
  const withWords = options.filter((o) => o.switch_values);
  assert.ok(withWords.length >= 2);
  for (const row of withWords) {
    assert.equal(row.type, 'flag', row.name);
    assert.ok(row.switch_values.length > 0, row.name);
    if (row.switch_bare !== null) assert.ok(row.switch_values.includes(row.switch_bare), `${row.name}: ${row.switch_bare}`);
  }
  for (const row of options.filter((o) => !o.switch_values)) assert.equal(row.switch_bare, null, row.name);
});
