/**
 * Idempotency keys (API.md section 11) on both protocols: exactly-once under concurrency,
 * replay with Idempotent-Replayed, 422 on a different request, 409 while in flight, the 24-hour
 * window (injected clock), ≥ 500 not stored, replays not counted, purge.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { EchoServiceClient } from '../gen/forecast/testing/v1/echo_service.pb';
import { ManualClock } from '../../src/clock';
import type { TestService } from '../helpers/service';
import { startWithEcho } from '../helpers/echo';
import { grpcCall, rest, type Outcome } from '../helpers/dual';

const clock = new ManualClock(Date.UTC(2026, 4, 10, 12));
let t: TestService;
let entities: EntityServiceClient;
let echo: EchoServiceClient;
let key: string;
let executions = 0;
let gate: Promise<void> = Promise.resolve();

beforeAll(async () => {
  t = await startWithEcho(
    {
      shout: {
        access: 'forecast:read',
        async handle(req) {
          executions++;
          await gate;
          if (req.times === -500) throw new Error('boom');
          return { shout: `${req.name}:${executions}` };
        },
      },
      oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: [], loud: false }) },
    },
    { clock },
  );
  entities = t.client(EntityServiceClient);
  echo = t.client(EchoServiceClient);
  key = (await t.account('pro')).key;
  const c = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:idem', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(c.code, 'ok', c.message);
});
afterAll(() => t.close());

const obs = [{ axis: 'demand', time: '2026-05-01T00:00:00Z', value: 3 }];
const ingestRest = (k: string, body: unknown = { observations: obs }) =>
  rest(t, key, { method: 'POST', path: '/v1/entities/store:idem/observations', body, headers: { 'idempotency-key': k } });
const ingestGrpc = (k: string, value = 3) =>
  grpcCall(entities, entities.ingestObservations, key, { entity: 'store:idem', observations: [{ ...obs[0], value, revision: '0' }] }, { 'idempotency-key': k });

async function revisionsOf(): Promise<string[]> {
  const o = await rest(t, key, { method: 'GET', path: '/v1/entities/store:idem/observations' });
  return o.data.observations.map((x: any) => x.revision);
}

test('50 concurrent requests with one key, over both protocols, execute the ingest exactly once', async () => {
  const outcomes: Outcome[] = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? ingestGrpc('k-concurrent') : ingestRest('k-concurrent'))));
  const ok = outcomes.filter((o) => o.code === 'ok');
  const inUse = outcomes.filter((o) => o.code === 'idempotency_key_in_use');
  assert.equal(ok.length + inUse.length, 50, outcomes.map((o) => o.code).join(','));
  for (const o of inUse) assert.equal(o.status, o.protocol === 'rest' ? 409 : 10);
  const fresh = ok.filter((o) => o.headers['idempotent-replayed'] !== 'true');
  assert.equal(fresh.length, 1, 'exactly one execution');
  const revisions = new Set(ok.map((o) => String(o.data.revision)));
  assert.equal(revisions.size, 1, 'every replay returns the original revision');
  assert.deepEqual(await revisionsOf(), [...revisions]);
  // replays return the stored response with the header, on both protocols
  for (const again of [await ingestRest('k-concurrent'), await ingestGrpc('k-concurrent')]) {
    assert.equal(again.code, 'ok');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(String(again.data.revision), [...revisions][0]);
  }
});

test('same key with a different request is 422 idempotency_key_reused (both protocols)', async () => {
  assert.equal((await ingestRest('k-diff')).code, 'ok');
  const r = await ingestRest('k-diff', { observations: [{ ...obs[0], value: 4 }] });
  assert.equal(r.code, 'idempotency_key_reused');
  assert.equal(r.status, 422);
  const g = await ingestGrpc('k-diff', 5);
  assert.equal(g.code, 'idempotency_key_reused');
  assert.equal(g.status, grpc.status.INVALID_ARGUMENT);
});

test('a key is scoped to the method: the same key on another POST method runs it', async () => {
  const a = await grpcCall(echo, echo.shout, key, { name: 'a', text: '', times: 1, legacyNote: '' }, { 'idempotency-key': 'k-diff' });
  assert.equal(a.code, 'ok');
  assert.equal(a.headers['idempotent-replayed'], undefined);
});

test('while the first call runs, a second gets 409; after it ends, a replay', async () => {
  let release!: () => void;
  gate = new Promise((r) => (release = r));
  const first = grpcCall(echo, echo.shout, key, { name: 'slow', text: '', times: 1, legacyNote: '' }, { 'idempotency-key': 'k-slow' });
  await new Promise((r) => setTimeout(r, 50));
  const second = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/slow:shout', body: { times: 1 }, headers: { 'idempotency-key': 'k-slow' } });
  assert.equal(second.code, 'idempotency_key_in_use');
  release();
  gate = Promise.resolve();
  const done = await first;
  const replay = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/slow:shout', body: { times: 1 }, headers: { 'idempotency-key': 'k-slow' } });
  assert.equal(replay.data.shout, done.data.shout);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
});

test('outcomes with status ≥ 500 are not stored; 4xx outcomes are replayed', async () => {
  const before = executions;
  const body = { times: -500 };
  const a = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/x:shout', body, headers: { 'idempotency-key': 'k-500' } });
  const b = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/x:shout', body, headers: { 'idempotency-key': 'k-500' } });
  assert.equal(a.code, 'internal');
  assert.equal(b.code, 'internal');
  assert.equal(executions - before, 2, 'a 500 is retried for real');
  const bad = await ingestRest('k-400', { observations: [{ axis: 'nope', time: obs[0].time, value: 1 }] });
  const badAgain = await ingestRest('k-400', { observations: [{ axis: 'nope', time: obs[0].time, value: 1 }] });
  assert.equal(bad.code, 'invalid_argument');
  assert.equal(badAgain.code, 'invalid_argument');
  assert.equal(badAgain.headers['idempotent-replayed'], 'true');
});

test('replays do not count against the quota', async () => {
  const account = await rest(t, key, { method: 'GET', path: '/v1/account' });
  const usedBefore = account.data.quota.used;
  await ingestRest('k-concurrent');
  await ingestGrpc('k-concurrent');
  const after = await rest(t, key, { method: 'GET', path: '/v1/account' });
  assert.equal(after.data.quota.used, usedBefore + 1, 'only the GetAccount call itself counted');
});

test('keys longer than 255 characters are refused', async () => {
  const o = await ingestRest('k'.repeat(256));
  assert.equal(o.code, 'invalid_argument');
  assert.ok(o.message.includes('Idempotency-Key'));
  assert.equal((await ingestRest('k'.repeat(255))).code, 'ok');
});

test('after 24 hours the same key executes anew, and expired entries are purged', async () => {
  const before = await revisionsOf();
  clock.advance(24 * 3600 * 1000 + 1000);
  const o = await ingestRest('k-concurrent');
  assert.equal(o.code, 'ok');
  assert.equal(o.headers['idempotent-replayed'], undefined);
  assert.notDeepEqual(await revisionsOf(), before);
  const purged = await t.service.ctx.idempotency.purgeExpired(clock.now());
  assert.ok(purged >= 4, `purged ${purged}`);
  const left = await t.service.ctx.database.db.selectFrom('idempotency').select('key').execute();
  assert.deepEqual(left.map((r) => r.key), ['k-concurrent']);
});

test('the client-streaming bulk ingest takes idempotency keys too (gRPC stream and REST NDJSON)', async () => {
  const lines = [0, 1].map((d) => ({ entity: 'store:idem', observations: [{ axis: 'demand', time: `2026-06-0${d + 1}T00:00:00Z`, value: d }] }));
  const viaGrpc = () =>
    new Promise<{ revision: string; replayed: boolean }>((resolve, reject) => {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${key}`);
      md.set('idempotency-key', 'k-bulk');
      let replayed = false;
      const call = entities.bulkIngestObservations(md, (err, res) => (err ? reject(err) : resolve({ revision: res.revision, replayed })));
      call.on('metadata', (m: grpc.Metadata) => (replayed = m.get('idempotent-replayed')[0] === 'true'));
      for (const l of lines) call.write({ entity: l.entity, observations: l.observations.map((o) => ({ ...o, revision: '0' })) });
      call.end();
    });
  const first = await viaGrpc();
  const again = await viaGrpc();
  assert.equal(first.replayed, false);
  assert.equal(again.replayed, true);
  assert.equal(again.revision, first.revision);
  const ndjson = lines.map((l) => JSON.stringify(l)).join('\n');
  const r = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: ndjson, headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': 'k-bulk' } });
  assert.equal(r.code, 'ok', r.message);
  assert.equal(r.headers['idempotent-replayed'], 'true', 'the same stream over REST replays the gRPC result');
  assert.equal(r.data.revision, first.revision);
  const changed = await rest(t, key, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: ndjson.replace('"value":1', '"value":2'), headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': 'k-bulk' } });
  assert.equal(changed.code, 'idempotency_key_reused');
});
