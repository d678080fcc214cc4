/**
 * Deadlines (issue 11, defect 1): an expired or short deadline never crashes the process, and a
 * 504 `deadline_exceeded` means "not done": a call whose deadline has passed never starts, and a
 * write whose deadline passes before it commits is rolled back. Both protocols.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { GetEntityRequest, IngestObservationsRequest } from '../../gen/forecast/v1/entity_service.pb';
import { EchoServiceClient } from '../gen/forecast/testing/v1/echo_service.pb';
import { installSafetyNet } from '../../src/cli/safety-net';
import { createLogger } from '../../src/log';
import { ChildAccounts, startChildServer, type ChildServer } from '../helpers/child-server';
import { rest } from '../helpers/dual';
import { startWithEcho } from '../helpers/echo';
import { frame, RawGrpc } from '../helpers/raw-grpc';
import type { TestService } from '../helpers/service';

describe('the server process (a child process)', () => {
  let server: ChildServer;
  let accounts: ChildAccounts;
  let key: string;
  let raw: RawGrpc;
  const restCall = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    rest({ baseUrl: server.baseUrl } as TestService, key, { method, path, body, headers });

  beforeAll(async () => {
    server = await startChildServer();
    accounts = await ChildAccounts.open(server.databaseUrl);
    key = (await accounts.create('free')).key;
    raw = new RawGrpc(server.grpcAddress);
    const created = await restCall('POST', '/v1/entities', {}, { entity: 'store:d', frequency: 'P1D', axes: [{ name: 'demand' }] });
    assert.equal(created.code, 'ok', created.message);
  });
  afterAll(async () => {
    raw.close();
    await accounts.close();
    await server.stop();
  });

  test('expired and 1 ms deadlines on a failing read, 40 times per protocol: 504s, the process lives, nothing unhandled', async () => {
    const getMissing = frame(Buffer.from(GetEntityRequest.encode({ entity: 'store:missing' }).finish()));
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => [
        restCall('GET', '/v1/entities/store:missing', { 'grpc-timeout': i % 2 ? '0S' : '1m' }),
        raw.call('/forecast.v1.EntityService/GetEntity', getMissing, { authorization: `Bearer ${key}`, 'grpc-timeout': i % 2 ? '0n' : '1m' }),
      ]).flat(),
    );
    for (const o of outcomes) {
      if ('protocol' in o) assert.ok(o.code === 'deadline_exceeded' || o.code === 'not_found', `REST ${o.code}`);
      else assert.ok(o.status === grpc.status.DEADLINE_EXCEEDED || o.status === grpc.status.NOT_FOUND, `gRPC ${o.status} ${o.message}`);
    }
    assert.ok(outcomes.some((o) => ('protocol' in o ? o.code === 'deadline_exceeded' : o.status === grpc.status.DEADLINE_EXCEEDED)));
    // still alive and answering, and nothing went unhandled (the safety net would have logged it)
    const version = await rest({ baseUrl: server.baseUrl } as TestService, undefined, { method: 'GET', path: '/v1/version' });
    assert.equal(version.code, 'ok');
    assert.ok(server.alive());
    assert.deepEqual(server.errorLogs(), []);
  });

  test('a malformed Grpc-Timeout on REST is 400 naming the header (not silently no deadline), and writes nothing', async () => {
    const obs = { axis: 'demand', time: '2026-02-01T00:00:00Z', value: 1 };
    for (const value of ['abc', '10', '5s', '123456789S', '-1S', '1.5S', '10 S']) {
      const r = await restCall('POST', '/v1/entities/store:d/observations', { 'grpc-timeout': value }, { observations: [obs] });
      assert.equal(r.status, 400, `${value}: ${r.status} ${r.message}`);
      assert.equal(r.code, 'invalid_argument');
      assert.match(r.message, /^Grpc-Timeout: expected 1 to 8 digits and a unit/);
      assert.match(r.headers['ratelimit'] ?? '', /^"monthly";r=\d+;t=\d+$/, 'the refusal carries the RateLimit headers as every answer to a Free key does');
    }
    const list = await restCall('GET', '/v1/entities/store:d/observations?axis=demand');
    assert.equal(list.code, 'ok', list.message);
    assert.ok(!list.data.observations.some((o: { time: string }) => o.time === obs.time));
    assert.equal((await restCall('GET', '/v1/entities/store:d', { 'grpc-timeout': '30S' })).code, 'ok');
  });

  test('an ingest whose deadline has passed is refused with 504 and stores nothing (both protocols)', async () => {
    const obs = { axis: 'demand', time: '2026-01-01T00:00:00Z', value: 1 };
    const r = await restCall('POST', '/v1/entities/store:d/observations', { 'grpc-timeout': '0S' }, { observations: [obs] });
    assert.equal(r.code, 'deadline_exceeded');
    assert.equal(r.status, 504);
    const body = frame(Buffer.from(IngestObservationsRequest.encode({ entity: 'store:d', observations: [{ ...obs, revision: '0' }] }).finish()));
    const g = await raw.call('/forecast.v1.EntityService/IngestObservations', body, { authorization: `Bearer ${key}`, 'grpc-timeout': '0n' });
    assert.equal(g.status, grpc.status.DEADLINE_EXCEEDED);
    const list = await restCall('GET', '/v1/entities/store:d/observations');
    assert.equal(list.code, 'ok', list.message);
    assert.deepEqual(list.data.observations, []);
    assert.equal(list.data.data_revision, '0');
    assert.deepEqual(server.errorLogs(), []);
  });
});

describe('in flight (a test endpoint that waits, then writes or fails)', () => {
  let t: TestService;
  let echo: EchoServiceClient;
  /** Explicit synchronisation with the endpoint: it started, its signal aborted, it finished; the test opens its gate. */
  let hooks: ReturnType<typeof makeHooks>;
  const makeHooks = () => {
    const deferred = () => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    };
    return { started: deferred(), aborted: deferred(), gate: deferred(), finished: deferred() };
  };

  beforeAll(async () => {
    hooks = makeHooks();
    t = await startWithEcho({
      // A write: in a transaction bound to the call's signal, inserts a server secret named after
      // the call, then waits for the gate before committing.
      shout: {
        access: 'public',
        async handle(req, ctx) {
          const h = hooks;
          if (ctx.signal.aborted) h.aborted.resolve();
          else ctx.signal.addEventListener('abort', () => h.aborted.resolve());
          h.started.resolve();
          try {
            await t.service.ctx.database.transaction(async (trx) => {
              await trx.insertInto('server_secrets').values({ name: `deadline-test:${req.name}`, value: 'x' }).execute();
              await h.gate.promise;
            }, { signal: ctx.signal });
            return { shout: req.name };
          } finally {
            h.finished.resolve();
          }
        },
      },
      // A read: waits for the gate, then fails (as GetEntity of a missing entity does).
      oldEcho: {
        access: 'public',
        async handle() {
          const h = hooks;
          h.started.resolve();
          await h.gate.promise;
          h.finished.resolve();
          throw new Error('failed after its deadline');
        },
      },
    });
    echo = t.client(EchoServiceClient);
  });
  afterAll(() => t.close());

  const written = async (name: string) =>
    (await t.service.ctx.database.db.selectFrom('server_secrets').select('name').where('name', '=', `deadline-test:${name}`).execute()).length;
  /** Two turns of the event loop: a rejection nobody handles is reported by then. */
  const twoTurns = async () => {
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  };

  test('a write whose deadline passes before it commits is rolled back: 504 means not done (REST)', async () => {
    hooks = makeHooks();
    const call = rest(t, undefined, { method: 'POST', path: '/v1/testing/echo/late-rest:shout', body: {}, headers: { 'grpc-timeout': '300m' } });
    // the deadline passes while the endpoint waits (or the call ended early: then it must say why)
    const first = await Promise.race([hooks.aborted.promise.then(() => 'aborted'), call.then((o) => `answered ${o.code}`)]);
    assert.equal(first, 'aborted');
    hooks.gate.resolve();
    const o = await call;
    assert.equal(o.code, 'deadline_exceeded');
    assert.equal(o.status, 504);
    await hooks.finished.promise;
    assert.equal(await written('late-rest'), 0);
  });

  test('a write whose deadline passes before it commits is rolled back (gRPC)', async () => {
    hooks = makeHooks();
    const call = new Promise<grpc.ServiceError | null>((resolve) =>
      echo.shout({ name: 'late-grpc', text: '', times: 0, legacyNote: '' }, new grpc.Metadata(), { deadline: Date.now() + 300 }, (err) => resolve(err)),
    );
    const first = await Promise.race([hooks.started.promise.then(() => 'started'), call.then((e) => `answered ${e?.code}`)]);
    assert.equal(first, 'started', 'the endpoint runs before the deadline');
    await hooks.aborted.promise; // then the deadline passes while it waits
    assert.equal((await call)?.code, grpc.status.DEADLINE_EXCEEDED);
    hooks.gate.resolve();
    await hooks.finished.promise; // the server side ran on and refused to commit
    assert.equal(await written('late-grpc'), 0);
  });

  test('a write that commits in time answers its result', async () => {
    hooks = makeHooks();
    hooks.gate.resolve();
    const o = await rest(t, undefined, { method: 'POST', path: '/v1/testing/echo/in-time:shout', body: {}, headers: { 'grpc-timeout': '10S' } });
    assert.equal(o.code, 'ok', o.message);
    assert.equal(await written('in-time'), 1);
  });

  test('a read past its deadline answers 504 at once; its later failure is handled, not a crash', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      hooks = makeHooks();
      const call = rest(t, undefined, { method: 'GET', path: '/v1/testing/old/x', headers: { 'grpc-timeout': '300m' } });
      const first = await Promise.race([hooks.started.promise.then(() => 'started'), call.then((r) => `answered ${r.code}`)]);
      assert.equal(first, 'started', 'the endpoint runs before the deadline');
      const o = await call; // answered at the deadline while the endpoint still waits
      assert.equal(o.code, 'deadline_exceeded');
      assert.equal(o.status, 504);
      hooks.gate.resolve(); // the abandoned work now fails
      await hooks.finished.promise;
      await twoTurns();
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

test('the safety net logs unhandled rejections and uncaught exceptions and never exits', () => {
  const events = new EventEmitter();
  const lines: string[] = [];
  installSafetyNet(events as never, createLogger('error', (l) => lines.push(l)));
  events.emit('unhandledRejection', new Error('lost'));
  events.emit('uncaughtException', new Error('thrown'));
  assert.deepEqual(
    lines.map((l) => JSON.parse(l)).map((l) => [l.level, l.msg, l.error.message]),
    [
      ['error', 'unhandled rejection', 'lost'],
      ['error', 'uncaught exception', 'thrown'],
    ],
  );
});
