/**
 * Idempotency keys (API.md section 11), every behaviour on both protocols: exactly-once under
 * concurrency, replay with Idempotent-Replayed, 422 on a different request, 409 while in flight,
 * keys scoped to the account and the method, the 24-hour window (injected clock), requests
 * refused before executing (400) and outcomes ≥ 500 not stored, executed 4xx outcomes replayed,
 * replays not counted, purge. Synchronised explicitly with the endpoint (no sleeps).
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { EchoServiceClient } from '../gen/forecast/testing/v1/echo_service.pb';
import { ManualClock } from '../../src/clock';
import { invalidArgument, NotFoundError } from '../../src/rpc/errors';
import type { TestService } from '../helpers/service';
import { startWithEcho } from '../helpers/echo';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { bodyOf, raw } from '../helpers/raw-http';

const clock = new ManualClock(Date.UTC(2026, 4, 10, 12));
let t: TestService;
let entities: EntityServiceClient;
let echo: EchoServiceClient;
let key: string;
let executions = 0;
/** The endpoint waits for this before answering; `entered` resolves when a call is inside it. */
let gate: Promise<void> = Promise.resolve();
let entered: () => void = () => undefined;

beforeAll(async () => {
  t = await startWithEcho(
    {
      shout: {
        access: 'forecast:read',
        async handle(req) {
          if (req.times === -400) throw invalidArgument('times', 'must not be -400');
          executions++;
          entered();
          await gate;
          if (req.times === -500) throw new Error('boom');
          if (req.times === -404) throw new NotFoundError('thing', req.name);
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

type Protocol = 'rest' | 'grpc';
const PROTOCOLS: Protocol[] = ['rest', 'grpc'];

const obs = [{ axis: 'demand', time: '2026-05-01T00:00:00Z', value: 3 }];
const ingest = (p: Protocol, k: string, value = 3, apiKey = key) =>
  p === 'rest'
    ? rest(t, apiKey, { method: 'POST', path: '/v1/entities/store:idem/observations', body: { observations: [{ ...obs[0], value }] }, headers: { 'idempotency-key': k } })
    : grpcCall(entities, entities.ingestObservations, apiKey, { entity: 'store:idem', observations: [{ ...obs[0], value, revision: '0' }] }, { 'idempotency-key': k });
const shout = (p: Protocol, k: string, name: string, times = 1, apiKey = key): Promise<Outcome> =>
  p === 'rest'
    ? rest(t, apiKey, { method: 'POST', path: `/v1/testing/echo/${name}:shout`, body: { times }, headers: { 'idempotency-key': k } })
    : grpcCall(echo, echo.shout, apiKey, { name, text: '', times, legacyNote: '' }, { 'idempotency-key': k });
const used = async (apiKey = key) => (await rest(t, apiKey, { method: 'GET', path: '/v1/account' })).data.quota.used as number;

async function valuesOf(): Promise<number[]> {
  const o = await rest(t, key, { method: 'GET', path: '/v1/entities/store:idem/observations' });
  return o.data.observations.map((x: any) => x.value);
}

async function revisionsOf(): Promise<string[]> {
  const o = await rest(t, key, { method: 'GET', path: '/v1/entities/store:idem/observations' });
  return o.data.observations.map((x: any) => x.revision);
}

test('50 concurrent requests with one key, over both protocols, execute the ingest exactly once', async () => {
  const outcomes: Outcome[] = await Promise.all(Array.from({ length: 50 }, (_, i) => ingest(i % 2 ? 'grpc' : 'rest', 'k-concurrent')));
  const ok = outcomes.filter((o) => o.code === 'ok');
  const inUse = outcomes.filter((o) => o.code === 'idempotency_key_in_use');
  assert.equal(ok.length + inUse.length, 50, outcomes.map((o) => o.code).join(','));
  for (const o of inUse) assert.equal(o.status, o.protocol === 'rest' ? 409 : grpc.status.ABORTED);
  const fresh = ok.filter((o) => o.headers['idempotent-replayed'] !== 'true');
  assert.equal(fresh.length, 1, 'exactly one execution');
  const revisions = new Set(ok.map((o) => String(o.data.revision)));
  assert.equal(revisions.size, 1, 'every replay returns the original revision');
  assert.deepEqual(await revisionsOf(), [...revisions]);
  for (const p of PROTOCOLS) {
    const again = await ingest(p, 'k-concurrent');
    assert.equal(again.code, 'ok');
    assert.equal(again.headers['idempotent-replayed'], 'true', p);
    assert.equal(String(again.data.revision), [...revisions][0]);
  }
});

describe.each(PROTOCOLS)('%s', (p) => {
  test('same key with a different request is 422 idempotency_key_reused', async () => {
    assert.equal((await ingest(p, `k-diff-${p}`)).code, 'ok');
    const r = await ingest(p, `k-diff-${p}`, 4);
    assert.equal(r.code, 'idempotency_key_reused');
    assert.equal(r.status, p === 'rest' ? 422 : grpc.status.INVALID_ARGUMENT);
  });

  test('a key is scoped to the method: the same key on another POST method runs it', async () => {
    const before = executions;
    const a = await shout(p, `k-diff-${p}`, 'a');
    assert.equal(a.code, 'ok');
    assert.equal(a.headers['idempotent-replayed'], undefined);
    assert.equal(executions, before + 1);
  });

  test('a key is scoped to the account: another account with the same key and request gets its own execution', async () => {
    const other = (await t.account('pro')).key;
    const mine = await shout(p, `k-tenant-${p}`, 'tenant');
    const theirs = await shout(p, `k-tenant-${p}`, 'tenant', 1, other);
    assert.equal(theirs.code, 'ok');
    assert.equal(theirs.headers['idempotent-replayed'], undefined, 'not my stored response');
    assert.notEqual(theirs.data.shout, mine.data.shout);
    assert.equal((await shout(p, `k-tenant-${p}`, 'tenant', 1, other)).data.shout, theirs.data.shout, 'and theirs replays for them');
  });

  test('while the first call runs, a second gets 409; after it ends, a replay', async () => {
    let release!: () => void;
    gate = new Promise((r) => (release = r));
    const inside = new Promise<void>((r) => (entered = r));
    const first = shout(p, `k-slow-${p}`, 'slow');
    await inside;
    const second = await shout(p === 'rest' ? 'grpc' : 'rest', `k-slow-${p}`, 'slow');
    assert.equal(second.code, 'idempotency_key_in_use');
    release();
    gate = Promise.resolve();
    const done = await first;
    const replay = await shout(p, `k-slow-${p}`, 'slow');
    assert.equal(replay.data.shout, done.data.shout);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });

  test('outcomes with status ≥ 500 are not stored: the retry executes', async () => {
    const before = executions;
    assert.equal((await shout(p, `k-500-${p}`, 'x', -500)).code, 'internal');
    assert.equal((await shout(p, `k-500-${p}`, 'x', -500)).code, 'internal');
    assert.equal(executions - before, 2, 'a 500 is retried for real');
  });

  test('a request refused by validation (400) does not burn the key: the corrected retry executes', async () => {
    const refused = await shout(p, `k-400b-${p}`, 'v', -400);
    assert.equal(refused.code, 'invalid_argument');
    const corrected = await shout(p, `k-400b-${p}`, 'v', 1);
    assert.equal(corrected.code, 'ok', 'the corrected request runs under the same key');
    assert.equal(corrected.headers['idempotent-replayed'], undefined);
    // a malformed request (refused before the endpoint) neither
    const malformed =
      p === 'rest'
        ? await rest(t, key, { method: 'POST', path: '/v1/entities/store:idem/observations', body: { observations: [{ axis: 'nope', time: obs[0].time, value: 1 }] }, headers: { 'idempotency-key': `k-400c-${p}` } })
        : await grpcCall(entities, entities.ingestObservations, key, { entity: 'store:idem', observations: [{ axis: 'nope', time: obs[0].time, value: 1, revision: '0' }] }, { 'idempotency-key': `k-400c-${p}` });
    assert.equal(malformed.code, 'invalid_argument');
    const fixed = await ingest(p, `k-400c-${p}`, 9);
    assert.equal(fixed.code, 'ok', fixed.message);
    assert.equal(fixed.headers['idempotent-replayed'], undefined);
  });

  test('an executed 4xx outcome (404) is stored and replayed', async () => {
    const before = executions;
    const a = await shout(p, `k-404-${p}`, 'gone', -404);
    const b = await shout(p, `k-404-${p}`, 'gone', -404);
    assert.equal(a.code, 'not_found');
    assert.equal(b.code, 'not_found');
    assert.equal(b.headers['idempotent-replayed'], 'true');
    assert.equal(executions - before, 1);
  });

  test('replays do not count against the quota', async () => {
    const usedBefore = await used();
    await ingest(p, 'k-concurrent');
    await shout(p, `k-404-${p}`, 'gone', -404);
    assert.equal(await used(), usedBefore, 'neither replay counted');
  });

  test('keys longer than 255 characters are refused; 255 are fine', async () => {
    const o = await ingest(p, 'k'.repeat(256));
    assert.equal(o.code, 'invalid_argument');
    assert.ok(o.message.startsWith('Idempotency-Key'), o.message);
    assert.equal((await ingest(p, `${p}${'k'.repeat(251)}`)).code, 'ok');
  });
});

test('a key sent on two header lines is refused before the request runs; two gRPC entries are one key, stable on retry', async () => {
  const body = JSON.stringify({ observations: [{ ...obs[0], value: 41 }] });
  const answer = await raw(
    t.service.httpPort,
    `POST /v1/entities/store:idem/observations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: k-twice-a\r\nIdempotency-Key: k-twice-b\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  assert.match(answer, /^HTTP\/1\.1 400 /);
  assert.equal(bodyOf(answer).code, 'invalid_argument');
  assert.match(bodyOf(answer).message, /^Idempotency-Key: was sent 2 times/);
  assert.ok(!(await valuesOf()).includes(41), 'the request was not applied');

  // Node's HTTP/2 layer joins repeated header fields into one before grpc-js sees them, so the
  // server cannot tell two entries from one key containing ", ": they act as that key, the same
  // on every retry of the same metadata (applied once, then replayed).
  const send = () => {
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${key}`);
    md.add('idempotency-key', 'k-twice-c');
    md.add('idempotency-key', 'k-twice-d');
    return new Promise<string | undefined>((resolve, reject) => {
      const call = entities.ingestObservations({ entity: 'store:idem', observations: [{ ...obs[0], value: 42, revision: '0' }] }, md, (err) => err && reject(err));
      call.on('metadata', (m) => resolve(m.get('idempotent-replayed')[0]?.toString()));
    });
  };
  assert.equal(await send(), undefined);
  assert.equal(await send(), 'true');
  assert.equal((await valuesOf()).filter((v) => v === 42).length, 1);
});

test('the window is 24 hours: a replay just before its end, a new execution after; expired entries are purged', async () => {
  const before = await revisionsOf();
  clock.advance(24 * 3600 * 1000 - 60_000); // 23 h 59 min after the first calls
  for (const p of PROTOCOLS) {
    const o = await ingest(p, 'k-concurrent');
    assert.equal(o.headers['idempotent-replayed'], 'true', `${p}: still within the window`);
  }
  assert.deepEqual(await revisionsOf(), before);
  clock.advance(61_000);
  const o = await ingest('grpc', 'k-concurrent');
  assert.equal(o.code, 'ok');
  assert.equal(o.headers['idempotent-replayed'], undefined);
  assert.notDeepEqual(await revisionsOf(), before);
  const purged = await t.service.ctx.idempotency.purgeExpired(clock.now());
  assert.ok(purged >= 10, `purged ${purged}`);
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
