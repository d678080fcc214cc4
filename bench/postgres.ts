/**
 * Scale-out benchmark (issue 15): the real service as separate `forecast serve` processes on
 * SQLite with 1 replica, and on PostgreSQL with 1 and with 3 replicas, in one run; the load
 * generator (this process) spreads calls over the replicas itself (round robin, no balancer in
 * between). Measured, closed loop, 16 concurrent callers, 3 s each after a 1-s warm-up, in 3
 * rounds alternating between the configurations (all running from the start), medians:
 *  - oracle warm query throughput over REST and gRPC (one 1,000-point daily series, its fit
 *    cached on every replica);
 *  - ingest throughput: 10 new observations per call, one account per caller, and all callers
 *    in one account (whose ingests take their revisions one after another).
 * PostgreSQL runs with `synchronous_commit = off`, SQLite's durability here (WAL with
 * `synchronous = NORMAL`: nothing lost when a process dies, the last commits may be on an OS
 * crash). Everything shares this machine's cores: the database server, the replicas and the
 * load generator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { QueryRequest } from '../gen/forecast/v1/oracle_service.pb';
import { AccountStore } from '../src/accounts/account-store';
import { systemClock } from '../src/clock';
import { Rng } from '../src/engine/rng';
import { EntityStore } from '../src/entities/entity-store';
import { ObservationStore } from '../src/entities/observation-store';
import { packageRoot } from '../src/rpc/descriptors';
import { openDatabase } from '../src/store/database';
import { closedLoop, grpcCaller, printTable, type LoadResult } from './load';

// scripts/postgres.js is plain CommonJS beside the sources, not compiled into dist/.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startPostgres } = require(join(packageRoot(), 'scripts', 'postgres.js')) as typeof import('../scripts/postgres');

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DAY = 86_400_000;
const SERIES_START = Date.UTC(2023, 0, 2);

interface Replica {
  readonly child: ChildProcess;
  readonly http: number;
  readonly grpc: number;
}

/** Start `forecast serve` with `env`; resolves its ports. */
async function startReplica(env: NodeJS.ProcessEnv): Promise<Replica> {
  const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'forecast.js'), 'serve'], {
    env: { ...process.env, HTTP_PORT: '0', GRPC_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let httpPort = 0;
    child.once('exit', (code) => reject(new Error(`replica exited (${code}) at start`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      httpPort ||= Number(/REST\s+http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1] ?? 0);
      const grpcPort = Number(/gRPC\s+127\.0\.0\.1:(\d+)/.exec(line)?.[1] ?? 0);
      if (httpPort && grpcPort) {
        child.removeAllListeners('exit');
        resolve({ child, http: httpPort, grpc: grpcPort });
      }
    });
  });
}

function stopReplica(r: Replica): Promise<void> {
  return new Promise((resolve) => {
    r.child.once('exit', () => resolve());
    r.child.kill('SIGTERM');
  });
}

/** The accounts, entities and series the measurements use, written before the replicas start. */
async function seed(url: string): Promise<{ keys: string[] }> {
  const database = await openDatabase(url);
  try {
    const accounts = new AccountStore(database, systemClock);
    const entities = new EntityStore(database);
    const observations = new ObservationStore(database);
    const keys: string[] = [];
    const rng = new Rng(1);
    for (let a = 0; a < CONCURRENCY; a++) {
      const { account, created } = await accounts.createAccount('enterprise', null);
      keys.push(created.apiKey);
      await database.transaction(async (trx) => {
        for (const entity of ['sku:oracle', ...Array.from({ length: CONCURRENCY }, (_, w) => `sku:in${w}`)]) {
          await entities.upsertRow(trx, account.id, { entity, type: 'sku', displayName: '', frequency: 'P1D', seasonLength: 7 }, 0);
          await entities.upsertAxes(trx, account.id, entity, [{ name: 'demand', unit: '', kind: 'continuous' }]);
        }
      });
      if (a === 0) {
        const rows = Array.from({ length: 1000 }, (_, i) => ({ axis: 'demand', time: SERIES_START + i * DAY, value: 200 + 0.05 * i + [0, -10, -5, 0, 15, 40, 30][i % 7] + 8 * rng.normal() }));
        await observations.ingest(account.id, [{ entity: 'sku:oracle', rows }], 0);
      }
    }
    return { keys };
  } finally {
    await database.close();
  }
}

function post(agent: http.Agent, port: number, path: string, key: string, body: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

/** Round robin over `fires`. */
function spreadOver(fires: readonly (() => Promise<boolean>)[]): () => Promise<boolean> {
  let i = 0;
  return () => fires[i++ % fires.length]();
}

/** One configuration under test: its replicas and how to load them, kind by kind. */
interface Setup {
  readonly label: string;
  readonly replicas: readonly Replica[];
  readonly kinds: ReadonlyMap<string, () => Promise<boolean>>;
  close(): void;
}

const KINDS = ['warm query REST', 'warm query gRPC', 'ingest, 16 accounts', 'ingest, 1 account'] as const;

/** Warm every replica's fit cache and build the load of each kind for `replicas`. */
async function prepare(label: string, replicas: readonly Replica[], keys: readonly string[]): Promise<Setup> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const oracleBody = JSON.stringify({ entity: 'sku:oracle', horizon: 7 });
  const request = Buffer.from(QueryRequest.encode({ entity: 'sku:oracle', depth: 0, includeManifest: false, axes: [], horizon: 7, thresholds: [], quantiles: [], reconciliation: '' }).finish());
  const callers = replicas.map((r) => grpcCaller(`127.0.0.1:${r.grpc}`, '/forecast.v1.OracleService/Query', request, { authorization: `Bearer ${keys[0]}` }));
  // Fit once on every replica (each caches its own fits): the measured queries are warm.
  for (const r of replicas) if (!(await post(agent, r.http, '/v1/oracle/query', keys[0], oracleBody))) throw new Error(`${label}: the first query failed`);
  // Ingests: round robin over 16 entities, each with a time line of its own (continued from round to round).
  const next = Array.from({ length: CONCURRENCY }, () => 0);
  let calls = 0;
  const ingest = (keyOf: (w: number) => string) => () => {
    const w = calls++ % CONCURRENCY;
    const replica = replicas[(next[w] + w) % replicas.length];
    const first = 2000 + next[w]++ * 10;
    const observations = Array.from({ length: 10 }, (_, i) => ({ axis: 'demand', time: new Date(SERIES_START + (first + i) * DAY).toISOString(), value: i }));
    return post(agent, replica.http, `/v1/entities/sku:in${w}/observations`, keyOf(w), JSON.stringify({ observations }));
  };
  const kinds = new Map<string, () => Promise<boolean>>([
    ['warm query REST', spreadOver(replicas.map((r) => () => post(agent, r.http, '/v1/oracle/query', keys[0], oracleBody)))],
    ['warm query gRPC', spreadOver(callers.map((c) => c.fire))],
    ['ingest, 16 accounts', ingest((w) => keys[w % keys.length])],
    ['ingest, 1 account', ingest(() => keys[0])],
  ]);
  return {
    label,
    replicas,
    kinds,
    close: () => {
      for (const c of callers) c.close();
      agent.destroy();
    },
  };
}

/** The median of each figure over rounds. */
function median(rounds: readonly LoadResult[]): LoadResult {
  const mid = (k: 'rps' | 'p50' | 'p99') => [...rounds].map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
  return { name: rounds[0].name, requests: rounds.reduce((n, r) => n + r.requests, 0), errors: rounds.reduce((n, r) => n + r.errors, 0), rps: mid('rps'), p50: mid('p50'), p99: mid('p99') };
}

async function runPostgresBench(): Promise<void> {
  const masterKey = randomBytes(32).toString('base64');
  const dir = mkdtempSync(join(tmpdir(), 'forecast-bench-'));
  const server = await startPostgres({ durable: true, settings: { synchronous_commit: 'off' } });
  const setups: Setup[] = [];
  try {
    // Every configuration runs from the start (idle while another is measured); rounds alternate
    // between them, so a drift of this shared machine's load hits all alike.
    const sqliteUrl = `sqlite:${join(dir, 'bench.db')}`;
    const sqliteKeys = (await seed(sqliteUrl)).keys;
    setups.push(await prepare('SQLite ×1', [await startReplica({ DATABASE_URL: sqliteUrl })], sqliteKeys));
    for (const count of [1, 3]) {
      const { Client } = await import('pg');
      const admin = new Client({ connectionString: server.url() });
      await admin.connect();
      await admin.query(`CREATE DATABASE bench${count} TEMPLATE template0 LOCALE 'C'`);
      await admin.end();
      const url = server.url(`bench${count}`);
      const { keys } = await seed(url);
      const replicas = await Promise.all(Array.from({ length: count }, () => startReplica({ DATABASE_URL: url, MASTER_KEY: masterKey })));
      setups.push(await prepare(`PostgreSQL ×${count}`, replicas, keys));
    }
    const rounds = new Map<string, LoadResult[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of setups) {
        for (const kind of KINDS) {
          const name = `${setup.label} ${kind}`;
          const r = await closedLoop(name, setup.kinds.get(kind)!, { concurrency: CONCURRENCY, seconds: SECONDS });
          rounds.set(name, [...(rounds.get(name) ?? []), r]);
        }
      }
    }
    const results = [...rounds.values()].map(median);
    console.log(`\nScale-out: SQLite with 1 replica, PostgreSQL with 1 and 3 (${CONCURRENCY} concurrent callers, ${SECONDS} s each, calls spread round robin; medians of ${ROUNDS} alternating rounds)`);
    printTable(results);
    const rps = (name: string) => results.find((r) => r.name === name)!.rps;
    console.log('\nratios'.padEnd(35) + 'PG×1 / SQLite×1'.padStart(18) + 'PG×3 / PG×1'.padStart(14));
    for (const k of KINDS) {
      console.log(k.padEnd(34) + (rps(`PostgreSQL ×1 ${k}`) / rps(`SQLite ×1 ${k}`)).toFixed(2).padStart(18) + (rps(`PostgreSQL ×3 ${k}`) / rps(`PostgreSQL ×1 ${k}`)).toFixed(2).padStart(14));
    }
  } finally {
    for (const setup of setups) {
      setup.close();
      await Promise.all(setup.replicas.map(stopReplica));
    }
    await server.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  runPostgresBench().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
