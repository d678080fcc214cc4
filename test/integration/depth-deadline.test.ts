/**
 * A depth query whose caller's deadline passes stops costing: the fits it had not started are
 * dropped (one fit per entity; up to a thousand), instead of running on for every other account's
 * queries to wait behind. Both protocols; each gets its own cold hierarchy of 40 daily leaves, with
 * data of its own: fits are cached by the series' content, so a hierarchy with the REST test's data
 * would be warm once that test had answered in full (and a fast run then answered within 100 ms).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { OracleServiceClient, QueryRequest, type QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { ok, rest } from '../helpers/dual';
import { dailyEntity } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;
let accountId: string;
const LEAVES = 40;

/** A root with LEAVES daily leaves (a year each, a strong weekly cycle: the costlier daily route), at `base`. */
async function hierarchy(root: string, base: number): Promise<void> {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: root, frequency: 'P1D', axes: [{ name: 'demand' }] } }));
  for (let k = 0; k < LEAVES; k++) {
    const leaf = `${root.replace('region', 'store')}-${k}`;
    await dailyEntity(t, key, leaf, (i) => base + 5 * k + [0, 8, 10, 12, 14, 30, 25][i % 7] + ((i * (k + 3)) % 7), 365);
    await ok(rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: root, child: leaf } }));
  }
}

beforeAll(async () => {
  t = await startTestService();
  ({ key, accountId } = await t.account('enterprise'));
  await hierarchy('region:rest', 40);
  await hierarchy('region:grpc', 1000);
}, 120_000);
afterAll(() => t.close());

/** Fits the pool made once everything it was handed has finished. */
async function fitsSettled(): Promise<number> {
  const { stats } = t.service.ctx.pool;
  for (let last = -1; last !== stats.fits; ) {
    last = stats.fits;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return stats.fits;
}

describe('a depth query past its deadline', () => {
  test('REST: 504, most of its fits never run, and the query answers in full without a deadline', async () => {
    const before = await fitsSettled();
    const late = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'region:rest', depth: 1, horizon: 7 }, headers: { 'grpc-timeout': '100m' } });
    expect(late.code).toBe('deadline_exceeded');
    expect(late.status).toBe(504);
    // 41 fits were asked for; the two workers held at most two each when the deadline passed
    expect((await fitsSettled()) - before).toBeLessThanOrEqual(12);
    const answer = await ok(rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'region:rest', depth: 1, horizon: 7 } }));
    expect(answer.data.descendants).toHaveLength(LEAVES);
    expect((await fitsSettled()) - before).toBe(LEAVES + 1);
  }, 120_000);

  test('gRPC: DEADLINE_EXCEEDED, most of its fits never run', async () => {
    const client = t.client(OracleServiceClient);
    const call = (deadline?: number) =>
      new Promise<{ err: grpc.ServiceError | null; res?: QueryResponse }>((resolve) => {
        const md = new grpc.Metadata();
        md.set('authorization', `Bearer ${key}`);
        client.query(QueryRequest.fromPartial({ entity: 'region:grpc', depth: 1, horizon: 7 }), md, deadline ? { deadline } : {}, (err, res) => resolve({ err, res }));
      });
    const before = await fitsSettled();
    const late = await call(Date.now() + 100);
    expect(late.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect((await fitsSettled()) - before).toBeLessThanOrEqual(12);
    const answer = await call();
    expect(answer.err).toBeNull();
    expect(answer.res!.descendants).toHaveLength(LEAVES);
    expect((await fitsSettled()) - before).toBe(LEAVES + 1);
  }, 120_000);
});

test('series reads not yet made when the signal aborts are not made (found by QA: a query past its deadline kept reading, one turn at a time)', async () => {
  const { series, entities, observations } = t.service.ctx;
  // entities no query has read (the loader's cache would answer without a read)
  for (let k = 0; k < 6; k++) await dailyEntity(t, key, `store:unread-${k}`, (i) => 10 + k + (i % 7), 60);
  const records = await Promise.all(Array.from({ length: 6 }, (_, k) => entities.get(accountId, `store:unread-${k}`)));
  const asOf = await observations.latestRevision(accountId);
  const gone = new AbortController();
  const reason = new Error('the deadline passed');
  const loads = Promise.allSettled(records.map((r) => series.load(accountId, r!, r!.axes[0], asOf, gone.signal)));
  gone.abort(reason);
  for (const o of await loads) expect(o).toEqual({ status: 'rejected', reason });
  // the same reads without a signal are made
  const again = await Promise.all(records.map((r) => series.load(accountId, r!, r!.axes[0], asOf)));
  expect(again.map((s) => s.nobs)).toEqual([60, 60, 60, 60, 60, 60]);
});
