/**
 * PostgreSQL stopped for 5 seconds under load (API.md section 13): three replicas keep running
 * and answer only 503 `unavailable` (gRPC UNAVAILABLE) while it is down — no 500, no crash —
 * report NOT_SERVING on gRPC health, and serve fully again within 2 s of the database's return,
 * by themselves; every write they acknowledged is still there. On a PostgreSQL server of its own,
 * since it is stopped.
 */
import { afterAll, beforeAll } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { AccountStore } from '../../src/accounts/account-store';
import { SCOPES } from '../../src/accounts/tiers';
import { systemClock } from '../../src/clock';
import { openDatabase } from '../../src/store/database';
import { startPostgres, type PostgresServer } from '../../scripts/postgres';
import { createPostgresDatabase, TEST_DIALECT, testOn } from '../helpers/database';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { startReplicas, type Replica } from '../helpers/replicas';

const test = testOn(['postgres'], 'stops and restarts a PostgreSQL server under three replicas');

const OUTAGE_MS = 5000;
/** Load: this many callers per replica, each pausing this long between calls. */
const CALLERS_PER_REPLICA = 3;
const PAUSE_MS = 10;

let server: PostgresServer;
let replicas: Replica[] = [];
let key: string;

beforeAll(async () => {
  if (TEST_DIALECT !== 'postgres') return;
  server = await startPostgres();
  const { url } = await createPostgresDatabase(server.url());
  replicas = await startReplicas(3, { DATABASE_URL: url, MASTER_KEY: randomBytes(32).toString('base64') });
  const database = await openDatabase(url);
  key = (await new AccountStore(database, systemClock).createAccount('enterprise', null, [...SCOPES])).created.apiKey;
  await database.close();
});
afterAll(async () => {
  for (const r of replicas) await r.stop();
  await server?.destroy();
});

/** gRPC health of the whole server (`grpc.health.v1`, service ""): SERVING, NOT_SERVING, or the call's failure. */
function health(client: grpc.Client): Promise<string> {
  return new Promise((resolve) => {
    client.makeUnaryRequest('/grpc.health.v1.Health/Check', (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (err, res) => {
      if (err) resolve(`error ${err.code}`);
      else resolve(res && res.length >= 2 && res[0] === 0x08 ? ({ 1: 'SERVING', 2: 'NOT_SERVING' } as Record<number, string>)[res[1]] ?? `status ${res[1]}` : 'SERVING_UNKNOWN');
    });
  });
}

const day = (d: number) => new Date(Date.UTC(2020, 0, 1 + d)).toISOString().replace('.000Z', 'Z');

interface Call {
  readonly caller: number;
  readonly replica: number;
  readonly start: number;
  readonly end: number;
  readonly outcome: Outcome;
  /** The day an ingest wrote (ingests only). */
  readonly day?: number;
}

test('PostgreSQL stopped for 5 s under load: only 503s meanwhile, NOT_SERVING, full service within 2 s of its return, nothing acknowledged lost', async () => {
  const accounts = replicas.map((r) => r.client(AccountServiceClient));
  const entities = replicas.map((r) => r.client(EntityServiceClient));
  const healthClients = replicas.map((r) => new grpc.Client(r.grpcAddress, grpc.credentials.createInsecure()));
  const callers = CALLERS_PER_REPLICA * replicas.length;
  for (let c = 0; c < callers; c++) {
    const made = await rest(replicas[c % 3].target, key, { method: 'POST', path: '/v1/entities', body: { entity: `load:c${c}`, frequency: 'P1D', axes: [{ name: 'v' }] } });
    assert.equal(made.code, 'ok', made.message);
  }

  const calls: Call[] = [];
  let running = true;
  const caller = async (c: number) => {
    const replica = c % 3;
    const entity = `load:c${c}`;
    let days = 0;
    for (let i = 0; running; i++) {
      const start = Date.now();
      const overRest = (i + c) % 2 === 0;
      let outcome: Outcome;
      let written: number | undefined;
      switch (i % 3) {
        case 0:
          outcome = overRest ? await rest(replicas[replica].target, key, { method: 'GET', path: '/v1/account' }) : await grpcCall(accounts[replica], accounts[replica].getAccount, key, {});
          break;
        case 1: {
          written = days++;
          const observations = [{ axis: 'v', time: day(written), value: written }];
          outcome = overRest
            ? await rest(replicas[replica].target, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations } })
            : await grpcCall(entities[replica], entities[replica].ingestObservations, key, { entity, observations: observations.map((o) => ({ ...o, revision: '0' })) });
          break;
        }
        default:
          outcome = overRest
            ? await rest(replicas[replica].target, key, { method: 'GET', path: `/v1/entities/${entity}/observations?page_size=5` })
            : await grpcCall(entities[replica], entities[replica].listObservations, key, { entity, axis: '', start: '', end: '', asOfRevision: '0', pageSize: 5, cursor: '' });
      }
      calls.push({ caller: c, replica, start, end: Date.now(), outcome, day: written });
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  };
  const load = Promise.all(Array.from({ length: callers }, (_, c) => caller(c)));
  const healthy = async () => (await Promise.all(healthClients.map(health))).every((h) => h === 'SERVING');
  const fullService = async () => {
    const checks = await Promise.all(
      replicas.flatMap((r, i) => [rest(r.target, key, { method: 'GET', path: '/v1/account' }), grpcCall(accounts[i], accounts[i].getAccount, key, {})]),
    );
    return checks.every((o) => o.code === 'ok') && (await healthy());
  };
  /** Poll `condition` every 20 ms until it holds (at most `limitMs`); the time it took. */
  const until = async (condition: () => Promise<boolean>, limitMs: number, what: string) => {
    const t0 = Date.now();
    while (!(await condition())) {
      if (Date.now() - t0 > limitMs) assert.fail(`${what}: not within ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Date.now() - t0;
  };

  try {
    await new Promise((r) => setTimeout(r, 1000)); // load before the outage
    assert.ok(await healthy(), 'SERVING before the outage');

    const stopBegan = Date.now();
    await server.stop();
    const stopped = Date.now();
    await until(async () => (await Promise.all(healthClients.map(health))).every((h) => h === 'NOT_SERVING'), 3000, 'every replica NOT_SERVING');
    await new Promise((r) => setTimeout(r, stopBegan + OUTAGE_MS - Date.now()));

    const startBegan = Date.now();
    await server.start();
    const returned = Date.now();
    const recovery = await until(fullService, 2000, 'full service after the database returned');
    const served = returned + recovery;
    // Load after the return, until every caller has had two more successes.
    await until(async () => Array.from({ length: callers }, (_, c) => c).every((c) => calls.filter((x) => x.caller === c && x.start >= served && x.outcome.code === 'ok').length >= 2), 60_000, 'every caller served again');
    running = false;
    await load;

    const byCode = new Map<string, number>();
    for (const c of calls) byCode.set(c.outcome.code, (byCode.get(c.outcome.code) ?? 0) + 1);
    const during = calls.filter((c) => c.start >= stopped && c.end <= startBegan);
    const latencies = during.map((c) => c.end - c.start).sort((a, b) => a - b);
    process.stdout.write(
      `outage: ${calls.length} calls (${[...byCode].map(([k, v]) => `${k} ${v}`).join(', ')}); ${during.length} during the outage, answered in ` +
        `p50 ${latencies[Math.floor(latencies.length / 2)]} ms, max ${latencies.at(-1)} ms; full service ${recovery} ms after the database returned ` +
        `(start took ${returned - startBegan} ms)\n`,
    );

    assert.deepEqual([...byCode.keys()].filter((k) => k !== 'ok' && k !== 'unavailable'), [], 'only successes and 503 unavailable');
    for (const c of calls.filter((x) => x.outcome.code === 'unavailable')) assert.equal(c.outcome.status, c.outcome.protocol === 'rest' ? 503 : 14);
    for (let c = 0; c < callers; c++) assert.ok(during.some((x) => x.caller === c), `caller ${c} called during the outage`);
    assert.deepEqual(during.filter((c) => c.outcome.code !== 'unavailable').map((c) => c.outcome.code), [], 'only 503s while the database is down');
    for (const r of replicas) assert.equal(r.exit, undefined, `replica ${r.name} still running`);

    // Every acknowledged ingest is stored, with the revision it was acknowledged with.
    let acknowledgedIngests = 0;
    for (let c = 0; c < callers; c++) {
      const acknowledged = calls.filter((x) => x.caller === c && x.day !== undefined && x.outcome.code === 'ok');
      acknowledgedIngests += acknowledged.length;
      const stored = new Map<string, string>();
      let cursor = '';
      do {
        const page = await rest(replicas[c % 3].target, key, { method: 'GET', path: `/v1/entities/load:c${c}/observations?page_size=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` });
        assert.equal(page.code, 'ok', page.message);
        for (const o of page.data.observations) stored.set(o.time, String(o.revision));
        cursor = page.data.next_cursor ?? '';
      } while (cursor);
      for (const a of acknowledged) assert.equal(stored.get(day(a.day!)), String(a.outcome.data.revision), `caller ${c}: ingest of ${day(a.day!)} acknowledged`);
    }
    assert.ok(acknowledgedIngests > 0);
  } finally {
    running = false;
    await load;
    for (const h of healthClients) h.close();
  }
});
