/**
 * Observation ingest (issue 11, defects 6, 10 and 11), on both protocols: times within the
 * documented range, an axis spanning at most MAX_AXIS_SPAN_STEPS, 400 naming the row and nothing
 * stored; the oracle answers 422 for stored data it cannot use; data revisions per account,
 * strictly increasing and consecutive under concurrency, telling nothing of other accounts;
 * corrections counted right when identical rows are re-sent; all or nothing when a fault
 * strikes after some rows are written.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { sql } from 'kysely';
import { EntityServiceClient, type BulkIngestObservationsRequest } from '../../gen/forecast/v1/entity_service.pb';
import { OracleServiceClient } from '../../gen/forecast/v1/oracle_service.pb';
import { MAX_AXIS_SPAN_STEPS } from '../../src/entities/observation-store';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let entities: EntityServiceClient;
let oracle: OracleServiceClient;
let key: string;
let accountId: string;

type Protocol = 'rest' | 'grpc';
const PROTOCOLS: Protocol[] = ['rest', 'grpc'];
type Row = { axis: string; time: string; value: number };

beforeAll(async () => {
  t = await startTestService();
  entities = t.client(EntityServiceClient);
  oracle = t.client(OracleServiceClient);
  ({ key, accountId } = await t.account('enterprise'));
});
afterAll(() => t.close());

async function createEntity(apiKey: string, entity: string, frequency = 'P1D'): Promise<void> {
  const o = await rest(t, apiKey, { method: 'POST', path: '/v1/entities', body: { entity, frequency, axes: [{ name: 'demand' }] } });
  assert.equal(o.code, 'ok', o.message);
}
const ingest = (p: Protocol, entity: string, rows: Row[], apiKey = key): Promise<Outcome> =>
  p === 'rest'
    ? rest(t, apiKey, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations: rows } })
    : grpcCall(entities, entities.ingestObservations, apiKey, { entity, observations: rows.map((r) => ({ ...r, revision: '0' })) });

/** A bulk stream: gRPC client stream or REST NDJSON. */
function bulk(p: Protocol, messages: { entity: string; observations: Row[] }[], apiKey = key): Promise<Outcome> {
  if (p === 'rest') {
    return rest(t, apiKey, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: messages.map((m) => JSON.stringify(m)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
  }
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${apiKey}`);
    const call = entities.bulkIngestObservations(md, (err, res) => {
      if (!err) return resolve({ protocol: 'grpc', code: 'ok', message: '', requestId: undefined, data: res, headers: {}, status: 0 });
      const details = err.metadata?.get('grpc-status-details-bin')[0];
      const reason = details ? decodeErrorInfo(details as Buffer).reason : undefined;
      resolve({ protocol: 'grpc', code: reason ?? `grpc:${err.code}`, message: err.details, requestId: String(err.metadata?.get('request-id')[0]), data: undefined, headers: {}, status: err.code });
    });
    for (const m of messages) call.write({ entity: m.entity, observations: m.observations.map((r) => ({ ...r, revision: '0' })) } satisfies BulkIngestObservationsRequest);
    call.end();
  });
}

async function stored(entity: string, apiKey = key): Promise<{ observations: { time: string; revision: string; value: number }[]; data_revision: string }> {
  const o = await rest(t, apiKey, { method: 'GET', path: `/v1/entities/${entity}/observations?page_size=200` });
  assert.equal(o.code, 'ok', o.message);
  return o.data;
}
const latestRevision = (account: string) => t.service.ctx.observations.latestRevision(account);

describe.each(PROTOCOLS)('%s', (p) => {
  test('times outside 1900-01-01 .. 2200-01-01 are 400 naming the row, and nothing is stored', async () => {
    const entity = `store:range-${p}`;
    await createEntity(key, entity);
    for (const bad of ['0000-01-01T00:00:00Z', '1899-12-31T00:00:00Z', '2200-01-01T00:00:00Z', '9999-12-31T00:00:00Z']) {
      const o = await ingest(p, entity, [{ axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 }, { axis: 'demand', time: bad, value: 2 }]);
      assert.equal(o.code, 'invalid_argument', `${bad}: ${o.message}`);
      assert.ok(o.message.startsWith('observations[1].time: '), o.message);
      assert.ok(o.message.includes('1900-01-01'), o.message);
    }
    assert.deepEqual((await stored(entity)).observations, []);
    const edges = await ingest(p, entity, [{ axis: 'demand', time: '1900-01-01T00:00:00Z', value: 1 }, { axis: 'demand', time: '2199-12-31T00:00:00Z', value: 1 }]);
    assert.equal(edges.code, 'ok', edges.message);
  });

  test(`an axis may cover at most ${MAX_AXIS_SPAN_STEPS} grid points, counting what is stored; the row that stretches it is named`, async () => {
    const entity = `server:span-${p}`;
    await createEntity(key, entity, 'PT1H');
    const start = Date.UTC(2000, 0, 1);
    const at = (steps: number) => new Date(start + steps * 3600_000).toISOString().replace('.000Z', 'Z');
    const inOne = await ingest(p, entity, [{ axis: 'demand', time: at(0), value: 1 }, { axis: 'demand', time: at(MAX_AXIS_SPAN_STEPS), value: 2 }]);
    assert.equal(inOne.code, 'invalid_argument');
    assert.ok(inOne.message.startsWith('observations[1].time: '), inOne.message);
    assert.ok(inOne.message.includes(`cover ${MAX_AXIS_SPAN_STEPS + 1} PT1H grid points`), inOne.message);
    assert.equal((await ingest(p, entity, [{ axis: 'demand', time: at(0), value: 1 }, { axis: 'demand', time: at(MAX_AXIS_SPAN_STEPS - 1), value: 2 }])).code, 'ok', 'exactly the maximum is fine');
    const later = await ingest(p, entity, [{ axis: 'demand', time: at(10), value: 3 }, { axis: 'demand', time: at(MAX_AXIS_SPAN_STEPS), value: 4 }]);
    assert.equal(later.code, 'invalid_argument');
    assert.ok(later.message.startsWith('observations[1].time: '), later.message);
    const earlier = await ingest(p, entity, [{ axis: 'demand', time: at(-1), value: 5 }]);
    assert.ok(earlier.message.startsWith('observations[0].time: '), earlier.message);
    assert.equal((await stored(entity)).observations.length, 2);
  });

  test('a bulk stream names the message and row of a time out of range, and stores nothing', async () => {
    const entity = `store:bulk-range-${p}`;
    await createEntity(key, entity);
    const o = await bulk(p, [
      { entity, observations: [{ axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 }] },
      { entity, observations: [{ axis: 'demand', time: '2026-01-02T00:00:00Z', value: 1 }, { axis: 'demand', time: '9999-12-31T00:00:00Z', value: 1 }] },
    ]);
    assert.match(o.message, /messages\[1\]\.observations\[1\]\.time: /);
    assert.deepEqual((await stored(entity)).observations, []);
  });

  test('re-sending identical observations in a bulk stream counts each as one correction', async () => {
    const entity = `store:corr-${p}`;
    await createEntity(key, entity);
    const rows: Row[] = [1, 2, 3].map((d) => ({ axis: 'demand', time: `2026-01-0${d}T00:00:00Z`, value: d }));
    const messages = [{ entity, observations: rows.slice(0, 2) }, { entity, observations: rows.slice(2) }];
    const first = await bulk(p, messages);
    assert.equal(first.code, 'ok', first.message);
    assert.deepEqual([first.data.accepted, first.data.corrections], [3, 0]);
    const again = await bulk(p, messages);
    assert.deepEqual([again.data.accepted, again.data.corrections], [3, 3]);
    const single = await ingest(p, entity, [rows[0], { axis: 'demand', time: '2026-01-09T00:00:00Z', value: 9 }]);
    assert.deepEqual([single.data.accepted, single.data.corrections], [2, 1]);
  });

  test('the oracle answers 422 for stored data it cannot use (an axis spanning too far, stored before ingest checked it)', async () => {
    const entity = `server:legacy-${p}`;
    await createEntity(key, entity, 'PT1H');
    const db = t.service.ctx.database.db;
    await db.insertInto('observations').values([0, 400_000].map((h, i) => ({ account_id: accountId, entity, axis: 'demand', time: Date.UTC(1990, 0, 1) + h * 3600_000, revision: 1, value: i }))).execute();
    const o =
      p === 'rest'
        ? await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity } })
        : await grpcCall(oracle, oracle.query, key, { entity, depth: 0, axes: [], includeManifest: false, reconciliation: '', horizon: 1, thresholds: [], quantiles: [] });
    assert.equal(o.code, 'insufficient_data', o.message);
    assert.equal(o.status, p === 'rest' ? 422 : grpc.status.FAILED_PRECONDITION);
    assert.ok(o.message.includes('covers 400001 PT1H grid points'), o.message);
  });
});

describe('data revisions are per account', () => {
  test('each account counts its own revisions from 1; one account’s ingests do not move another’s', async () => {
    const a = (await t.account('enterprise')).key;
    const b = (await t.account('enterprise')).key;
    await createEntity(a, 'store:r');
    await createEntity(b, 'store:r');
    const row = (d: number): Row[] => [{ axis: 'demand', time: `2026-02-0${d}T00:00:00Z`, value: d }];
    assert.equal((await ingest('rest', 'store:r', row(1), a)).data.revision, '1');
    assert.equal((await ingest('grpc', 'store:r', row(1), b)).data.revision, '1');
    for (let i = 2; i <= 5; i++) assert.equal((await ingest('grpc', 'store:r', row(i), b)).data.revision, String(i));
    assert.equal((await ingest('rest', 'store:r', row(2), a)).data.revision, '2', 'b’s four ingests are invisible to a');
    const ahead = await rest(t, a, { method: 'GET', path: '/v1/entities/store:r/observations?as_of_revision=3' });
    assert.equal(ahead.code, 'invalid_argument');
    assert.ok(ahead.message.includes('latest revision 2'), ahead.message);
    // beyond 2^53 − 1 (int64 all the same): newer than any revision, not "must be a non-negative integer" (found by QA)
    for (const huge of ['9007199254740992', '9223372036854775807']) {
      const far = await rest(t, a, { method: 'GET', path: `/v1/entities/store:r/observations?as_of_revision=${huge}` });
      assert.equal(far.status, 400);
      assert.equal(far.message, `as_of_revision: ${huge} is newer than any data revision (they stay below 2^53)`);
    }
    const negative = await rest(t, a, { method: 'GET', path: '/v1/entities/store:r/observations?as_of_revision=-1' });
    assert.equal(negative.message, 'as_of_revision: must be a non-negative integer, got -1');
    assert.equal((await stored('store:r', a)).data_revision, '2');
  });

  test('filter bounds with digits below the millisecond (Python isoformat) select exactly, rounded up; observation times with them are refused', async () => {
    const a = (await t.account('enterprise')).key;
    await createEntity(a, 'store:fine', 'PT1M');
    const rows: Row[] = [0, 1, 2].map((s) => ({ axis: 'demand', time: `2026-02-01T00:0${s}:00Z`, value: s }));
    await ingest('rest', 'store:fine', rows, a);
    // the same bounds over both protocols (one parser below the pipeline)
    const times = async (bounds: { start?: string; end?: string }) => {
      const query = Object.entries(bounds).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
      const answers = [
        await rest(t, a, { method: 'GET', path: `/v1/entities/store:fine/observations?${query}` }),
        await grpcCall(entities, entities.listObservations, a, { entity: 'store:fine', axis: '', start: bounds.start ?? '', end: bounds.end ?? '', asOfRevision: '0', pageSize: 0, cursor: '' }),
      ].map((o) => {
        assert.equal(o.code, 'ok', o.message);
        return (o.data.observations as { time: string }[]).map((x) => x.time);
      });
      assert.deepEqual(answers[1], answers[0], 'gRPC as REST');
      return answers[0];
    };
    // start is inclusive: a microsecond after minute 0 leaves it out; end is exclusive: a microsecond after minute 2 keeps it
    assert.deepEqual(await times({ start: '2026-02-01T00:00:00.000001+00:00' }), ['2026-02-01T00:01:00Z', '2026-02-01T00:02:00Z']);
    assert.deepEqual(await times({ end: '2026-02-01T00:02:00.000001+00:00' }), ['2026-02-01T00:00:00Z', '2026-02-01T00:01:00Z', '2026-02-01T00:02:00Z']);
    assert.deepEqual(await times({ end: '2026-02-01T00:02:00.000000+00:00' }), ['2026-02-01T00:00:00Z', '2026-02-01T00:01:00Z']);
    for (const p of PROTOCOLS) {
      const fine = await ingest(p, 'store:fine', [{ axis: 'demand', time: '2026-02-01T00:03:00.000001Z', value: 3 }], a);
      assert.equal(fine.code, 'invalid_argument', p);
    }
  });

  test('40 concurrent ingests of one account over both protocols get the revisions 1..40, each once', async () => {
    const { key: k, accountId: id } = await t.account('enterprise');
    await createEntity(k, 'store:c');
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => ingest(i % 2 ? 'grpc' : 'rest', 'store:c', [{ axis: 'demand', time: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().replace('.000Z', 'Z'), value: i }], k)),
    );
    const revisions = outcomes.map((o) => Number(o.data.revision)).sort((x, y) => x - y);
    assert.deepEqual(revisions, Array.from({ length: 40 }, (_, i) => i + 1));
    assert.equal(await latestRevision(id), 40);
  });
});

describe('all or nothing when a fault strikes after rows are written', () => {
  /** Make the database refuse any observation with this value: the fault hits mid-ingest, after earlier rows were inserted. */
  const POISON = 987654.25;
  beforeAll(async () => {
    const db = t.service.ctx.database.db;
    if (t.service.ctx.database.dialect === 'sqlite') {
      await sql`CREATE TRIGGER inject_fault BEFORE INSERT ON observations WHEN NEW.value = ${sql.lit(POISON)} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`.execute(db);
    } else {
      await sql
        .raw(
          `CREATE FUNCTION inject_fault() RETURNS trigger AS $$ BEGIN IF NEW.value = ${POISON} THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
           CREATE TRIGGER inject_fault BEFORE INSERT ON observations FOR EACH ROW EXECUTE FUNCTION inject_fault();`,
        )
        .execute(db);
    }
  });
  afterAll(async () => {
    const db = t.service.ctx.database.db;
    if (t.service.ctx.database.dialect === 'sqlite') await sql`DROP TRIGGER inject_fault`.execute(db);
    else await sql.raw('DROP TRIGGER inject_fault ON observations; DROP FUNCTION inject_fault();').execute(db);
  });

  test.each(PROTOCOLS)('%s: a 10,000-row ingest failing at row 9,000 stores nothing and uses no revision; a bulk stream likewise', async (p) => {
    const { key: k, accountId: id } = await t.account('enterprise');
    await createEntity(k, 'store:fault');
    const rows: Row[] = Array.from({ length: 10_000 }, (_, i) => ({ axis: 'demand', time: new Date(Date.UTC(1990, 0, 1 + i)).toISOString().replace('.000Z', 'Z'), value: i === 9000 ? POISON : i }));
    const o = await ingest(p, 'store:fault', rows, k);
    assert.equal(o.code, 'internal');
    const after = await stored('store:fault', k);
    assert.deepEqual(after.observations, []);
    assert.equal(after.data_revision, '0');
    const s = await bulk(p, [{ entity: 'store:fault', observations: rows.slice(0, 5000) }, { entity: 'store:fault', observations: rows.slice(5000) }], k);
    assert.notEqual(s.code, 'ok');
    assert.deepEqual((await stored('store:fault', k)).observations, []);
    assert.equal(await latestRevision(id), 0);
    assert.equal((await ingest(p, 'store:fault', rows.slice(0, 10), k)).data.revision, '1', 'the next ingest gets revision 1');
  });
});
