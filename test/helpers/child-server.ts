/**
 * The real server as a child process (`bin/forecast.js serve`, compiled code in dist/: `make test`
 * builds first), for what an in-process service cannot show: that the process survives (the
 * fuzz suite), what a kill -9 leaves behind (the fault suite), signals, and two processes on one
 * database. It runs on the test run's database (`helpers/database.ts`: a SQLite file, or
 * PostgreSQL on the second pass). Ports are 0; the child prints the ones it bound. Accounts are
 * made through the test process's own connection to the same database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Scope, Tier } from '../../src/accounts/tiers';
import { AccountStore } from '../../src/accounts/account-store';
import { systemClock } from '../../src/clock';
import { openDatabase, type Database } from '../../src/store/database';
import { freshDatabaseUrl, type TestDatabaseUrl } from './database';
import { REPO_ROOT } from './files';

export const BIN = join(REPO_ROOT, 'bin', 'forecast.js');
/** The server's V8 flags (as bin/forecast.js would add them), so the child is the server itself, not a re-executing parent. */
const SERVER_FLAGS: readonly string[] = require(join(REPO_ROOT, 'dist', 'src', 'server-flags.js')).SERVER_NODE_FLAGS;

export interface ChildServer {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly baseUrl: string;
  readonly grpcAddress: string;
  readonly databaseUrl: string;
  /** Everything the child wrote to stderr so far (its JSON log lines). */
  stderr(): string;
  stdout(): string;
  /** Log lines (parsed) at level error. */
  errorLogs(): { msg: string; [k: string]: unknown }[];
  /** Whether the process is still running. */
  alive(): boolean;
  /** Resident set size of the process now, in bytes (Linux /proc); NaN once it is gone. */
  rssBytes(): number;
  /** Resolves when the process has exited, with its code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Send a signal and wait for the exit (then drop the database if the server had its own). */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ChildOptions {
  /** The database (several servers may share one); default: a fresh one of the run's dialect, dropped by `stop`. */
  readonly database?: Pick<TestDatabaseUrl, 'url' | 'masterKey'>;
  /** Extra environment. */
  readonly env?: Record<string, string>;
  /** Run through `bin/forecast.js` exactly as a user does (it then re-executes itself with the server flags). */
  readonly viaLauncher?: boolean;
}

/** Start `forecast serve` as a child process; resolves once it prints its addresses. */
export async function startChildServer(options: ChildOptions = {}): Promise<ChildServer> {
  const own = options.database ? undefined : await freshDatabaseUrl();
  const database = options.database ?? own!;
  const databaseUrl = database.url;
  const env = {
    ...process.env,
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ...(database.masterKey && { MASTER_KEY: database.masterKey }),
    LOG_LEVEL: 'warn',
    SHUTDOWN_GRACE_MS: '5000',
    ...options.env,
  };
  const args = options.viaLauncher ? [BIN, 'serve'] : [...SERVER_FLAGS, BIN, 'serve'];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  let running = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running = false;
      resolve({ code, signal });
    }),
  );
  const addresses = await new Promise<{ rest: string; grpc: string }>((resolve, reject) => {
    const look = () => {
      const rest = /REST\s+(http:\/\/127\.0\.0\.1:\d+)\/v1\//.exec(out);
      const grpc = /gRPC\s+(127\.0\.0\.1:\d+)/.exec(out);
      if (rest && grpc) {
        child.stdout!.off('data', look);
        resolve({ rest: rest[1], grpc: grpc[1] });
      }
    };
    child.stdout!.on('data', look);
    void exited.then(({ code, signal }) => reject(new Error(`the server exited (${code ?? signal}) before it listened:\n${err}`)));
  });
  return {
    process: child,
    pid: child.pid!,
    baseUrl: addresses.rest,
    grpcAddress: addresses.grpc,
    databaseUrl,
    stderr: () => err,
    stdout: () => out,
    errorLogs: () =>
      err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: string; msg: string })
        .filter((l) => l.level === 'error'),
    alive: () => running,
    rssBytes: () => {
      try {
        return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) * 1024;
      } catch {
        return NaN; // the process is gone
      }
    },
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (running) child.kill(signal);
      const exit = await exited;
      await own?.drop();
      return exit;
    },
  };
}

/** Accounts in a child server's database, made through this process's own connection. */
export class ChildAccounts {
  private constructor(private readonly database: Database) {}

  static async open(databaseUrl: string): Promise<ChildAccounts> {
    return new ChildAccounts(await openDatabase(databaseUrl));
  }

  get db(): Database {
    return this.database;
  }

  async create(tier: Tier = 'enterprise', scopes?: readonly Scope[]): Promise<{ accountId: string; key: string }> {
    const { account, created } = await new AccountStore(this.database, systemClock).createAccount(tier, null, scopes);
    return { accountId: account.id, key: created.apiKey };
  }

  close(): Promise<void> {
    return this.database.close();
  }
}
