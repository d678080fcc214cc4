/**
 * Migration 0005_hardening on a database holding data from before it: data revisions become per
 * account (each account continues from its own latest), stored responses carrying secrets in
 * clear are removed.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { ObservationStore } from '../../../src/entities/observation-store';
import { openDatabase } from '../../../src/store/database';
import { migrations } from '../../../src/store/migrations';
import { openPostgres } from '../../../src/store/pg-pool';
import { freshDatabaseUrl, TEST_DIALECT } from '../../helpers/database';

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
    const raw = rawKysely(fresh.url);
    const old = raw.db;
    const before = Object.fromEntries(Object.entries(migrations(TEST_DIALECT)).filter(([name]) => name < '0005'));
    const { error } = await new Migrator({ db: old, provider: { getMigrations: async () => before } }).migrateToLatest();
    assert.equal(error, undefined);
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
