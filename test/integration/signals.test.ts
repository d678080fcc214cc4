/**
 * Stopping the server started by `forecast serve` (issue 11, defect 9). `bin/forecast.js` re-executes
 * itself with the server's V8 flags, so two processes run: the launcher and the server. Whichever
 * gets the signal, the server drains and exits; when the launcher's parent dies without passing a
 * signal on (as `npx` under `sh -c` does), or the launcher itself dies, the server goes too.
 */
import { afterEach, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/files';

/** Depends on no database helper on purpose: this runs once (the launcher does not care which database). */
const BIN = join(REPO_ROOT, 'bin', 'forecast.js');

interface Tree {
  readonly top: ChildProcess;
  readonly launcher: number;
  readonly server: number;
  output(): string;
}

/** Every process a test started: whatever a failing test leaves running is killed after it. */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

/** Children of a process (Linux /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // a zombie is dead for our purpose
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** Poll `check` every 25 ms until it holds (or fail after `ms`). */
async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Start `forecast serve` as a user would: through `bin/forecast.js` (the launcher), optionally under
 * `sh -c` that does not exec it (like `npx`). Resolves once the server printed its addresses.
 */
async function startTree(underShell: boolean): Promise<Tree> {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-sig-'));
  const env = { ...process.env, HTTP_PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 's.db')}`, LOG_LEVEL: 'warn' };
  const top = underShell
    ? spawn('/bin/sh', ['-c', `"${process.execPath}" "${BIN}" serve; true`], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(top.pid!);
  let out = '';
  top.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  top.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  await until('the server listens', () => /gRPC\s+127\.0\.0\.1:\d+/.test(out));
  const launcher = underShell ? childrenOf(top.pid!)[0] : top.pid!;
  const [server] = childrenOf(launcher);
  started.push(top.pid!, launcher, server);
  assert.ok(launcher && server, `launcher ${launcher}, server ${server}`);
  return { top, launcher, server, output: () => out };
}

describe('forecast serve stops whichever process is told to', () => {
  test('SIGTERM to the launcher: the server drains and exits, the launcher exits 0', async () => {
    const tree = await startTree(false);
    const exited = new Promise<number | null>((r) => tree.top.once('exit', (code) => r(code)));
    process.kill(tree.launcher, 'SIGTERM');
    assert.equal(await exited, 0);
    await until('the server is gone', () => !alive(tree.server));
    assert.match(tree.output(), /SIGTERM: draining/);
  });

  test('SIGTERM to the server itself: it drains and exits, and the launcher with it (status 0)', async () => {
    const tree = await startTree(false);
    const exited = new Promise<number | null>((r) => tree.top.once('exit', (code) => r(code)));
    process.kill(tree.server, 'SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(!alive(tree.server));
  });

  test('the launcher killed with SIGKILL: the server sees its channel close and exits', async () => {
    const tree = await startTree(false);
    process.kill(tree.launcher, 'SIGKILL');
    await until('the server is gone', () => !alive(tree.server));
    assert.match(tree.output(), /launcher exited: draining/);
  });

  test('as under npx: SIGTERM kills the `sh -c` in between, the orphaned launcher stops the server and exits', async () => {
    const tree = await startTree(true);
    process.kill(tree.top.pid!, 'SIGTERM');
    await until('the shell is gone', () => !alive(tree.top.pid!));
    await until('the server is gone', () => !alive(tree.server));
    await until('the launcher is gone', () => !alive(tree.launcher));
  });
});

describe('forecast serve that cannot start', () => {
  test('a port in use, or a bad setting: one line on stderr (no password from DATABASE_URL), and launcher and server exit 1', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as AddressInfo).port;
    try {
      const dir = mkdtempSync(join(tmpdir(), 'forecast-sig-'));
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const masterKey = Buffer.alloc(32, 7).toString('base64');
      const cases: [Record<string, string>, RegExp][] = [
        [{ HTTP_PORT: String(port) }, /^forecast: listen EADDRINUSE/m],
        [{ MASTER_KEY: 'short' }, /^forecast: MASTER_KEY must hold 32 random bytes/m],
        [{ DATABASE_URL: 'mysql://user:hunter2@db/forecast' }, /^forecast: DATABASE_URL must start with sqlite: or postgres:\/\/, got mysql:$/m],
        [
          { DATABASE_URL: `postgres://user:hunter2@127.0.0.1:${closedPort}/forecast`, MASTER_KEY: masterKey },
          new RegExp(`^forecast: cannot reach the database \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}\\): check DATABASE_URL and that the server is running$`, 'm'),
        ],
      ];
      for (const [extra, message] of cases) {
        const env = { ...process.env, HTTP_PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 's.db')}`, LOG_LEVEL: 'warn', ...extra };
        const top = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        started.push(top.pid!);
        let err = '';
        let out = '';
        top.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
        top.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
        const code = await new Promise<number | null>((r) => top.once('exit', (c) => r(c)));
        assert.equal(code, 1, err);
        assert.match(err, message);
        for (const text of [err, out]) {
          assert.doesNotMatch(text, /\n\s+at |\\n\s+at /); // no stack trace, printed or in a JSON log line
          assert.doesNotMatch(text, /hunter2/);
        }
      }
    } finally {
      busy.close();
    }
  });
});
