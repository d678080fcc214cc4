/**
 * Finishing an attempt tells a lost lease from a delivery deleted meanwhile (found by QA: deleting
 * a subscription during an attempt was logged as "claim lapsed; another worker may repeat it").
 * On both databases.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { DeliveryStore } from '../../../src/subscriptions/delivery-store';
import type { Database } from '../../../src/store/database';
import { openTestDatabase } from '../../helpers/database';

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database.close());

test('recorded by the lease owner, lapsed when another holds it, gone when deleted', async () => {
  const store = new DeliveryStore(database);
  const events = ['evt_1', 'evt_2', 'evt_3'].map((id) => ({ id, accountId: 'acct_a', subscriptionId: 'sub_a', type: 'drift.detected', payload: '{}' }));
  await store.enqueue(database.db, events, ['dlv_1', 'dlv_2', 'dlv_3'], 1000);
  await database.db.updateTable('webhook_deliveries').set({ lease_owner: 'me', lease_expire_time: 9999 }).execute();
  await database.db.updateTable('webhook_deliveries').set({ lease_owner: 'another' }).where('id', '=', 'dlv_2').execute();
  await database.db.deleteFrom('webhook_deliveries').where('id', '=', 'dlv_3').execute();
  const attempt = { time: 1000, statusCode: 200, error: '', latencyMs: 3 };
  const finish = (id: string) => store.finishAttempt('me', id, attempt, { state: 'succeeded' }, 1001);
  expect(await finish('dlv_1')).toBe('recorded');
  expect(await finish('dlv_2')).toBe('lapsed');
  expect(await finish('dlv_3')).toBe('gone');
  const rows = await database.db.selectFrom('webhook_deliveries').select(['id', 'state', 'attempt_count']).orderBy('id').execute();
  expect(rows.map((r) => [r.id, r.state, Number(r.attempt_count)])).toEqual([
    ['dlv_1', 'succeeded', 1],
    ['dlv_2', 'pending', 0],
  ]);
});
