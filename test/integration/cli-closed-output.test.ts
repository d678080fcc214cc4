/**
 * The CLI when whoever reads its output goes away (`forecast … | head -1`, a log collector that
 * stopped): a command ends quietly with the status a SIGPIPE gives, and the server keeps serving
 * (found by QA: every command died with an EPIPE stack trace, and `forecast serve 2>&1 | head -1`
 * spun at full CPU, never listened and ignored SIGTERM).
 */
import { afterEach, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/files';

/** Depends on no database helper on purpose, as signals.test.ts: the launcher does not care which database. */
const BIN = join(REPO_ROOT, 'bin', 'forecast.js');

/** Every process group a test started (each child leads its own): killed whole after the test, the server under the launcher too. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function env(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-pipe-'));
  return { ...process.env, HTTP_PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 's.db')}`, SHUTDOWN_GRACE_MS: '2000' };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

test('a command whose stdout is closed exits 141 without a stack trace', async () => {
  // one database for the three: `accounts create` makes it, `signing-keys list` only reads one
  const shared = env();
  for (const args of [['help'], ['accounts', 'create', '--tier', 'free'], ['signing-keys', 'list', '--json']]) {
    const child = spawn(process.execPath, [BIN, ...args], { env: shared, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    started.push(child);
    child.stdout!.destroy(); // the reader is gone before the command writes
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    assert.equal(await exited(child), 141, `${args.join(' ')}: ${err}`);
    assert.doesNotMatch(err, /EPIPE|node:events|\n\s+at /, args.join(' '));
  }
});

test('the server whose stderr is closed keeps serving, and SIGTERM still stops it (status 0)', async () => {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...env(), LOG_LEVEL: 'debug' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  child.stderr!.destroy(); // its log lines have nowhere to go from the first one
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const end = Date.now() + 30_000;
  while (!/REST\s+http:\/\/127\.0\.0\.1:\d+/.test(out)) {
    assert.ok(Date.now() < end && child.exitCode === null, `the server never listened: ${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const base = /REST\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
  for (let i = 0; i < 3; i++) assert.equal((await fetch(`${base}/v1/version`)).status, 200);
  assert.equal((await fetch(`${base}/v1/account`)).status, 401);
  const code = exited(child);
  child.kill('SIGTERM');
  assert.equal(await code, 0);
});
