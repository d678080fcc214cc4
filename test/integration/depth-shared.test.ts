/**
 * Identical depth queries in flight share one computation (found by QA: twelve identical cold
 * queries over 800 leaves each reconciled on their own, one after another): each still gets its own
 * answer and manifest, a caller that leaves does not stop the others' answer, another account's
 * identical query shares neither the run nor the cached answer (identical series still share fits,
 * as at depth 0), and loading the hierarchy watches the caller's signal.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { OracleServiceClient, QueryRequest, type QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { loadHierarchy } from '../../src/graph/hierarchy-graph';
import { ok, rest } from '../helpers/dual';
import { dailyEntity, dayTime } from '../helpers/oracle-data';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let a: { key: string; accountId: string };
let b: { key: string; accountId: string };
const LEAVES = 16;
const LEFT_LEAVES = 40;

/**
 * `root` with LEAVES daily leaves of a year each (a strong weekly cycle: the costlier daily route),
 * their data set by the root's name (no fit of another hierarchy is cached for them).
 */
async function hierarchy(key: string, root: string, leaves = LEAVES): Promise<void> {
  await ok(rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: root, frequency: 'P1D', axes: [{ name: 'demand' }] } }));
  const base = 40 + [...root].reduce((sum, c) => sum + c.charCodeAt(0), 0);
  for (let k = 0; k < leaves; k++) {
    const leaf = `${root.replace('region', 'store')}-${k}`;
    await dailyEntity(t, key, leaf, (i) => base + 5 * k + [0, 8, 10, 12, 14, 30, 25][i % 7] + ((i * (k + 3)) % 7), 365);
    await ok(rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: root, child: leaf } }));
  }
}

beforeAll(async () => {
  t = await startTestService();
  a = await t.account('enterprise');
  b = await t.account('enterprise');
  await hierarchy(a.key, 'region:shared');
  // larger: its computation must still run when a second caller has joined it (a loaded CI machine)
  await hierarchy(a.key, 'region:left', LEFT_LEAVES);
  await hierarchy(a.key, 'region:both');
  // the other account holds a hierarchy with the same names and the same data
  await hierarchy(b.key, 'region:both');
}, 180_000);
afterAll(() => t.close());

const query = (key: string, entity: string, headers: Record<string, string> = {}) =>
  rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity, depth: 1, horizon: 7 }, headers });

function grpcQuery(key: string, entity: string): Promise<{ err: grpc.ServiceError | null; res?: QueryResponse }> {
  const client = t.client(OracleServiceClient);
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${key}`);
  return new Promise((resolve) => client.query(QueryRequest.fromPartial({ entity, depth: 1, horizon: 7 }), md, (err, res) => resolve({ err, res })));
}

/** Until `condition` holds (looked at every 5 ms; fails after a minute, never loops on after the test). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (const begun = Date.now(); !condition(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() - begun > 60_000) throw new Error(`never: ${what}`);
  }
}

/** Until the depth queries have started `n` computations (a cold one then runs for seconds). */
const started = (n: number) => until(() => t.service.ctx.depthQueries.stats.started >= n, `${n} computations started`);

/** What an answer says about the future (not its query id or manifest). */
const forecasts = (body: { forecast: unknown; descendants: unknown }) => JSON.stringify([body.forecast, body.descendants]);

test('identical cold queries in flight, on both protocols, run one computation and get the same forecasts, each its own query id', async () => {
  const { stats } = t.service.ctx.depthQueries;
  const before = { ...stats };
  const fits = t.service.ctx.pool.stats.fits;
  const first = query(a.key, 'region:shared');
  await started(before.started + 1);
  const [r1, r2, r3, g] = await Promise.all([first, query(a.key, 'region:shared'), query(a.key, 'region:shared'), grpcQuery(a.key, 'region:shared')]);
  const answers = await Promise.all([r1, r2, r3].map((r) => ok(Promise.resolve(r))));
  expect(g.err).toBeNull();
  expect(stats.started - before.started).toBe(1);
  expect(stats.joined - before.joined).toBe(3);
  expect(t.service.ctx.pool.stats.fits - fits).toBe(LEAVES + 1);
  for (const x of answers) {
    expect(x.data.descendants).toHaveLength(LEAVES);
    expect(forecasts(x.data)).toBe(forecasts(answers[0].data));
  }
  expect(g.res!.descendants).toHaveLength(LEAVES);
  expect(g.res!.forecast!.quantiles).toEqual(answers[0].data.forecast.quantiles);
  expect(new Set([...answers.map((x) => x.data.query_id), g.res!.queryId]).size).toBe(4);
}, 120_000);

test('a caller that leaves (a cancelled gRPC call) gets CANCELLED; the identical query it shared with still gets its answer', async () => {
  const { stats } = t.service.ctx.depthQueries;
  const before = { ...stats };
  const patient = query(a.key, 'region:left');
  await started(before.started + 1);
  // the leaver joins the computation in flight, then cancels
  const client = t.client(OracleServiceClient);
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${a.key}`);
  let call!: grpc.ClientUnaryCall;
  const left = new Promise<grpc.ServiceError | null>((resolve) => {
    call = client.query(QueryRequest.fromPartial({ entity: 'region:left', depth: 1, horizon: 7 }), md, (err) => resolve(err));
  });
  await until(() => stats.joined > before.joined, 'the second caller joined');
  call.cancel();
  expect((await left)?.code).toBe(grpc.status.CANCELLED);
  const answer = await ok(patient);
  expect(answer.data.descendants).toHaveLength(LEFT_LEAVES);
  expect(stats.started - before.started).toBe(1);
  expect(stats.joined - before.joined).toBe(1);
  expect(stats.abandoned - before.abandoned).toBe(0);
}, 120_000);

test("another account's identical query (same names, same data) shares neither the reconciliation in flight nor the cached answer", async () => {
  const { stats } = t.service.ctx.depthQueries;
  const before = { ...stats };
  const [x, y] = await Promise.all([ok(query(a.key, 'region:both')), ok(query(b.key, 'region:both'))]);
  expect(stats.started - before.started).toBe(2);
  expect(stats.joined - before.joined).toBe(0);
  // identical data, so identical forecasts: computed once per account
  expect(forecasts(y.data)).toBe(forecasts(x.data));
  // each account's repeat is answered from its own cache
  await ok(query(b.key, 'region:both'));
  expect(stats.started - before.started).toBe(2);
}, 120_000);

test('loading a hierarchy makes no read once the signal has aborted (found by QA: ten cold depth queries read theirs for 2.5 s past their deadlines)', async () => {
  const { entities, relations } = t.service.ctx;
  const root = (await entities.get(a.accountId, 'region:shared'))!;
  const gone = new AbortController();
  const reason = new Error('the deadline passed');
  gone.abort(reason);
  await expect(loadHierarchy(entities, relations, a.accountId, root, gone.signal)).rejects.toBe(reason);
  const loaded = await loadHierarchy(entities, relations, a.accountId, root, new AbortController().signal);
  expect(loaded.entities).toHaveLength(LEAVES + 1);
});

test('loads of one series at once make one read (found measuring eight identical depth queries: every series read eight times)', async () => {
  const { series, entities, observations } = t.service.ctx;
  await dailyEntity(t, a.key, 'store:read-once', (i) => 20 + (i % 7), 90);
  const record = (await entities.get(a.accountId, 'store:read-once'))!;
  const asOf = await observations.latestRevision(a.accountId);
  const before = series.stats.started;
  // each load joins the read in flight, or finds what it read in the cache
  const loads = await Promise.all(Array.from({ length: 8 }, () => series.load(a.accountId, record, record.axes[0], asOf, new AbortController().signal)));
  expect(series.stats.started - before).toBe(1);
  for (const l of loads) expect(l).toBe(loads[0]);
  expect(loads[0].nobs).toBe(90);
});

test("a warm depth query reads each entity's newest revision once, and gives the same answer", async () => {
  const { observations } = t.service.ctx;
  const cold = await ok(query(a.key, 'region:shared'));
  // counted on the real store: every read of an entity's newest revision this query makes
  const read = observations.newestRevision.bind(observations);
  const asked: string[] = [];
  observations.newestRevision = (accountId: string, entity: string) => (asked.push(entity), read(accountId, entity));
  try {
    const warm = await ok(query(a.key, 'region:shared'));
    expect(forecasts(warm.data)).toBe(forecasts(cold.data));
  } finally {
    observations.newestRevision = read;
  }
  // the root and its leaves, each once (it was twice: once to count the query's steps, once to read)
  expect(asked).toHaveLength(LEAVES + 1);
  expect(new Set(asked).size).toBe(LEAVES + 1);
});

test("a query's reads see one revision per entity: the steps it checked are the steps it reads, an ingest in between", async () => {
  const { series, entities, observations } = t.service.ctx;
  await dailyEntity(t, a.key, 'store:one-revision', (i) => 30 + (i % 7), 60);
  const record = (await entities.get(a.accountId, 'store:one-revision'))!;
  const revisions = series.revisions();
  const steps = await series.steps(a.accountId, record, record.axes[0], Infinity, undefined, revisions);
  expect(steps).toBe(60);
  // a day more arrives after the query counted its steps, before it reads the series
  const more = await rest(t, a.key, { method: 'POST', path: '/v1/entities/store:one-revision/observations', body: { observations: [{ axis: 'demand', time: dayTime(60), value: 31 }] } });
  expect(more.code).toBe('ok');
  const inQuery = await series.load(a.accountId, record, record.axes[0], Infinity, undefined, revisions);
  expect(inQuery.values.length).toBe(steps);
  // a later query sees the new day (nothing kept under the older revision serves it)
  const later = await series.load(a.accountId, record, record.axes[0], await observations.latestRevision(a.accountId));
  expect(later.values.length).toBe(61);
  const next = series.revisions();
  expect(await series.steps(a.accountId, record, record.axes[0], Infinity, undefined, next)).toBe(61);
});
