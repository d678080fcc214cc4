/**
 * Scale-out (API.md section 13): three service processes on one PostgreSQL database, as a load
 * balancer would spread calls over them — every guarantee exact across replicas and both
 * protocols: one migration run when all three start at once on an empty database, quotas,
 * idempotency, read-your-writes (a write acknowledged by one replica is seen by the next read on
 * another), cursors continued on another replica while rows are inserted, and data revisions
 * exact per account (a read as of revision R never changes later).
 */
import { afterAll, beforeAll } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { KeyServiceClient } from '../../gen/forecast/v1/key_service.pb';
import { AccountStore } from '../../src/accounts/account-store';
import { SCOPES, type Tier } from '../../src/accounts/tiers';
import { systemClock } from '../../src/clock';
import { openDatabase, type Database } from '../../src/store/database';
import { migrations } from '../../src/store/migrations';
import { createPostgresDatabase, TEST_DIALECT, testOn, testPostgresUrl } from '../helpers/database';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { startReplicas, type Replica } from '../helpers/replicas';

const test = testOn(['postgres'], 'replicas share one PostgreSQL database; an SQLite file serves one process');

let drop: (() => Promise<void>) | undefined;
let replicas: Replica[] = [];
let database: Database;
let accounts: AccountStore;
const clients: { accounts: AccountServiceClient; entities: EntityServiceClient; keys: KeyServiceClient }[] = [];

beforeAll(async () => {
  if (TEST_DIALECT !== 'postgres') return;
  const created = await createPostgresDatabase(testPostgresUrl());
  drop = created.drop;
  // All three at the same instant, on an empty database.
  replicas = await startReplicas(3, { DATABASE_URL: created.url, MASTER_KEY: randomBytes(32).toString('base64') });
  for (const r of replicas) clients.push({ accounts: r.client(AccountServiceClient), entities: r.client(EntityServiceClient), keys: r.client(KeyServiceClient) });
  database = await openDatabase(created.url);
  accounts = new AccountStore(database, systemClock);
});
afterAll(async () => {
  for (const r of replicas) await r.stop();
  await database?.close();
  await drop?.();
});

async function account(tier: Tier): Promise<string> {
  return (await accounts.createAccount(tier, null, [...SCOPES])).created.apiKey;
}

/** Call `i` goes to replica i mod 3, over REST for even rounds of three and gRPC for odd ones: both protocols on every replica. */
const spread = (i: number) => ({ replica: i % 3, protocol: Math.floor(i / 3) % 2 === 0 ? ('rest' as const) : ('grpc' as const) });

function getAccount(i: number, key: string): Promise<Outcome> {
  const { replica, protocol } = spread(i);
  if (protocol === 'rest') return rest(replicas[replica].target, key, { method: 'GET', path: '/v1/account' });
  const c = clients[replica].accounts;
  return grpcCall(c, c.getAccount, key, {});
}

/** ListEntities on call `i`'s spread: a call that counts against the quota (GetAccount does not). */
function listEntities(i: number, key: string): Promise<Outcome> {
  const { replica, protocol } = spread(i);
  if (protocol === 'rest') return rest(replicas[replica].target, key, { method: 'GET', path: '/v1/entities' });
  const c = clients[replica].entities;
  return grpcCall(c, c.listEntities, key, { type: '', pageSize: 0, cursor: '' });
}

function createEntity(i: number, key: string, entity: string): Promise<Outcome> {
  const { replica, protocol } = spread(i);
  const axes = [{ name: 'v', unit: '', kind: '' }, { name: 'w', unit: '', kind: '' }];
  if (protocol === 'rest') return rest(replicas[replica].target, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P1D', axes } });
  const c = clients[replica].entities;
  return grpcCall(c, c.createEntity, key, { entity, frequency: 'P1D', displayName: '', seasonLength: 0, axes, parents: [] });
}

const day = (d: number) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString().replace('.000Z', 'Z');

function ingest(i: number, key: string, entity: string, days: number[], headers: Record<string, string> = {}, extra: { axis: string; time: string; value: number }[] = []): Promise<Outcome> {
  const { replica, protocol } = spread(i);
  const observations = [...days.map((d) => ({ axis: 'v', time: day(d), value: d })), ...extra];
  if (protocol === 'rest') return rest(replicas[replica].target, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations }, headers });
  const c = clients[replica].entities;
  return grpcCall(c, c.ingestObservations, key, { entity, observations: observations.map((o) => ({ ...o, revision: '0' })) }, headers);
}

/** Days (and their revisions) of the entity's observations, as of `asOf` (0 = now), read on replica i's spread. */
async function observed(i: number, key: string, entity: string, asOf = 0): Promise<{ days: number[]; revisions: number[] }> {
  const { replica, protocol } = spread(i);
  let o: Outcome;
  if (protocol === 'rest') {
    o = await rest(replicas[replica].target, key, { method: 'GET', path: `/v1/entities/${entity}/observations?axis=v&page_size=200${asOf ? `&as_of_revision=${asOf}` : ''}` });
  } else {
    const c = clients[replica].entities;
    o = await grpcCall(c, c.listObservations, key, { entity, axis: 'v', start: '', end: '', asOfRevision: String(asOf), pageSize: 200, cursor: '' });
  }
  assert.equal(o.code, 'ok', o.message);
  const rows = o.data.observations as { time: string; revision: string }[];
  return { days: rows.map((r) => Math.round((Date.parse(r.time) - Date.UTC(2026, 0, 1)) / 86400_000)), revisions: rows.map((r) => Number(r.revision)) };
}

test('three replicas started at the same instant on an empty database all come up, and one of them ran the migrations', async () => {
  const names = Object.keys(migrations('postgres')).sort();
  const migrated = replicas.map((r) => r.logs.find((l) => l.msg === 'database migrated')?.migrations);
  assert.equal(migrated.filter(Boolean).length, 1, `replicas that migrated: ${JSON.stringify(migrated)}`);
  assert.deepEqual(migrated.find(Boolean), names);
  assert.deepEqual(database.appliedMigrations, [], 'the schema was current for a later start');
  for (const [i, r] of replicas.entries()) assert.equal((await getAccount(i, await account('pro'))).code, 'ok', `replica ${r.name} serves`);
});

test('Free tier: 300 concurrent requests over three replicas and both protocols → exactly 100 succeed, 200 get 429 with Retry-After', async () => {
  const key = await account('free');
  const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => listEntities(i, key)));
  const ok = outcomes.filter((o) => o.code === 'ok');
  const limited = outcomes.filter((o) => o.code === 'quota_exceeded');
  assert.equal(ok.length, 100);
  assert.equal(limited.length, 200, outcomes.filter((o) => o.code !== 'ok' && o.code !== 'quota_exceeded').map((o) => o.code).join());
  for (const o of limited) {
    assert.equal(o.status, o.protocol === 'rest' ? 429 : 8);
    assert.match(o.headers['retry-after'], /^[1-9]\d*$/, `${o.protocol} Retry-After`);
  }
  assert.ok(['rest', 'grpc'].every((p) => limited.some((o) => o.protocol === p)));
  // Each success saw its own count: the remaining counts are a permutation of 99..0.
  const remaining = ok.map((o) => Number(/r=(\d+)/.exec(o.headers['ratelimit'])![1])).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 100 }, (_, i) => i));
  for (let i = 0; i < 6; i++) assert.equal((await listEntities(i, key)).code, 'quota_exceeded', 'still refused on every replica, both protocols');
  const seen = await getAccount(1, key);
  assert.equal(seen.code, 'ok', 'the account itself can still be read');
  assert.equal(seen.data.quota.used, 100);
});

test('50 concurrent requests with one idempotency key over three replicas and both protocols execute once', async () => {
  const key = await account('pro');
  assert.equal((await createEntity(0, key, 'store:idem')).code, 'ok');
  const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => ingest(i, key, 'store:idem', [1, 2, 3], { 'idempotency-key': 'once-only' })));
  const ok = outcomes.filter((o) => o.code === 'ok');
  const inUse = outcomes.filter((o) => o.code === 'idempotency_key_in_use');
  assert.equal(ok.length + inUse.length, 50, outcomes.map((o) => o.code).join());
  assert.equal(ok.filter((o) => o.headers['idempotent-replayed'] !== 'true').length, 1, 'exactly one execution');
  assert.equal(new Set(ok.map((o) => String(o.data.revision))).size, 1, 'replays return the original revision');
  const stored = await observed(2, key, 'store:idem');
  assert.deepEqual(stored.days, [1, 2, 3], 'one batch stored');
  assert.equal(new Set(stored.revisions).size, 1);
  for (let i = 0; i < 6; i++) {
    const again = await ingest(i, key, 'store:idem', [1, 2, 3], { 'idempotency-key': 'once-only' });
    assert.equal(again.code, 'ok');
    assert.equal(again.headers['idempotent-replayed'], 'true', `replayed on replica ${spread(i).replica} over ${spread(i).protocol}`);
    assert.equal(String(again.data.revision), String(stored.revisions[0]));
  }
});

test('a write acknowledged by one replica is seen by the next read on another: keys, revocations, entities, observations', async () => {
  const admin = await account('enterprise');
  for (let i = 0; i < 12; i++) {
    const a = i % 3;
    const b = (i + 1) % 3;
    const made = await rest(replicas[a].target, admin, { method: 'POST', path: '/v1/keys', body: { scopes: ['forecast:read'] } });
    assert.equal(made.code, 'ok', made.message);
    assert.equal((await getAccount(b + 3 * (i % 2), made.data.api_key)).code, 'ok', `a key made on ${a} works at once on ${b}`);
    const revoked = await grpcCall(clients[b].keys, clients[b].keys.revokeKey, admin, { keyId: made.data.key.key_id });
    assert.equal(revoked.code, 'ok', revoked.message);
    assert.equal((await getAccount(a + 3 * (i % 2), made.data.api_key)).code, 'unauthenticated', `revoked on ${b}, refused at once on ${a}`);

    const entity = `store:ryw${i}`;
    assert.equal((await createEntity(a + 3 * (i % 2), admin, entity)).code, 'ok');
    const got = await rest(replicas[b].target, admin, { method: 'GET', path: `/v1/entities/${entity}` });
    assert.equal(got.code, 'ok', `an entity made on ${a} is found on ${b}`);
    const first = await ingest(b, admin, entity, [1]);
    const second = await ingest(a + 3, admin, entity, [1, 2]);
    assert.equal(second.code, 'ok');
    const now = await observed((a + 2) % 3, admin, entity);
    assert.deepEqual(now.days, [1, 2]);
    assert.deepEqual(now.revisions, [Number(second.data.revision), Number(second.data.revision)], 'the correction on one replica is current on the next');
    assert.deepEqual((await observed(b + 3, admin, entity, Number(first.data.revision))).days, [1]);
  }
});

test('a cursor from one replica continues on the others, with rows inserted between pages: no duplicate, no gap', async () => {
  const key = await account('enterprise');
  const initial = Array.from({ length: 40 }, (_, i) => `page:e${String(2 * i).padStart(3, '0')}`);
  await Promise.all(initial.map((e, i) => createEntity(i, key, e)));
  const seen: string[] = [];
  const insertedAfterPosition: string[] = [];
  let cursor = '';
  for (let page = 0; page < 100; page++) {
    const { replica, protocol } = spread(page);
    let entities: string[];
    let next: string;
    if (protocol === 'rest') {
      const o = await rest(replicas[replica].target, key, { method: 'GET', path: `/v1/entities?type=page&page_size=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` });
      assert.equal(o.code, 'ok', o.message);
      entities = o.data.entities.map((e: { entity: string }) => e.entity);
      next = o.data.next_cursor ?? '';
    } else {
      const c = clients[replica].entities;
      const o = await grpcCall(c, c.listEntities, key, { type: 'page', pageSize: 7, cursor });
      assert.equal(o.code, 'ok', o.message);
      entities = o.data.entities.map((e: { entity: string }) => e.entity);
      next = o.data.nextCursor;
    }
    seen.push(...entities);
    if (!next) break;
    cursor = next;
    // Between pages another replica inserts one entity before the position and one after it.
    const position = seen.at(-1)!;
    const n = Number(position.slice('page:e'.length));
    const before = `page:e${String(n - 1).padStart(3, '0')}`;
    const after = `page:e${String(n + 3).padStart(3, '0')}`;
    assert.equal((await createEntity(page + 1, key, before)).code, 'ok');
    if (!initial.includes(after)) {
      assert.equal((await createEntity(page + 2, key, after)).code, 'ok');
      insertedAfterPosition.push(after);
    }
  }
  assert.deepEqual(seen, [...seen].sort(), 'ascending');
  assert.equal(new Set(seen).size, seen.length, 'no duplicate');
  for (const e of [...initial, ...insertedAfterPosition]) assert.ok(seen.includes(e), `${e} listed`);
});

test('data revisions are exact per account under concurrent ingests on three replicas: a read as of R, made right after R is acknowledged, never changes', async () => {
  const key = await account('enterprise');
  assert.equal((await createEntity(0, key, 'store:rev')).code, 'ok');
  const acknowledged: { day: number; revision: number; seen: number[] }[] = [];
  // Every sixth batch also carries 1,000 values of another axis: transactions of very different
  // lengths, so later revisions are often ready to commit before earlier ones.
  const bulk = (i: number) => (i % 6 === 0 ? Array.from({ length: 1000 }, (_, d) => ({ axis: 'w', time: day(1000 + d), value: i })) : []);
  await Promise.all(
    Array.from({ length: 36 }, async (_, i) => {
      const o = await ingest(i, key, 'store:rev', [i], {}, bulk(i));
      assert.equal(o.code, 'ok', o.message);
      const revision = Number(o.data.revision);
      // Read it back at once on another replica, as of the acknowledged revision.
      const seen = (await observed(i + 1, key, 'store:rev', revision)).days;
      acknowledged.push({ day: i, revision, seen });
    }),
  );
  const revisions = acknowledged.map((a) => a.revision).sort((x, y) => x - y);
  assert.equal(new Set(revisions).size, 36, 'one revision per ingest');
  assert.equal(revisions.at(-1)! - revisions[0], 35, 'consecutive: no revision lost or skipped');
  for (const a of acknowledged) {
    const expected = acknowledged.filter((b) => b.revision <= a.revision).map((b) => b.day).sort((x, y) => x - y);
    assert.deepEqual(a.seen, expected, `as of ${a.revision}, read when it was acknowledged: every earlier revision already visible`);
    assert.deepEqual((await observed(a.revision, key, 'store:rev', a.revision)).days, expected, `as of ${a.revision}, read again now`);
  }
});

test('unlimited-tier usage counted in memory by each replica adds up exactly; no replica crashed, each drains and exits cleanly', async () => {
  for (const r of replicas) assert.equal(r.exit, undefined, `replica ${r.name} exited`);
  const { account, created } = await accounts.createAccount('enterprise', null, [...SCOPES]);
  const listed = await Promise.all(Array.from({ length: 60 }, (_, i) => listEntities(i, created.apiKey)));
  assert.deepEqual(new Set(listed.map((o) => o.code)), new Set(['ok']));
  // A replica writes these counts at most 200 ms later, or when it stops (SIGTERM: drain, flush, exit).
  for (const r of replicas) await r.stop();
  for (const r of replicas) assert.equal(r.exit, '0', `replica ${r.name} exit status`);
  const usage = await database.db.selectFrom('usage').select('count').where('account_id', '=', account.id).execute();
  assert.deepEqual(usage.map((u) => Number(u.count)), [60]);
});
