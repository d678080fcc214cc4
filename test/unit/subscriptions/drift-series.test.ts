/**
 * The drift worker's window cache agrees with a fresh read after ingests, corrections and gaps in
 * what the outbox named, and after the entity was deleted and made again under its name.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { AccountStore } from '../../../src/accounts/account-store';
import { ManualClock } from '../../../src/clock';
import { EntityStore, type EntityRecord } from '../../../src/entities/entity-store';
import { indexOf } from '../../../src/entities/frequency';
import { ObservationStore } from '../../../src/entities/observation-store';
import { openDatabase } from '../../../src/store/database';
import { DriftSeriesCache } from '../../../src/subscriptions/drift-series';

const HOUR = 3600_000;
const T0 = Date.UTC(2026, 0, 1);

test('refresh brings a cached window to what a fresh read sees', async () => {
  const database = await openDatabase('sqlite::memory:');
  try {
    const { account } = await new AccountStore(database, new ManualClock()).createAccount('enterprise', null);
    const observations = new ObservationStore(database);
    const entity: EntityRecord = {
      entity: 'server:a', type: 'server', displayName: '', frequency: 'PT1H', seasonLength: 24,
      axes: [{ name: 'cpu', unit: '', kind: 'continuous' }, { name: 'mem', unit: '', kind: 'continuous' }],
      parents: [], createTime: 0, updateTime: 0, incarnation: 'a',
    };
    await database.db.insertInto('entities').values({ account_id: account.id, entity: 'server:a', type: 'server', display_name: '', frequency: 'PT1H', season_length: 24, create_time: 0, update_time: 0, incarnation: 'a' }).execute();
    const ingest = (axis: string, from: number, values: number[]) =>
      observations.ingest(account.id, [{ entity: 'server:a', rows: values.map((value, k) => ({ axis, time: T0 + (from + k) * HOUR, value })) }], 0);
    await ingest('cpu', 0, Array.from({ length: 100 }, (_, i) => i));
    const cache = new DriftSeriesCache(database, observations, 1000);
    const from = indexOf('PT1H', T0)! + 50;
    const before = await cache.window(account.id, entity, 'cpu', from);
    assert.equal(before.firstIndex, from);
    assert.deepEqual([...before.values], Array.from({ length: 50 }, (_, i) => 50 + i));
    const r1 = await ingest('cpu', 100, [1000]); // named by the outbox
    await ingest('cpu', 60, [-60]); // a correction inside the window, not named
    await ingest('mem', 0, [5, 6]); // another axis
    await ingest('cpu', 103, [1003]); // after a gap
    await cache.refresh(account.id, entity, [r1.revision]);
    const cached = await cache.window(account.id, entity, 'cpu', from);
    const fresh = await new DriftSeriesCache(database, observations, 1000).window(account.id, entity, 'cpu', from);
    assert.deepEqual(cached, fresh);
    assert.equal(cached.values[10], -60);
    assert.ok(Number.isNaN(cached.values[51]) && Number.isNaN(cached.values[52]));
    assert.equal(cached.values[53], 1003);
  } finally {
    await database.close();
  }
});

test('a window reaching further back than the cache keeps is whole, and the cache keeps only what it keeps (found by QA: a bogus alarm)', async () => {
  const database = await openDatabase('sqlite::memory:');
  try {
    const { account } = await new AccountStore(database, new ManualClock()).createAccount('enterprise', null);
    const observations = new ObservationStore(database);
    const entity: EntityRecord = {
      entity: 'server:c', type: 'server', displayName: '', frequency: 'PT1H', seasonLength: 24,
      axes: [{ name: 'cpu', unit: '', kind: 'continuous' }], parents: [], createTime: 0, updateTime: 0, incarnation: 'c',
    };
    await database.db.insertInto('entities').values({ account_id: account.id, entity: 'server:c', type: 'server', display_name: '', frequency: 'PT1H', season_length: 24, create_time: 0, update_time: 0, incarnation: 'c' }).execute();
    await observations.ingest(account.id, [{ entity: 'server:c', rows: Array.from({ length: 500 }, (_, k) => ({ axis: 'cpu', time: T0 + k * HOUR, value: k })) }], 0);
    const cache = new DriftSeriesCache(database, observations, 100);
    const first = indexOf('PT1H', T0)!;
    // 300 steps asked, the cache keeps 100: the window has all 300
    const wide = await cache.window(account.id, entity, 'cpu', first + 200);
    assert.equal(wide.firstIndex, first + 200);
    assert.deepEqual([...wide.values], Array.from({ length: 300 }, (_, i) => 200 + i));
    // the cache kept the newest 100 only: with the stored rows gone, a window from 150 steps back is
    // read again (and finds nothing), where a cache that kept the whole window would serve it
    await database.db.deleteFrom('observations').where('entity', '=', 'server:c').execute();
    assert.equal((await cache.window(account.id, entity, 'cpu', first + 350)).values.length, 0);
  } finally {
    await database.close();
  }
});

test('an entity deleted and made again (same name, frequency, axis and create time) starts with no cached window: none of the deleted one’s values', async () => {
  const database = await openDatabase('sqlite::memory:');
  try {
    const { account } = await new AccountStore(database, new ManualClock()).createAccount('enterprise', null);
    const entities = new EntityStore(database);
    const observations = new ObservationStore(database);
    const make = async (): Promise<EntityRecord> => {
      await database.transaction(async (trx) => {
        await entities.upsertRow(trx, account.id, { entity: 'server:b', type: 'server', displayName: '', frequency: 'PT1H', seasonLength: 24 }, 0);
        await entities.upsertAxes(trx, account.id, 'server:b', [{ name: 'cpu', unit: '', kind: 'continuous' }]);
      });
      return (await entities.get(account.id, 'server:b'))!;
    };
    const ingest = (from: number, values: number[]) =>
      observations.ingest(account.id, [{ entity: 'server:b', rows: values.map((value, k) => ({ axis: 'cpu', time: T0 + (from + k) * HOUR, value })) }], 0);
    const first = await make();
    await ingest(0, Array.from({ length: 50 }, (_, i) => i));
    const cache = new DriftSeriesCache(database, observations, 1000);
    const from = indexOf('PT1H', T0)!;
    assert.equal((await cache.window(account.id, first, 'cpu', from)).values.length, 50);
    assert.ok(await entities.delete(account.id, 'server:b'));
    const again = await make();
    const r = await ingest(40, [-1, -2]);
    await cache.refresh(account.id, again, [r.revision]);
    const cached = await cache.window(account.id, again, 'cpu', from);
    assert.deepEqual(cached, await new DriftSeriesCache(database, observations, 1000).window(account.id, again, 'cpu', from));
    assert.deepEqual([...cached.values].slice(-2), [-1, -2]);
    assert.ok(cached.values.slice(0, -2).every(Number.isNaN), 'a value of the deleted entity');
  } finally {
    await database.close();
  }
});
