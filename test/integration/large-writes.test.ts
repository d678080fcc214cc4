/**
 * Large writes and reads give other requests their turn (`store/turns.ts`): found by QA, a
 * 1,000,000-row bulk ingest held the whole process for 4–7 s on SQLite, deleting that entity 1–2 s,
 * and loading a query's 32 series of that entity 5 s. Checked by counting the turns of the event
 * loop that pass while the work runs (no timing), and that a read meanwhile sees all of a write or
 * none of it.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ROWS_PER_TURN, STATEMENTS_PER_TURN } from '../../src/store/turns';
import { rest } from '../helpers/dual';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.close());

const ROWS = 5 * ROWS_PER_TURN;

/** Turns of the event loop that pass while `work` runs, and what `during` (started at the first turn) saw. */
async function turnsDuring<T>(work: () => Promise<unknown>, during: () => Promise<T>): Promise<{ turns: number; seen: T | undefined }> {
  let turns = 0;
  let done = false;
  let seen: T | undefined;
  let read: Promise<void> | undefined;
  const tick = () => {
    if (done) return;
    turns++;
    if (turns === 1) read = during().then((v) => void (seen = v));
    setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  done = true;
  await read;
  return { turns, seen };
}

test('an ingest of 50,000 rows and the delete of its entity let the event loop turn; a read meanwhile sees all of it or none', async () => {
  const { accountId, key } = await t.account('enterprise');
  const { observations } = t.service.ctx;
  const created = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'meter:big', frequency: 'PT1H', axes: [{ name: 'kwh' }] } });
  assert.equal(created.code, 'ok', created.message);
  const start = Date.UTC(2020, 0, 1);
  const rows = Array.from({ length: ROWS }, (_, i) => ({ axis: 'kwh', time: start + i * 3_600_000, value: i % 24 }));
  const ingest = await turnsDuring(
    () => observations.ingest(accountId, [{ entity: 'meter:big', rows }], Date.now()),
    () => observations.series(accountId, 'meter:big', 'kwh', Number.MAX_SAFE_INTEGER),
  );
  assert.ok(ingest.turns >= 4, `${ingest.turns} turns`);
  assert.ok(ingest.seen && (ingest.seen.length === 0 || ingest.seen.length === ROWS), `a read saw ${ingest.seen?.length} of ${ROWS} rows`);
  assert.equal((await observations.series(accountId, 'meter:big', 'kwh', Number.MAX_SAFE_INTEGER)).length, ROWS);

  const del = await turnsDuring(
    () => t.service.ctx.entities.delete(accountId, 'meter:big'),
    () => observations.series(accountId, 'meter:big', 'kwh', Number.MAX_SAFE_INTEGER),
  );
  assert.ok(del.turns >= 4, `${del.turns} turns`);
  assert.ok(del.seen && (del.seen.length === 0 || del.seen.length === ROWS), `a read saw ${del.seen?.length} of ${ROWS} rows`);
  assert.equal((await observations.series(accountId, 'meter:big', 'kwh', Number.MAX_SAFE_INTEGER)).length, 0);
  assert.equal((await rest(t, key, { method: 'GET', path: '/v1/entities/meter:big' })).code, 'not_found');
});

test('the series of a query, loaded together, take turns with other requests (SQLite reads synchronously)', async () => {
  const { accountId, key } = await t.account('enterprise');
  const axes = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name }));
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'meter:wide', frequency: 'PT1H', axes } })).code, 'ok');
  const start = Date.UTC(2020, 0, 1);
  const rows = axes.flatMap(({ name }) => Array.from({ length: 2_000 }, (_, i) => ({ axis: name, time: start + i * 3_600_000, value: i % 24 })));
  const { observations, entities, series } = t.service.ctx;
  await observations.ingest(accountId, [{ entity: 'meter:wide', rows }], Date.now());
  const entity = (await entities.get(accountId, 'meter:wide'))!;
  const asOf = await observations.latestRevision(accountId);
  const load = await turnsDuring(
    () => Promise.all(entity.axes.map((axis) => series.load(accountId, entity, axis, asOf))),
    async () => undefined,
  );
  assert.ok(load.turns >= axes.length - 1, `${load.turns} turns`);
});

test('deleting an entity with more than a slice of revisions of one time finishes (the slices never loop without deleting)', async () => {
  const { accountId, key } = await t.account('enterprise');
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'meter:revised', frequency: 'PT1H', axes: [{ name: 'kwh' }] } })).code, 'ok');
  const { database, entities, observations } = t.service.ctx;
  // one time corrected ROWS_PER_TURN + 5 times (written directly: that many ingests would take long)
  const time = Date.UTC(2020, 0, 1);
  const rows = Array.from({ length: ROWS_PER_TURN + 5 }, (_, i) => ({ account_id: accountId, entity: 'meter:revised', axis: 'kwh', time, revision: i + 1, value: i }));
  await database.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += 500) await trx.insertInto('observations').values(rows.slice(i, i + 500)).execute();
  });
  assert.equal(await entities.delete(accountId, 'meter:revised'), true);
  assert.equal((await observations.series(accountId, 'meter:revised', 'kwh', Number.MAX_SAFE_INTEGER)).length, 0);
});

test('a drift commit of many states gives the event loop a turn every STATEMENTS_PER_TURN writes (found by QA: 32,000 states, 1.5 s)', async () => {
  const worker = t.service.ctx.webhooks.drift as unknown as { commit(outcomes: unknown[]): Promise<void> };
  const states = 4 * STATEMENTS_PER_TURN;
  const writes = (version: number) =>
    Array.from({ length: states }, (_, i) => ({ sub: { id: `sub_turns${String(i).padStart(5, '0')}` }, axis: 'cpu', state: { n: version }, version }));
  for (const version of [0, 1]) {
    const commit = await turnsDuring(() => worker.commit([{ entity: 'server:turns', ids: [-1], writes: writes(version), events: [] }]), async () => undefined);
    assert.ok(commit.turns >= 3, `${commit.turns} turns`);
  }
  const stored = await t.service.ctx.database.db.selectFrom('drift_states').select(['version']).where('entity', '=', 'server:turns').execute();
  assert.equal(stored.length, states);
  assert.ok(stored.every((r) => Number(r.version) === 2));
});
