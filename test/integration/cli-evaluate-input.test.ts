/**
 * The benchmark commands (`forecast evaluate`, `forecast evaluate-hierarchy`) on input that asks
 * for more memory than any machine has: each is refused at once, naming the value, instead of
 * running out of memory (found by QA: a record's "period" of 1e9 aborted V8, 30 groupings or
 * `--draws 1e8` grew by gigabytes without end, each of `--workers 100` threads took 30 MB).
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/files';

const BIN = join(REPO_ROOT, 'bin', 'forecast.js');

/** Run the CLI with a small heap, so that a regression fails fast instead of taking the machine's memory. */
function cli(args: string[]): { code: number | null; err: string } {
  const r = spawnSync(process.execPath, ['--max-old-space-size=256', BIN, ...args], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, err: r.stderr };
}

test('evaluate and evaluate-hierarchy refuse a period, groupings, draws or workers beyond their limits, naming them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-eval-input-'));
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const train = Array.from({ length: 24 }, (_, t) => 10 + (t % 4));
  const jsonl = file('period.jsonl', `${JSON.stringify({ id: 'a', train, test: [1, 2], period: 1e9 })}\r\n`);
  const series = Array.from({ length: 6 }, (_, i) => ({
    path: ['T', `R${i % 2}`, `S${i}`],
    attributes: Object.fromEntries(Array.from({ length: 30 }, (_, g) => [`g${g}`, `v${(i + g) % 2}`])),
    values: Array.from({ length: 32 }, (_, t) => 10 + i + (t % 4)),
  }));
  const hierarchy = { name: 't', levels: ['Total', 'Region', 'Site'], period: 4, train_length: 24, horizon: 8, series };
  const bigPeriod = file('period.json', { ...hierarchy, period: 1e9 });
  const groupings = file('groupings.json', { ...hierarchy, groupings: series[0] && Object.keys(series[0].attributes) });
  const plain = file('plain.json', hierarchy);

  const cases: [string[], number, RegExp][] = [
    [['evaluate', '--data', jsonl, '--workers', '1'], 1, /record 1: "period" must be an integer 1\.\.1000/],
    [['evaluate-hierarchy', '--data', bigPeriod, '--workers', '1'], 1, /"period": must be an integer 1\.\.1000/],
    [['evaluate-hierarchy', '--data', groupings, '--workers', '1'], 1, /"groupings": at most 10/],
    [['evaluate-hierarchy', '--data', plain, '--workers', '1', '--draws', '100000000'], 2, /--draws must be at most \d+ for 9 series and horizon 8, got 100000000/],
    [['evaluate', '--data', file('ok.jsonl', JSON.stringify({ id: 'a', train, test: [1, 2] })), '--workers', '100000'], 2, /--workers must be at most 64, got 100000/],
    [['evaluate-hierarchy', '--data', plain, '--workers', '100000'], 2, /--workers must be at most 64, got 100000/],
  ];
  for (const [args, code, message] of cases) {
    const r = cli(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, message, args.join(' '));
  }
});

test('evaluate and evaluate-hierarchy refuse a data file that never ends or unpacks past 256 MiB, exit 1 (found by QA: --data /dev/zero read until killed)', async () => {
  const limit = /larger than 268435456 bytes/;
  for (const command of ['evaluate', 'evaluate-hierarchy']) {
    const r = cli([command, '--data', '/dev/zero', '--workers', '1']);
    assert.equal(r.code, 1, `${command}: ${r.err}`);
    assert.match(r.err, limit, command);
  }
  // a small .gz that unpacks to 300 MiB of spaces (written in pieces: the test holds 1 MiB at a time)
  const bomb = join(mkdtempSync(join(tmpdir(), 'forecast-eval-gz-')), 'bomb.jsonl.gz');
  const zip = createGzip({ level: 9 });
  const done = pipeline(zip, createWriteStream(bomb));
  const piece = Buffer.alloc(1 << 20, 0x20);
  for (let i = 0; i < 300; i++) if (!zip.write(piece)) await once(zip, 'drain');
  zip.end();
  await done;
  const r = cli(['evaluate', '--data', bomb, '--workers', '1']);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /larger than 268435456 bytes unpacked/);
});
