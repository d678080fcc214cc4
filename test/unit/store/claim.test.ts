/**
 * Claiming queued work (`store/claim.ts`): three replicas — three database handles on one
 * database, two claim loops each — drain a queue with every row claimed exactly once; an expired
 * lease makes a row claimable again. On both databases.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { skipLocked } from '../../../src/store/claim';
import { openDatabase, type Database } from '../../../src/store/database';
import { freshDatabaseUrl } from '../../helpers/database';

interface Jobs {
  jobs: { id: string; due_time: number; lease_owner: string | null; lease_until: number | null };
}

const LEASE_MS = 60_000;

/** One claim: up to `limit` due rows whose lease is free, leased to `owner`. */
async function claim(database: Database, owner: string, now: number, limit: number): Promise<string[]> {
  const db = database.db as unknown as Kysely<Jobs>;
  const due = db
    .selectFrom('jobs')
    .select('id')
    .where('due_time', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .orderBy('due_time')
    .limit(limit);
  const rows = await db
    .updateTable('jobs')
    .set({ lease_owner: owner, lease_until: now + LEASE_MS })
    .where('id', 'in', skipLocked(database, due))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

test('replicas polling one queue claim every due row exactly once; an expired lease frees it', async () => {
  const fresh = await freshDatabaseUrl();
  const replicas: Database[] = [];
  for (let i = 0; i < 3; i++) replicas.push(await openDatabase(fresh.url));
  try {
    const db = replicas[0].db as unknown as Kysely<Jobs>;
    await sql`CREATE TABLE jobs (id TEXT PRIMARY KEY, due_time BIGINT NOT NULL, lease_owner TEXT, lease_until BIGINT)`.execute(db);
    const now = 1_000_000;
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: `job${String(i).padStart(3, '0')}`, due_time: now - 1000 + i, lease_owner: null, lease_until: null }));
    // 20 rows are not due yet and must stay unclaimed.
    for (const r of rows.slice(280)) r.due_time = now + 5000;
    await db.insertInto('jobs').values(rows).execute();

    const claimedBy = new Map<string, string[]>();
    const loop = async (database: Database, owner: string) => {
      for (;;) {
        const ids = await claim(database, owner, now, 7);
        if (ids.length === 0) return;
        for (const id of ids) claimedBy.set(id, [...(claimedBy.get(id) ?? []), owner]);
      }
    };
    await Promise.all(replicas.flatMap((r, i) => [loop(r, `r${i}a`), loop(r, `r${i}b`)]));
    const twice = [...claimedBy].filter(([, owners]) => owners.length > 1);
    assert.deepEqual(twice, [], 'no row claimed twice');
    assert.deepEqual([...claimedBy.keys()].sort(), rows.slice(0, 280).map((r) => r.id), 'every due row claimed, no other');
    assert.ok(new Set([...claimedBy.values()].flat()).size > 1, 'the work was shared');
    const stored = await db.selectFrom('jobs').select(['id', 'lease_owner']).where('lease_owner', 'is not', null).execute();
    assert.equal(stored.length, 280);
    for (const s of stored) assert.equal(s.lease_owner, claimedBy.get(s.id)![0]);

    assert.deepEqual(await claim(replicas[1], 'late', now + 10, 1000), [], 'leased rows are not claimable');
    const afterLease = await claim(replicas[2], 'after', now + LEASE_MS, 1000);
    assert.equal(afterLease.length, 300, 'expired leases, and rows now due, are claimable again');
  } finally {
    for (const r of replicas) await r.close();
    await fresh.drop();
  }
});
