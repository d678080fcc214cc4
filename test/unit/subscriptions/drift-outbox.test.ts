/**
 * The drift outbox's claim leaves out the entities being scored already (the worker scores several
 * batches at once, never two of one entity), by account: another account's entity of the same name
 * is claimed; however many accounts are busy. On both databases.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { DriftOutbox } from '../../../src/subscriptions/drift-outbox';
import type { Database } from '../../../src/store/database';
import { openTestDatabase } from '../../helpers/database';

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

test('a claim skips the busy entities of their own account only, oldest first otherwise', async () => {
  const rows = [
    ['acct_a', 'server:1'],
    ['acct_a', 'server:2'],
    ['acct_b', 'server:1'],
    ['acct_a', 'server:1'],
    ['acct_c', 'server:9'],
  ].map(([account_id, entity], i) => ({ account_id, entity, revision: i + 1, create_time: 0 }));
  await database.db.insertInto('drift_outbox').values(rows).execute();
  const outbox = new DriftOutbox(database);
  const busy = ['acct_a server:1', 'acct_c server:9', 'acct_c server:10'];
  const claimed = await outbox.claim(1000, 60_000, 10, busy);
  expect(claimed.map((r) => [r.accountId, r.entity, r.revision])).toEqual([
    ['acct_a', 'server:2', 2],
    ['acct_b', 'server:1', 3],
  ]);
  // nothing busy: the rest, and never what is leased
  const rest = await outbox.claim(1000, 60_000, 10);
  expect(rest.map((r) => r.revision)).toEqual([1, 4, 5]);
  expect(await outbox.claim(1000, 60_000, 10)).toEqual([]);
});

test('a claim leaving out 1,600 busy entities of 1,600 accounts works on both databases (found by review: SQLite refused a nested condition from ~495 accounts)', async () => {
  await database.db.deleteFrom('drift_outbox').execute();
  await database.db.insertInto('drift_outbox').values([{ account_id: 'acct_z', entity: 'server:free', revision: 1, create_time: 0 }]).execute();
  const busy = Array.from({ length: 1600 }, (_, i) => `acct_${i} server:${i}`);
  const claimed = await new DriftOutbox(database).claim(1000, 60_000, 10, busy);
  expect(claimed.map((r) => r.entity)).toEqual(['server:free']);
});

test("no row is claimed while an older row of its entity is claimed (by anyone, or waiting for its retry): an entity's rows are scored in order (found by review)", async () => {
  await database.db.deleteFrom('drift_outbox').execute();
  const rows = [
    ['acct_a', 'server:1', 2000],
    ['acct_a', 'server:1', null],
    ['acct_a', 'server:2', null],
    ['acct_b', 'server:1', null],
    ['acct_a', 'server:3', 500],
    ['acct_a', 'server:3', null],
  ] as const;
  await database.db
    .insertInto('drift_outbox')
    .values(rows.map(([account_id, entity, lease], i) => ({ account_id, entity, revision: i + 1, create_time: 0, lease_expire_time: lease })))
    .execute();
  const outbox = new DriftOutbox(database);
  // server:1 of acct_a waits behind its older row claimed until 2000; server:3's older claim lapsed at 500 and is taken again
  const claimed = await outbox.claim(1000, 60_000, 10);
  expect(claimed.map((r) => [r.accountId, r.entity, r.revision])).toEqual([
    ['acct_a', 'server:2', 3],
    ['acct_b', 'server:1', 4],
    ['acct_a', 'server:3', 5],
    ['acct_a', 'server:3', 6],
  ]);
  // once the older row is gone (scored), the newer one is claimed
  await database.db.deleteFrom('drift_outbox').where('revision', '=', 1).execute();
  expect((await outbox.claim(1000, 60_000, 10)).map((r) => r.revision)).toEqual([2]);
});
