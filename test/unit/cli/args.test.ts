/** The CLI's argument parser (src/cli/args.ts). */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { allowOnly, optionValue, parseArgs, UsageError } from '../../../src/cli/args';

test('options with values, flags and positionals', () => {
  const args = parseArgs(['verify', '--jwks', 'k.json', '--json', '--tier=pro'], ['json']);
  assert.deepEqual(args.positionals, ['verify']);
  assert.deepEqual([...args.options], [['jwks', 'k.json'], ['json', true], ['tier', 'pro']]);
});

test('an option given twice is a usage error, whatever its form (found by QA: the last one silently won)', () => {
  for (const argv of [['--tier', 'free', '--tier', 'enterprise'], ['--tier=free', '--tier', 'free'], ['--json', '--json']]) {
    assert.throws(() => parseArgs(argv, ['json']), (err: unknown) => err instanceof UsageError && /^--(tier|json) is given more than once$/.test(err.message), argv.join(' '));
  }
});

test('a flag given a value is a usage error (found by QA: --json=false meant JSON)', () => {
  for (const argv of [['--json=false'], ['--json=']]) assert.throws(() => parseArgs(argv, ['json']), /^Error: --json takes no value: give it alone, or leave it out$/, argv.join(' '));
});

test('an option without its value is a usage error', () => {
  assert.throws(() => parseArgs(['--tier']), /--tier needs a value/);
});

test('allowOnly refuses unknown options and arguments beyond those the command takes, a single-dash word included (found by QA: dropped silently)', () => {
  const check = (argv: string[], positionals: number) => allowOnly(parseArgs(argv, ['json']), ['account', 'scopes', 'json'], positionals);
  check(['--account', 'a', '--json'], 0);
  check(['FILE', '--account', 'a'], 1);
  assert.throws(() => check(['--account', 'a', '-scopes', 'forecast:read'], 0), /^Error: unexpected argument "-scopes" \(options start with --\)$/);
  assert.throws(() => check(['FILE', 'extra'], 1), /^Error: unexpected argument "extra"$/);
  assert.throws(() => check(['--bogus=1'], 0), /unknown option --bogus/);
});

test('an option given an empty value is a usage error, as one given none (found by QA: --host \'\' listened on every interface)', () => {
  for (const argv of [['--host', ''], ['--host=']]) assert.throws(() => optionValue(parseArgs(argv), 'host'), /^Error: --host needs a value$/, argv.join(' '));
  assert.equal(optionValue(parseArgs(['--host', '::1']), 'host'), '::1');
  assert.equal(optionValue(parseArgs([]), 'host'), undefined);
});
