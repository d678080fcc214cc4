/**
 * The PostgreSQL side of the store, on the test run's server: migrations run once when replicas
 * open an empty database together; every text column sorts bytewise; server secrets agree across
 * replicas; and the failures of a database that goes away, restarts, times out or is busy answer
 * 503 `unavailable` — never crash the process, never 500 — with reachability reported and
 * recovered by itself.
 */
import { afterAll, beforeAll } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../../src/store/database';
import { migrations } from '../../../src/store/migrations';
import { DatabaseUnavailableError } from '../../../src/store/pg-errors';
import { SecretBox } from '../../../src/store/secret-box';
import { serverSecret, verifyMasterKey } from '../../../src/store/secrets';
import { createPostgresDatabase, TEST_DIALECT, testOn, testPostgresUrl } from '../../helpers/database';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';

const test = testOn(['postgres'], "tests PostgreSQL's pool, locks, collations and failures");

/** Databases made by this file, dropped at the end. */
const made: { drop(): Promise<void> }[] = [];
async function emptyDatabase(): Promise<string> {
  const created = await createPostgresDatabase(testPostgresUrl());
  made.push(created);
  return created.url;
}

let shared: Database;
beforeAll(async () => {
  if (TEST_DIALECT === 'postgres') shared = await openDatabase(await emptyDatabase());
});
afterAll(async () => {
  await shared?.close();
  for (const m of made) await m.drop();
});

/** The rejection of `work`, which must reject. */
async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (err) {
    return err;
  }
  assert.fail('expected a failure');
}

test('replicas opening an empty database at the same instant apply the migrations once, under the lock', async () => {
  const url = await emptyDatabase();
  const replicas = await Promise.all(Array.from({ length: 4 }, () => openDatabase(url)));
  try {
    const names = Object.keys(migrations('postgres')).sort();
    const applied = replicas.map((r) => r.appliedMigrations).filter((a) => a.length > 0);
    assert.deepEqual(applied, [names], 'one replica migrated, the others found the schema current');
    const recorded = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(replicas[0].db);
    assert.deepEqual(recorded.rows.map((r) => r.name), names);
  } finally {
    for (const r of replicas) await r.close();
  }
});

test('every text column compares and sorts bytewise, as on SQLite, on a database whose default collation is en-US', async () => {
  const defaults = await sql<{ datcollate: string; daticulocale: string | null }>`SELECT datcollate, daticulocale FROM pg_database WHERE datname = current_database()`.execute(shared.db);
  assert.equal(defaults.rows[0].daticulocale, 'en-US', 'the test database sorts like a production server by default');
  const other = await sql<{ table_name: string; column_name: string; collation_name: string | null }>`
    SELECT table_name, column_name, collation_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND data_type = 'text' AND table_name NOT LIKE 'kysely_%'
      AND (collation_name IS NULL OR collation_name <> 'C')`.execute(shared.db);
  assert.deepEqual(other.rows, [], 'text columns without COLLATE "C" (give them one in their migration)');
  const ids = ['store:b', 'store:B', 'store:a-c', 'store:a:b', 'store:ab', 'store:a', 'store:A', 'store:a~', 'store:a.b'];
  await shared.db.insertInto('accounts').values({ id: 'acct_sort', email: null, tier: 'pro', create_time: 0 }).execute();
  await shared.db
    .insertInto('entities')
    .values(ids.map((entity) => ({ account_id: 'acct_sort', entity, type: 'store', display_name: '', frequency: 'P1D', season_length: 7, create_time: 0, update_time: 0, incarnation: entity })))
    .execute();
  const sorted = await shared.db.selectFrom('entities').select('entity').where('account_id', '=', 'acct_sort').orderBy('entity').execute();
  assert.deepEqual(sorted.map((r) => r.entity), [...ids].sort(), 'code-point order');
  const after = await shared.db.selectFrom('entities').select('entity').where('account_id', '=', 'acct_sort').where('entity', '>', 'store:a').orderBy('entity').execute();
  assert.deepEqual(after.map((r) => r.entity), [...ids].sort().filter((e) => e > 'store:a'), 'keyset comparisons agree with the order');
});

test('replicas starting together agree on one server secret and one master key', async () => {
  const url = await emptyDatabase();
  const replicas = await Promise.all(Array.from({ length: 3 }, () => openDatabase(url)));
  try {
    const box = new SecretBox(randomBytes(32));
    await Promise.all(replicas.map((r) => verifyMasterKey(r, box)));
    const secrets = await Promise.all(replicas.map((r) => serverSecret(r, box, 'cursor')));
    assert.deepEqual(secrets[1], secrets[0]);
    assert.deepEqual(secrets[2], secrets[0]);
    await assert.rejects(verifyMasterKey(replicas[1], new SecretBox(randomBytes(32))), /not the one this database was created with/);
  } finally {
    for (const r of replicas) await r.close();
  }
});

/** A database reached through a proxy the test can cut, with its reachability reports. */
async function throughProxy(settings: { poolSize?: number; statementTimeoutMs?: number; connectTimeoutMs?: number } = {}) {
  const url = new URL(await emptyDatabase());
  const proxy: TcpProxy = await startTcpProxy(Number(url.port));
  url.port = String(proxy.port);
  const reports: boolean[] = [];
  let onReport: (() => void) | undefined;
  const database = await openDatabase(url.toString(), {
    postgres: {
      ...settings,
      onAvailability: (available) => {
        reports.push(available);
        onReport?.();
      },
    },
  });
  /** Resolves once the reports end with `available`. */
  const reported = (available: boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (reports.at(-1) === available) resolve();
      };
      onReport = check;
      check();
    });
  return { database, proxy, reports, reported, close: async () => (await database.close(), await proxy.close()) };
}

test('a database that goes away: 503 unavailable at once, idle and in-transaction connections breaking do not crash, recovery by itself', async () => {
  const { database, proxy, reports, reported, close } = await throughProxy();
  try {
    const count = () => database.db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    // Several pooled connections, now idle; and a transaction holding one, between statements.
    await Promise.all(Array.from({ length: 5 }, count));
    let inTransaction!: () => void;
    const isInTransaction = new Promise<void>((r) => (inTransaction = r));
    let cut!: () => void;
    const isCut = new Promise<void>((r) => (cut = r));
    const transaction = database.transaction(async (trx) => {
      await trx.insertInto('accounts').values({ id: 'acct_lost', email: null, tier: 'free', create_time: 0 }).execute();
      inTransaction();
      await isCut;
      await trx.insertInto('accounts').values({ id: 'acct_lost2', email: null, tier: 'free', create_time: 0 }).execute();
    });
    await isInTransaction;
    await proxy.cut();
    cut();

    const inFlight = await failure(transaction);
    assert.ok(inFlight instanceof DatabaseUnavailableError, String(inFlight));
    const refused = await failure(count());
    assert.ok(refused instanceof DatabaseUnavailableError, String(refused));
    assert.equal(refused.code, 'unavailable');
    assert.equal(refused.httpStatus, 503);
    assert.equal(refused.headers?.['retry-after'], '1');
    assert.equal(refused.kind, 'unreachable');
    await reported(false);

    await proxy.restore();
    assert.equal((await count()).n, 0, 'the next call works again, and the broken transaction left nothing');
    await reported(true);
    assert.deepEqual(reports, [false, true]);
  } finally {
    await close();
  }
});

test('a statement over its timeout and a pool with no free connection answer 503 without calling the database unreachable', async () => {
  const { database, reports, close } = await throughProxy({ poolSize: 1, statementTimeoutMs: 300, connectTimeoutMs: 300 });
  try {
    const slow = await failure(sql`SELECT pg_sleep(5)`.execute(database.db));
    assert.ok(slow instanceof DatabaseUnavailableError, String(slow));
    assert.equal(slow.kind, 'transient');

    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const isHolding = new Promise<void>((r) => (holding = r));
    const holder = database.transaction(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      holding();
      await held;
    });
    await isHolding;
    const busy = await failure(sql`SELECT 1`.execute(database.db));
    assert.ok(busy instanceof DatabaseUnavailableError, String(busy));
    assert.equal(busy.kind, 'transient');
    release();
    await holder;
    assert.deepEqual(reports, [], 'reachability unchanged');
    // A constraint violation is the call's own error, not the database's.
    await database.db.insertInto('server_secrets').values({ name: 'x', value: 'y' }).execute();
    const duplicate = await failure(database.db.insertInto('server_secrets').values({ name: 'x', value: 'y' }).execute());
    assert.ok(!(duplicate instanceof DatabaseUnavailableError));
    assert.equal((duplicate as { code?: string }).code, '23505');
  } finally {
    await close();
  }
});

test('a table a commit grew by 100 rows or more is analysed before the commit is acknowledged, even with a pool of one connection', async () => {
  const database = await openDatabase(await emptyDatabase(), { postgres: { poolSize: 1, connectTimeoutMs: 2000, onAnalyzeFailure: (table, err) => assert.fail(`${table}: ${String(err)}`) } });
  try {
    const reltuples = async () => Number((await sql<{ n: number }>`SELECT reltuples::bigint AS n FROM pg_class WHERE oid = 'signups'::regclass`.execute(database.db)).rows[0].n);
    const rows = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ address: `10.0.0.${from + i}`, create_time: 0, account_id: 'acct_x' }));
    await database.transaction((trx) => trx.insertInto('signups').values(rows(60, 0)).execute());
    assert.equal(await reltuples(), -1, 'not analysed yet (60 rows)');
    await database.transaction(async (trx) => {
      await trx.insertInto('signups').values(rows(30, 60)).execute();
      await trx.insertInto('signups').values(rows(30, 90)).execute();
    });
    assert.equal(await reltuples(), 120, 'analysed once 120 rows were committed, before the commit resolved');
    await assert.rejects(database.transaction(async (trx) => {
      await trx.insertInto('signups').values(rows(100, 120)).execute();
      throw new Error('rolled back');
    }));
    await database.db.insertInto('signups').values(rows(20, 220)).execute();
    assert.equal(await reltuples(), 120, 'rolled-back rows do not count (20 more committed: not due)');
    await database.db.insertInto('signups').values(rows(90, 240)).execute();
    assert.equal(await reltuples(), 230, 'statements outside a transaction count too');
  } finally {
    await database.close();
  }
});
