/**
 * The fault suite (issue 11): the real server as a child process, killed with SIGKILL in the
 * middle of a 10,000-row REST ingest and a 20,000-row gRPC bulk stream, round after round on the
 * same database. After every kill: each ingest is fully present or fully absent (and present if
 * it was answered), the revision bookkeeping agrees with the rows, SQLite's integrity check is
 * clean, and every oracle query answered before the kill has its record. Then SIGTERM while calls
 * are in flight: they are drained, answered and committed, and the process exits 0.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { sql } from 'kysely';
import { EntityServiceClient, IngestObservationsRequest } from '../../gen/forecast/v1/entity_service.pb';
import { OracleServiceClient } from '../../gen/forecast/v1/oracle_service.pb';
import { Rng } from '../fuzz/generate';
import { ChildAccounts, startChildServer, type ChildServer } from '../helpers/child-server';
import { freshDatabaseUrl, testOn, type TestDatabaseUrl } from '../helpers/database';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import type { TestService } from '../helpers/service';

const ROUNDS = 10;
const REST_ROWS = 10_000;
const STREAM_MESSAGES = 5;
const ROWS_PER_MESSAGE = 4_000;
const SEED = 4242;
/** Generous bounds for a loaded 2-core machine (a round restarts the server): they only stop a hung run. */
const KILL_SUITE_TIMEOUT_MS = 15 * 60_000;
const DRAIN_TIMEOUT_MS = 5 * 60_000;

type Row = { axis: string; time: string; value: number };
const day = (i: number) => new Date(Date.UTC(1990, 0, 1) + i * 86_400_000).toISOString().replace('.000Z', 'Z');
const rows = (n: number, offset = 0): Row[] => Array.from({ length: n }, (_, i) => ({ axis: 'demand', time: day(offset + i), value: (i % 97) + 1 }));

let database: TestDatabaseUrl;
let accounts: ChildAccounts;
let key: string;
let accountId: string;

beforeAll(async () => {
  // the database and the account outlive every server process of the suite
  database = await freshDatabaseUrl();
  const first = await startChildServer({ database });
  accounts = await ChildAccounts.open(first.databaseUrl);
  ({ key, accountId } = await accounts.create('enterprise'));
  const call = (path: string, body: unknown) => rest({ baseUrl: first.baseUrl } as TestService, key, { method: 'POST', path, body });
  assert.equal((await call('/v1/entities', { entity: 'store:warm', frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] })).code, 'ok');
  assert.equal((await call('/v1/entities/store:warm/observations', { observations: rows(60, 12_000) })).code, 'ok');
  await first.stop();
});
afterAll(async () => {
  await accounts?.close();
  await database?.drop();
});

async function countRows(entity: string): Promise<number> {
  const r = await accounts.db.db.selectFrom('observations').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).where('entity', '=', entity).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A gRPC client stream writing `messages`; resolves with the outcome (or a transport failure). */
function bulkStream(client: EntityServiceClient, entity: string, messages: Row[][]): Promise<Outcome> {
  return new Promise((resolve) => {
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${key}`);
    const call = client.bulkIngestObservations(md, (err, res) =>
      resolve(err ? { protocol: 'grpc', code: `grpc:${err.code}`, message: err.details, requestId: undefined, data: undefined, headers: {}, status: err.code } : { protocol: 'grpc', code: 'ok', message: '', requestId: undefined, data: res, headers: {}, status: 0 }),
    );
    for (const m of messages) call.write({ entity, observations: m.map((r) => ({ ...r, revision: '0' })) });
    call.end();
  });
}

describe('kill -9 in the middle of ingests', () => {
  // SQLite only: what a SIGKILL of the process writing the file leaves behind. (On PostgreSQL the
  // server process holds no data; the database's own outages are the pg branch's outage tests.)
  testOn(['sqlite'], 'a SIGKILL of the process that writes the SQLite file')(`${ROUNDS} kills: every ingest all or nothing, integrity clean, every answered query recorded`, async () => {
    const rng = new Rng(SEED);
    const outcomes: string[] = [];
    // Round 0 calibrates: no kill, it measures how long the two ingests take on this machine; each
    // later round kills at a seeded moment between 10% and 130% of that, so some rounds kill
    // before, some during and some after the commits, whatever the machine's speed.
    let window = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      const server: ChildServer = await startChildServer({ database });
      const base = { baseUrl: server.baseUrl } as TestService;
      const entities = new EntityServiceClient(server.grpcAddress, grpc.credentials.createInsecure());
      const oracle = new OracleServiceClient(server.grpcAddress, grpc.credentials.createInsecure());
      try {
        const restEntity = `store:rest${round}`;
        const streamEntity = `store:stream${round}`;
        for (const entity of [restEntity, streamEntity]) {
          const created = await rest(base, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] } });
          assert.equal(created.code, 'ok', created.message);
        }
        // a first query fits the model in this process (later ones are fast)
        const warm = await rest(base, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:warm', horizon: 1 } });
        assert.equal(warm.code, 'ok', warm.message);
        // queries answered before the kill: their ids must all be recorded
        const answered: string[] = [warm.data.query_id];
        let killed = false;
        const queries = (async () => {
          for (let i = 0; !killed; i++) {
            const o =
              i % 2
                ? await rest(base, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:warm', horizon: 1 + (i % 5) } }).catch(() => undefined)
                : await grpcCall(oracle, oracle.query, key, { entity: 'store:warm', depth: 0, axes: [], includeManifest: false, reconciliation: '', horizon: 1 + (i % 5), thresholds: [], quantiles: [] });
            if (o?.code === 'ok') answered.push(o.protocol === 'rest' ? o.data.query_id : o.data.queryId);
            else if (!killed) assert.fail(`query before the kill: ${o?.code} ${o?.message}`);
          }
        })();
        const restIngest = rest(base, key, { method: 'POST', path: `/v1/entities/${restEntity}/observations`, body: { observations: rows(REST_ROWS) } }).catch((err) => ({ code: `failed: ${err}` }) as Outcome);
        const streamIngest = bulkStream(entities, streamEntity, Array.from({ length: STREAM_MESSAGES }, (_, m) => rows(ROWS_PER_MESSAGE, m * ROWS_PER_MESSAGE)));
        const started = Date.now();
        let r: Outcome;
        let s: Outcome;
        if (round === 0) {
          [r, s] = await Promise.all([restIngest, streamIngest]);
          window = Date.now() - started;
          killed = true;
          await queries;
          assert.equal(r.code, 'ok', r.message);
          assert.equal(s.code, 'ok', s.message);
          outcomes.push(`round 0 (calibration): both ingests answered in ${window} ms`);
        } else {
          const delay = Math.round(window * (0.1 + 1.2 * rng.next()));
          await new Promise((resolve) => setTimeout(resolve, delay));
          killed = true;
          await server.stop('SIGKILL');
          [r, s] = await Promise.all([restIngest, streamIngest, queries]);
          outcomes.push(`round ${round}: SIGKILL after ${delay} ms; REST ${r.code}, stream ${s.code}, ${answered.length} queries answered`);
        }

        // all or nothing, and present when answered
        const restRows = await countRows(restEntity);
        const streamRows = await countRows(streamEntity);
        assert.ok(restRows === 0 || restRows === REST_ROWS, `round ${round}: REST ingest left ${restRows} rows`);
        assert.ok(streamRows === 0 || streamRows === STREAM_MESSAGES * ROWS_PER_MESSAGE, `round ${round}: stream left ${streamRows} rows`);
        if (r.code === 'ok') assert.equal(restRows, REST_ROWS, `round ${round}: an answered REST ingest is stored`);
        if (s.code === 'ok') assert.equal(streamRows, STREAM_MESSAGES * ROWS_PER_MESSAGE, `round ${round}: an answered stream is stored`);
        // the revision bookkeeping agrees with the rows
        const revisions = await accounts.db.db.selectFrom('revisions').select(['revision', 'observation_count']).where('account_id', '=', accountId).orderBy('revision').execute();
        const counter = await accounts.db.db.selectFrom('accounts').select('data_revision').where('id', '=', accountId).executeTakeFirstOrThrow();
        assert.equal(Number(counter.data_revision), revisions.length ? Number(revisions[revisions.length - 1].revision) : 0);
        const rowRevisions = await accounts.db.db.selectFrom('observations').select('revision').distinct().where('account_id', '=', accountId).execute();
        assert.deepEqual(new Set(rowRevisions.map((x) => Number(x.revision))), new Set(revisions.map((x) => Number(x.revision))), `round ${round}: every revision has its rows and no more`);
        // integrity, and every answered query recorded
        const integrity = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(accounts.db.db);
        assert.deepEqual(integrity.rows, [{ integrity_check: 'ok' }], `round ${round}`);
        if (answered.length > 0) {
          const recorded = await accounts.db.db.selectFrom('queries').select('query_id').where('query_id', 'in', answered).execute();
          assert.equal(recorded.length, answered.length, `round ${round}: answered queries without a record`);
        }
      } finally {
        entities.close();
        oracle.close();
        await server.stop('SIGKILL');
      }
    }
    // eslint-disable-next-line no-console
    console.log(outcomes.join('\n'));
  }, KILL_SUITE_TIMEOUT_MS);
});

describe('SIGTERM with calls in flight', () => {
  test('in-flight calls (REST and gRPC, unary and a stream) are drained, answered and committed; the process exits 0', async () => {
    const server = await startChildServer({ database, env: { SHUTDOWN_GRACE_MS: '60000' } });
    const base = { baseUrl: server.baseUrl } as TestService;
    const entities = new EntityServiceClient(server.grpcAddress, grpc.credentials.createInsecure());
    const oracle = new OracleServiceClient(server.grpcAddress, grpc.credentials.createInsecure());
    try {
      // long enough fits that queries are surely still running when the signal comes
      for (let i = 0; i < 2; i++) {
        const entity = `store:drain${i}`;
        assert.equal((await rest(base, key, { method: 'POST', path: '/v1/entities', body: { entity, frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
        const obs = Array.from({ length: 730 }, (_, d) => ({ axis: 'demand', time: day(d), value: 100 + 20 * Math.sin((d * 2 * Math.PI) / 7) + ((d * (i + 3)) % 11) }));
        assert.equal((await rest(base, key, { method: 'POST', path: `/v1/entities/${entity}/observations`, body: { observations: obs } })).code, 'ok');
      }
      assert.equal((await rest(base, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:drainstream', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
      // A stream opened and left open: it is in flight once a later call on the same connection
      // has been answered (HTTP/2 frames of one connection are taken in order).
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${key}`);
      let streamResult!: (o: { err: grpc.ServiceError | null; res?: { accepted: number } }) => void;
      const streamDone = new Promise<{ err: grpc.ServiceError | null; res?: { accepted: number } }>((r) => (streamResult = r));
      const stream = entities.bulkIngestObservations(md, (err, res) => streamResult({ err, res }));
      stream.write({ entity: 'store:drainstream', observations: rows(1000).map((r) => ({ ...r, revision: '0' })) });
      // Queries with idempotency keys: their claims show in the database while they run.
      const queries = [
        rest(base, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:drain0', horizon: 14 }, headers: { 'idempotency-key': 'drain-rest' } }),
        grpcCall(oracle, oracle.query, key, { entity: 'store:drain1', depth: 0, axes: [], includeManifest: false, reconciliation: '', horizon: 14, thresholds: [], quantiles: [] }, { 'idempotency-key': 'drain-grpc' }),
      ];
      assert.equal((await grpcCall(entities, entities.getEntity, key, { entity: 'store:drainstream' })).code, 'ok', 'the stream is open on the server');
      const running = async () =>
        (await accounts.db.db.selectFrom('idempotency').select('key').where('account_id', '=', accountId).where('state', '=', 'running').execute()).map((r) => r.key);
      // wait (polling the database) until at least one query is inside the service
      let inside: string[] = [];
      for (let i = 0; i < 2000 && inside.length === 0; i++) {
        inside = await running();
        if (inside.length === 0) await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(inside.length > 0, 'a query was seen running');
      server.process.kill('SIGTERM');
      // the stream, in flight, goes on and ends
      stream.write({ entity: 'store:drainstream', observations: rows(1000, 1000).map((r) => ({ ...r, revision: '0' })) });
      stream.end();
      const [{ err, res }, ...answers] = await Promise.all([streamDone, ...queries]);
      assert.equal(err, null, err?.details);
      assert.equal(res!.accepted, 2000);
      for (const a of answers) assert.equal(a.code, 'ok', `${a.protocol}: ${a.message}`);
      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.match(server.stdout(), /SIGTERM: draining/);
      // committed: the stream's rows, the queries' records and their stored idempotent responses
      assert.equal(await countRows('store:drainstream'), 2000);
      const ids = answers.map((a) => (a.protocol === 'rest' ? a.data.query_id : a.data.queryId));
      assert.equal((await accounts.db.db.selectFrom('queries').select('query_id').where('query_id', 'in', ids).execute()).length, 2);
      assert.deepEqual(await running(), [], 'no claim left running');
    } finally {
      entities.close();
      oracle.close();
      await server.stop('SIGKILL');
    }
  }, DRAIN_TIMEOUT_MS);
});
