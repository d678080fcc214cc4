/**
 * Migrations on a database holding data from before them. 0005_hardening: data revisions become
 * per account (each account continues from its own latest), stored responses carrying secrets in
 * clear are removed. 0011: orphaned subscriptions go. 0012: entities get incarnations.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { EntityStore } from '../../../src/entities/entity-store';
import { ObservationStore } from '../../../src/entities/observation-store';
import { openDatabase } from '../../../src/store/database';
import { migrations } from '../../../src/store/migrations';
import { openPostgres } from '../../../src/store/pg-pool';
import { freshDatabaseUrl, TEST_DIALECT } from '../../helpers/database';

/** `url`'s database with the migrations released before `name` applied (an old schema to fill). */
async function schemaBefore(url: string, name: string): Promise<{ db: Kysely<any>; close(): Promise<void> }> {
  const raw = rawKysely(url);
  const before = Object.fromEntries(Object.entries(migrations(TEST_DIALECT)).filter(([n]) => n < name));
  const { error } = await new Migrator({ db: raw.db, provider: { getMigrations: async () => before } }).migrateToLatest();
  assert.equal(error, undefined);
  return raw;
}

/** A kysely handle on `url` that applies no migrations itself (to build an old schema). */
function rawKysely(url: string): { db: Kysely<any>; close(): Promise<void> } {
  if (url.startsWith('sqlite:')) {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(url.slice('sqlite:'.length)) }) });
    return { db, close: () => db.destroy() };
  }
  const pg = openPostgres(url);
  return { db: pg.db as Kysely<any>, close: () => pg.close() };
}

test('0005: per-account revisions continue from each account’s latest global one; clear secrets in idempotency rows are gone', async () => {
  const fresh = await freshDatabaseUrl();
  try {
    // The schema as released before 0005, with data.
    const raw = await schemaBefore(fresh.url, '0005');
    const old = raw.db;
    for (const id of ['acct_a', 'acct_b', 'acct_c']) await old.insertInto('accounts').values({ id, email: null, tier: 'free', create_time: 0 }).execute();
    await old.insertInto('entities').values(['acct_a', 'acct_b'].map((a) => ({ account_id: a, entity: 'store:x', type: 'store', display_name: '', frequency: 'P1D', season_length: 7, create_time: 0, update_time: 0 }))).execute();
    // global revisions 1..5: a has 1, 3, 4; b has 2, 5
    for (const [i, account] of ['acct_a', 'acct_b', 'acct_a', 'acct_a', 'acct_b'].entries()) {
      await old.insertInto('revisions').values({ account_id: account, create_time: i, observation_count: 1 }).execute();
      await old.insertInto('observations').values({ account_id: account, entity: 'store:x', axis: 'demand', time: Date.UTC(2026, 0, 1 + i), revision: i + 1, value: i }).execute();
    }
    const idem = (method: string, response: string) => ({ account_id: 'acct_a', method, key: method, fingerprint: 'f', state: 'done', outcome: 'ok', response, headers: '{}', create_time: 0, lock_expire_time: 0, expire_time: 1e15 });
    await old.insertInto('idempotency').values([idem('/forecast.v1.KeyService/CreateKey', 'clear secret'), idem('/forecast.v1.EntityService/CreateEntity', 'no secret')]).execute();
    await raw.close();

    const database = await openDatabase(fresh.url);
    try {
      const counters = await database.db.selectFrom('accounts').select(['id', 'data_revision']).orderBy('id').execute();
      assert.deepEqual(counters.map((r) => [r.id, Number(r.data_revision)]), [['acct_a', 4], ['acct_b', 5], ['acct_c', 0]]);
      const observations = new ObservationStore(database);
      assert.equal((await observations.ingest('acct_a', [{ entity: 'store:x', rows: [{ axis: 'demand', time: Date.UTC(2026, 1, 1), value: 1 }] }], 10)).revision, 5);
      assert.equal((await observations.ingest('acct_b', [{ entity: 'store:x', rows: [{ axis: 'demand', time: Date.UTC(2026, 1, 1), value: 1 }] }], 10)).revision, 6);
      assert.equal(await observations.latestRevision('acct_c'), 0);
      const revisions = await database.db.selectFrom('revisions').select(['account_id', 'revision']).orderBy('account_id').orderBy('revision').execute();
      assert.deepEqual(revisions.map((r) => `${r.account_id}:${r.revision}`), ['acct_a:1', 'acct_a:3', 'acct_a:4', 'acct_a:5', 'acct_b:2', 'acct_b:5', 'acct_b:6']);
      const left = await database.db.selectFrom('idempotency').select('method').execute();
      assert.deepEqual(left.map((r) => r.method), ['/forecast.v1.EntityService/CreateEntity']);
    } finally {
      await database.close();
    }
  } finally {
    await fresh.drop();
  }
});

test('0011: subscriptions left behind by deleted entities go, with their deliveries, attempts, events and drift states; live ones stay', async () => {
  const fresh = await freshDatabaseUrl();
  try {
    const raw = await schemaBefore(fresh.url, '0011');
    const old = raw.db;
    await old.insertInto('accounts').values({ id: 'acct_a', email: null, tier: 'free', create_time: 0 }).execute();
    const hour = 3_600_000;
    const entity = (name: string, created: number) => ({ account_id: 'acct_a', entity: name, type: 'store', display_name: '', frequency: 'P1D', season_length: 7, create_time: created, update_time: created });
    // store:live made at 0; store:remade deleted and made again at 10 h; store:gone deleted
    await old.insertInto('entities').values([entity('store:live', 0), entity('store:remade', 10 * hour), entity('store:skew', 10 * hour)]).execute();
    const subscription = (id: string, name: string, created: number) => ({
      id, account_id: 'acct_a', entity: name, axes: '[]', include_descendants: 0, url: 'https://example.com/hook', events: '[]', level: 0.95,
      state: 'active', pause_reason: '', secret: 'sealed', previous_secret: null, previous_secret_expire_time: null, create_time: created, update_time: created,
    });
    await old
      .insertInto('subscriptions')
      .values([
        subscription('sub_live', 'store:live', hour),
        subscription('sub_gone', 'store:gone', hour),
        subscription('sub_remade', 'store:remade', hour), // made on the first store:remade
        subscription('sub_skew', 'store:skew', 10 * hour - 1000), // a replica's clock a second behind
      ])
      .execute();
    for (const id of ['sub_live', 'sub_gone', 'sub_remade']) {
      await old.insertInto('webhook_events').values({ id: `evt_${id}`, account_id: 'acct_a', subscription_id: id, type: 'drift.detected', create_time: 0, payload: '{}' }).execute();
      await old
        .insertInto('webhook_deliveries')
        .values({ id: `dlv_${id}`, account_id: 'acct_a', subscription_id: id, event_id: `evt_${id}`, state: 'pending', attempt_count: 1, next_attempt_time: 0, lease_owner: null, lease_expire_time: null, create_time: 0, update_time: 0 })
        .execute();
      await old.insertInto('webhook_attempts').values({ delivery_id: `dlv_${id}`, attempt: 1, time: 0, status_code: 500, error: '', latency_ms: 1 }).execute();
      await old.insertInto('drift_states').values({ subscription_id: id, entity: 'store:x', axis: 'demand', state: 'ok', version: 1, update_time: 0 }).execute();
    }
    await raw.close();

    const database = await openDatabase(fresh.url);
    try {
      const db = database.db as unknown as Kysely<any>;
      const ids = async (table: string, column: string) => (await db.selectFrom(table).select(column).orderBy(column).execute()).map((r: Record<string, string>) => r[column]);
      assert.deepEqual(await ids('subscriptions', 'id'), ['sub_live', 'sub_skew']);
      assert.deepEqual(await ids('webhook_events', 'subscription_id'), ['sub_live']);
      assert.deepEqual(await ids('webhook_deliveries', 'subscription_id'), ['sub_live']);
      assert.deepEqual(await ids('webhook_attempts', 'delivery_id'), ['dlv_sub_live']);
      assert.deepEqual(await ids('drift_states', 'subscription_id'), ['sub_live']);
    } finally {
      await database.close();
    }
  } finally {
    await fresh.drop();
  }
});

test('0012: every existing entity gets its own incarnation (32 hex digits), which neither a restart nor an update changes', async () => {
  const fresh = await freshDatabaseUrl();
  try {
    const raw = await schemaBefore(fresh.url, '0012');
    for (const id of ['acct_a', 'acct_b']) await raw.db.insertInto('accounts').values({ id, email: null, tier: 'free', create_time: 0 }).execute();
    // the same names and create times in both accounts: nothing of the row tells them apart
    const rows = ['acct_a', 'acct_b'].flatMap((account_id) => ['store:x', 'store:y', 'store:z'].map((entity) => ({ account_id, entity, type: 'store', display_name: '', frequency: 'P1D', season_length: 7, create_time: 0, update_time: 0 })));
    await raw.db.insertInto('entities').values(rows).execute();
    await raw.close();

    const read = async () => {
      const database = await openDatabase(fresh.url);
      try {
        const found = await database.db.selectFrom('entities').select(['account_id', 'entity', 'incarnation']).orderBy('account_id').orderBy('entity').execute();
        return { database, byKey: new Map(found.map((r) => [`${r.account_id} ${r.entity}`, r.incarnation])) };
      } catch (error) {
        await database.close();
        throw error;
      }
    };
    const first = await read();
    await first.database.close();
    const values = [...first.byKey.values()];
    assert.equal(values.length, 6);
    for (const v of values) assert.match(v, /^[0-9a-f]{32}$/);
    assert.equal(new Set(values).size, 6, 'two rows share an incarnation');

    const second = await read();
    try {
      assert.deepEqual(second.byKey, first.byKey, 'changed by a restart');
      const entities = new EntityStore(second.database);
      await second.database.transaction((trx) => entities.upsertRow(trx, 'acct_a', { entity: 'store:x', type: 'store', displayName: 'X', frequency: 'P1D', seasonLength: 7 }, 5));
      const record = (await entities.get('acct_a', 'store:x'))!;
      assert.equal(record.displayName, 'X');
      assert.equal(record.incarnation, first.byKey.get('acct_a store:x'), 'changed by an update');
    } finally {
      await second.database.close();
    }
  } finally {
    await fresh.drop();
  }
});
