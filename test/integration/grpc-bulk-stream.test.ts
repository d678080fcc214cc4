/**
 * The gRPC bulk ingest stream over a real grpc-js client: "committed all or nothing as ONE data
 * revision when the stream closes" (entity_service.proto). A stream the client cancels, or whose
 * deadline passes before the client half-closes, stores nothing and uses no revision, also when
 * the cancel arrives after the last message was read but before the commit; a stream that
 * closes normally commits. A stream has a byte limit, as REST's NDJSON stream has.
 */
import { afterAll, beforeAll, beforeEach, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { EntityServiceClient, type BulkIngestObservationsRequest, type BulkIngestObservationsResponse } from '../../gen/forecast/v1/entity_service.pb';
import type { ClientStreamEndpoint } from '../../src/rpc/method';
import { ServiceError } from '../../src/rpc/errors';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';
import { rest } from '../helpers/dual';
import { startTestService, type TestService } from '../helpers/service';

const BULK = '/forecast.v1.EntityService/BulkIngestObservations';

let t: TestService;
let entities: EntityServiceClient;
let key: string;
let accountId: string;

/** A promise the test resolves from elsewhere. */
interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}
function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Synchronisation with the server: `received` resolves when the endpoint has read its first
 * message; `settled` with the pipeline's answer (the error code, or 'ok') once the call is over
 * on the server (committed or not). Reset before each test.
 */
let hooks: { received: Deferred<void>; settled: Deferred<string> };

beforeAll(async () => {
  t = await startTestService();
  entities = t.client(EntityServiceClient);
  ({ key, accountId } = await t.account('enterprise'));
  const o = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:bulk', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(o.code, 'ok', o.message);
  // The endpoint's view of the stream, wrapped: tell the test when the first message was read.
  const endpoint = t.service.pipeline.methods.get(BULK)!.endpoint as ClientStreamEndpoint<unknown, unknown>;
  const handleStream = endpoint.handleStream.bind(endpoint);
  endpoint.handleStream = (requests, ctx) =>
    handleStream(
      (async function* () {
        for await (const r of requests) {
          yield r;
          hooks.received.resolve();
        }
      })(),
      ctx,
    );
  // The last interceptor: sees the call's outcome once the endpoint is done.
  t.service.pipeline.use(async (call, next) => {
    if (call.entry.path !== BULK) return next();
    try {
      const response = await next();
      hooks.settled.resolve('ok');
      return response;
    } catch (err) {
      hooks.settled.resolve(ServiceError.from(err).code);
      throw err;
    }
  });
});
afterAll(() => t.close());
beforeEach(() => {
  hooks = { received: deferred(), settled: deferred<string>() };
});

const day = (i: number) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString().replace('.000Z', 'Z');
const message = (from: number, n = 10): BulkIngestObservationsRequest => ({
  entity: 'store:bulk',
  observations: Array.from({ length: n }, (_, i) => ({ axis: 'demand', time: day(from + i), value: from + i, revision: '0' })),
});

async function stored(): Promise<{ observations: unknown[]; revision: number }> {
  const o = await rest(t, key, { method: 'GET', path: '/v1/entities/store:bulk/observations?page_size=200' });
  assert.equal(o.code, 'ok', o.message);
  return { observations: o.data.observations, revision: await t.service.ctx.observations.latestRevision(accountId) };
}

/** Open a bulk stream; `done` settles with the client's view of the outcome. */
function open(options: grpc.CallOptions = {}) {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${key}`);
  let call!: grpc.ClientWritableStream<BulkIngestObservationsRequest>;
  const done = new Promise<{ err: grpc.ServiceError | null; res?: BulkIngestObservationsResponse }>((resolve) => {
    call = entities.bulkIngestObservations(md, options, (err, res) => resolve({ err, res }));
  });
  return { call, done };
}

describe('a stream that does not close normally stores nothing', () => {
  test('the client cancels after the server read a message: CANCELLED, nothing stored, the revision unchanged', async () => {
    const before = await stored();
    const { call, done } = open();
    call.write(message(0));
    await hooks.received.promise;
    call.cancel();
    const { err } = await done;
    assert.equal(err?.code, grpc.status.CANCELLED);
    assert.notEqual(await hooks.settled.promise, 'ok', 'the server must not commit a cancelled stream');
    assert.deepEqual(await stored(), before);
  });

  test('the deadline passes while the stream is open: DEADLINE_EXCEEDED, nothing stored, the revision unchanged', async () => {
    const before = await stored();
    const { call, done } = open({ deadline: Date.now() + 1500 });
    call.write(message(20));
    await hooks.received.promise;
    // never half-closed: the deadline ends it
    const { err } = await done;
    assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED, err?.details);
    // The client's grpc-js cancels at its deadline, a moment before the server's own (counted from
    // the header's arrival) passes: the server hears either first.
    assert.ok(['deadline_exceeded', 'unavailable'].includes(await hooks.settled.promise));
    assert.deepEqual(await stored(), before);
  });

  test('the cancel arrives after the last message was read, before the commit: not committed', async () => {
    const before = await stored();
    // Hold the commit until the server has seen the cancel.
    const observations = t.service.ctx.observations;
    const ingest = observations.ingest;
    const reached = deferred();
    const cancelled = deferred();
    observations.ingest = async (...args) => {
      reached.resolve();
      await cancelled.promise;
      return ingest.apply(observations, args);
    };
    try {
      const { call, done } = open();
      call.write(message(40));
      call.end();
      await reached.promise;
      call.cancel();
      const { err } = await done;
      assert.equal(err?.code, grpc.status.CANCELLED);
      // grpc-js tells the server on its next turns: give it those, then let the commit try.
      await new Promise((r) => setTimeout(r, 200));
      cancelled.resolve();
      assert.notEqual(await hooks.settled.promise, 'ok', 'the server must not commit a cancelled stream');
    } finally {
      observations.ingest = ingest;
    }
    assert.deepEqual(await stored(), before);
  });
});

test('a stream that closes normally commits all its messages as one new revision', async () => {
  const before = await stored();
  const { call, done } = open({ deadline: Date.now() + 60_000 });
  call.write(message(60));
  call.write(message(70));
  call.end();
  const { err, res } = await done;
  assert.equal(err, null, err?.details);
  assert.equal(await hooks.settled.promise, 'ok');
  assert.deepEqual([res!.accepted, res!.messages, Number(res!.revision)], [20, 2, before.revision + 1]);
  const after = await stored();
  assert.equal(after.observations.length, before.observations.length + 20);
  assert.equal(after.revision, before.revision + 1);
});

describe('a stream has a byte limit on both protocols (64 bodies: 64 KiB with MAX_BODY_BYTES=1024)', () => {
  let small: TestService;
  let smallKey: string;
  beforeAll(async () => {
    small = await startTestService({ env: { MAX_BODY_BYTES: '1024' } });
    smallKey = (await small.account('enterprise')).key;
    const o = await rest(small, smallKey, { method: 'POST', path: '/v1/entities', body: { entity: 'store:s', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    assert.equal(o.code, 'ok', o.message);
  });
  afterAll(() => small.close());

  // 40 messages of 10 rows: about 16 KiB of protobuf, 22 KiB of JSON; 200 of them are over 64 KiB either way
  const messages = (n: number) => Array.from({ length: n }, (_, m) => ({ ...message(m * 10), entity: 'store:s' }));

  test('gRPC: 413 payload_too_large (RESOURCE_EXHAUSTED) with request-id, an idempotency key (the stream is buffered) or not; nothing stored', async () => {
    const client = small.client(EntityServiceClient);
    for (const extra of [{}, { 'idempotency-key': 'k-big-stream' }]) {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${smallKey}`);
      for (const [k, v] of Object.entries(extra)) md.set(k, v);
      const err = await new Promise<grpc.ServiceError | null>((resolve) => {
        const call = client.bulkIngestObservations(md, (e) => resolve(e));
        call.on('error', () => undefined);
        for (const m of messages(200)) call.write(m);
        call.end();
      });
      assert.equal(err?.code, grpc.status.RESOURCE_EXHAUSTED, err?.details);
      assert.equal(decodeErrorInfo(err!.metadata.get('grpc-status-details-bin')[0] as Buffer).reason, 'payload_too_large');
      assert.match(String(err!.metadata.get('request-id')[0]), /^req_/);
    }
    const none = await rest(small, smallKey, { method: 'GET', path: '/v1/entities/store:s/observations' });
    assert.deepEqual(none.data.observations, []);
    const ok = await new Promise<grpc.ServiceError | null>((resolve) => {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${smallKey}`);
      const call = client.bulkIngestObservations(md, (e) => resolve(e));
      for (const m of messages(40)) call.write(m);
      call.end();
    });
    assert.equal(ok, null, 'a stream under the limit commits');
  });

  test('REST NDJSON: the same limit, 413', async () => {
    const o = await rest(small, smallKey, { method: 'POST', path: '/v1/observations:bulkIngest', rawBody: messages(200).map((m) => JSON.stringify({ entity: m.entity, observations: m.observations.map(({ revision: _, ...r }) => r) })).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(o.code, 'payload_too_large', o.message);
    assert.equal(o.status, 413);
  });
});
