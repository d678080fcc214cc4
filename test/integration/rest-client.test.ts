/**
 * The generated REST client (gen/rest_clients.ts, test/gen/rest_clients.ts) against the real
 * service: the test-only EchoService gets a client with no hand-written code; paginated lists
 * iterate over every item; the bulk ingest goes as NDJSON; every failure is one ApiError with the
 * answer's code, message, request id, status and Retry-After; per-call API key, idempotency key,
 * headers, timeout and abort signal. The integration tests' `rest()` also runs through it.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createRestClients, ApiError } from '../../gen/rest_clients';
import { createRestClients as createTestClients } from '../gen/rest_clients';
import { accountOf } from '../../src/rpc/context';
import { invalidArgument } from '../../src/rpc/errors';
import { startWithEcho } from '../helpers/echo';
import { rest, restCalls } from '../helpers/dual';
import type { TestService } from '../helpers/service';

let t: TestService;
let key: string;
let release: () => void = () => undefined;
let gate: Promise<void> = Promise.resolve();
let seenDeadline: number | undefined;

/** A fetch that records what went over the wire. */
function recorder() {
  const sent: { url: string; method: string; headers: Record<string, string>; body?: string }[] = [];
  const answers: { status: number; headers: Headers }[] = [];
  const fetchFn = async (url: string, init: RequestInit) => {
    sent.push({ url, method: String(init.method), headers: { ...(init.headers as Record<string, string>) }, body: init.body as string | undefined });
    const res = await fetch(url, init);
    answers.push({ status: res.status, headers: res.headers });
    return res;
  };
  return { sent, answers, fetch: fetchFn };
}

beforeAll(async () => {
  t = await startWithEcho({
    shout: {
      access: 'forecast:read',
      async handle(req, ctx) {
        accountOf(ctx);
        if (req.times < 0) throw invalidArgument('times', 'must not be negative');
        if (req.name === 'slow') {
          seenDeadline = ctx.deadline;
          await gate;
        }
        const trace = ctx.header('x-trace') ?? '';
        return { shout: `${req.name} ${req.text}${trace}`.toUpperCase().repeat(Math.max(1, req.times)) };
      },
    },
    oldEcho: {
      access: 'public',
      async handle(req) {
        return { name: req.name, tags: req.tags, loud: req.loud };
      },
    },
  });
  key = (await t.account()).key;
});
afterAll(async () => {
  release();
  await t.close();
});

test('a test-only proto method gets a client method with no hand-written code (path variable, custom verb, body, query)', async () => {
  const { echoService } = createTestClients({ baseUrl: t.baseUrl, apiKey: key });
  assert.deepEqual(await echoService.shout({ name: 'bob', text: 'hi', times: 2 }), { shout: 'BOB HIBOB HI' });
  const rec = recorder();
  const old = createTestClients({ baseUrl: t.baseUrl, fetch: rec.fetch }).echoService;
  assert.deepEqual(await old.oldEcho({ name: 'a b/c', tags: ['x', 'y z'], loud: true }), { name: 'a b/c', tags: ['x', 'y z'], loud: true });
  assert.equal(rec.sent[0].url, `${t.baseUrl}/v1/testing/old/a%20b%2Fc?tags=x&tags=y+z&loud=true`);
  assert.equal(rec.sent[0].method, 'GET');
  assert.equal(rec.sent[0].body, undefined);
});

test('the integration helper sends what the client can express through the client', async () => {
  const before = { ...restCalls };
  const r = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/eve:shout', body: { text: 'x' } });
  assert.equal(r.code, 'ok');
  const raw = await rest(t, key, { method: 'POST', path: '/v1/testing/echo/eve:shout', rawBody: '{"text": ', headers: { 'content-type': 'application/json' } });
  assert.equal(raw.code, 'invalid_argument');
  assert.deepEqual({ client: restCalls.client - before.client, fetch: restCalls.fetch - before.fetch }, { client: 1, fetch: 1 });
});

test('a paginated list is an async iterator over every item, page after page', async () => {
  const { entityService } = createRestClients({ baseUrl: t.baseUrl, apiKey: key });
  for (let i = 0; i < 7; i++) await entityService.createEntity({ entity: `sku:it${i}`, frequency: 'P1D', axes: [{ name: 'demand' }] });
  const rec = recorder();
  const listing = createRestClients({ baseUrl: t.baseUrl, apiKey: key, fetch: rec.fetch }).entityService;
  const seen: string[] = [];
  for await (const e of listing.listEntitiesAll({ type: 'sku', pageSize: 2 })) seen.push(e.entity);
  assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 6].map((i) => `sku:it${i}`));
  assert.equal(rec.sent.length, 4, 'pages of 2, 2, 2 and 1');
  assert.ok(rec.sent[1].url.includes('cursor='));
});

test('the client-streaming bulk ingest is sent as NDJSON, one line per message', async () => {
  const rec = recorder();
  const { entityService } = createRestClients({ baseUrl: t.baseUrl, apiKey: key, fetch: rec.fetch });
  await entityService.createEntity({ entity: 'store:bulk', frequency: 'P1D', axes: [{ name: 'demand' }] });
  async function* batches() {
    for (let b = 0; b < 3; b++) yield { entity: 'store:bulk', observations: [{ axis: 'demand', time: new Date(Date.UTC(2026, 0, 1 + b)).toISOString(), value: b }] };
  }
  const r = await entityService.bulkIngestObservations(batches());
  assert.deepEqual({ messages: r.messages, accepted: r.accepted }, { messages: 3, accepted: 3 });
  const sent = rec.sent[1];
  assert.equal(sent.headers['content-type'], 'application/x-ndjson');
  assert.equal(sent.body!.split('\n').filter(Boolean).length, 3);
  assert.deepEqual(JSON.parse(sent.body!.split('\n')[1]), { entity: 'store:bulk', observations: [{ axis: 'demand', time: '2026-01-02T00:00:00.000Z', value: 1 }] });
  const page = await entityService.listObservations({ entity: 'store:bulk' });
  assert.deepEqual(page.observations.map((o) => o.value), [0, 1, 2]);
  assert.equal(typeof page.dataRevision, 'string', 'int64 arrives as a decimal string, as ts-proto types it');
});

test('every failure is an ApiError with the answer’s code, message, request id and status', async () => {
  const { entityService } = createRestClients({ baseUrl: t.baseUrl, apiKey: key });
  const err = await entityService.getEntity({ entity: 'sku:nope' }).catch((e: unknown) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.code, 'not_found');
  assert.equal(err.status, 404);
  assert.match(err.requestId ?? '', /^req_/);
  assert.equal(err.headers?.get('request-id'), err.requestId);
  assert.match(err.message, /sku:nope/);
  const unauth = await createRestClients({ baseUrl: t.baseUrl }).entityService.getEntity({ entity: 'sku:it1' }).catch((e: unknown) => e);
  assert.ok(unauth instanceof ApiError && unauth.code === 'unauthenticated' && unauth.status === 401);
  const overridden = await entityService.getEntity({ entity: 'sku:it1' }, { apiKey: 'fk_live_wrong' }).catch((e: unknown) => e);
  assert.ok(overridden instanceof ApiError && overridden.code === 'unauthenticated', 'the per-call key overrides the client’s');
});

test('quota refusals carry Retry-After in seconds', async () => {
  const free = await t.account('free');
  const { entityService } = createRestClients({ baseUrl: t.baseUrl, apiKey: free.key });
  let refusal: unknown;
  for (let i = 0; i < 101 && !refusal; i++) refusal = await entityService.listEntities({}).then(() => undefined, (e: unknown) => e);
  assert.ok(refusal instanceof ApiError, 'the 101st call of a Free account is refused');
  assert.equal(refusal.code, 'quota_exceeded');
  assert.equal(refusal.status, 429);
  assert.equal(refusal.retryAfter, Number(refusal.headers?.get('retry-after')));
  assert.ok(refusal.retryAfter! > 0);
});

test('per-call idempotency key and extra headers', async () => {
  const rec = recorder();
  const { echoService } = createTestClients({ baseUrl: t.baseUrl, apiKey: key, fetch: rec.fetch, headers: { 'x-trace': '-c' } });
  const a = await echoService.shout({ name: 'i', text: 'x', times: 1 }, { idempotencyKey: 'client-k1', headers: { 'x-trace': '-1' } });
  const b = await echoService.shout({ name: 'i', text: 'x', times: 1 }, { idempotencyKey: 'client-k1', headers: { 'x-trace': '-2' } });
  assert.deepEqual(a, { shout: 'I X-1' }, 'the call’s header overrides the client’s');
  assert.deepEqual(b, a, 'the replay answers the first call');
  assert.equal(rec.answers[1].headers.get('idempotent-replayed'), 'true');
  const c = await echoService.shout({ name: 'i', text: 'x', times: 1 });
  assert.deepEqual(c, { shout: 'I X-C' });
});

test('a timeout gives up with deadline_exceeded and tells the service the deadline', async () => {
  gate = new Promise((r) => (release = r));
  const { echoService } = createTestClients({ baseUrl: t.baseUrl, apiKey: key });
  const err = await echoService.shout({ name: 'slow', text: '', times: 1 }, { timeoutMs: 200 }).catch((e: unknown) => e);
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.code, 'deadline_exceeded');
  assert.ok(err.status === 0 || err.status === 504, `status ${err.status}`);
  assert.ok(seenDeadline !== undefined, 'Grpc-Timeout reached the service');
  release();
});

test('an abort signal cancels the call; a refused connection is ApiError unavailable', async () => {
  gate = new Promise((r) => (release = r));
  const { echoService } = createTestClients({ baseUrl: t.baseUrl, apiKey: key });
  const controller = new AbortController();
  const pending = echoService.shout({ name: 'slow', text: '', times: 1 }, { signal: controller.signal });
  controller.abort(new Error('user went away'));
  await expect(pending).rejects.toThrow('user went away');
  release();
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const down = await createRestClients({ baseUrl: `http://127.0.0.1:${port}` }).accountService.getVersion({}).catch((e: unknown) => e);
  assert.ok(down instanceof ApiError);
  assert.deepEqual([down.code, down.status], ['unavailable', 0]);
});

test('a path field left empty is refused before anything is sent', async () => {
  const rec = recorder();
  const { entityService } = createRestClients({ baseUrl: t.baseUrl, apiKey: key, fetch: rec.fetch });
  const err = await entityService.getEntity({ entity: '' }).catch((e: unknown) => e);
  assert.ok(err instanceof ApiError);
  assert.deepEqual([err.code, err.status], ['invalid_argument', 0]);
  assert.match(err.message, /entity: required/);
  assert.equal(rec.sent.length, 0);
});

test('a "." or ".." path parameter is refused by the client, so it cannot reach another route (the entity survives)', async () => {
  const rec = recorder();
  const { entityService, subscriptionService } = createRestClients({ baseUrl: t.baseUrl, apiKey: key, fetch: rec.fetch });
  await entityService.createEntity({ entity: 'sku:victim', frequency: 'P1D', axes: [{ name: 'demand' }] });
  rec.sent.length = 0;
  // Before the fix this sent DELETE /v1/entities/sku:victim (fetch resolves `..`, also as %2E%2E).
  for (const kind of ['..', '.']) {
    const err = await entityService.deleteRelation({ kind, parent: 'entities', child: 'sku:victim' }).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError, String(err));
    assert.deepEqual([err.code, err.status], ['invalid_argument', 0]);
    assert.match(err.message, /^kind: /);
  }
  const sub = await subscriptionService.getSubscription({ subscriptionId: '..' }).catch((e: unknown) => e);
  assert.ok(sub instanceof ApiError && sub.code === 'invalid_argument' && sub.status === 0, String(sub));
  assert.equal(rec.sent.length, 0, 'nothing went over the wire');
  assert.equal((await entityService.getEntity({ entity: 'sku:victim' })).entity?.entity, 'sku:victim');
});

/** Compile-time checks (tsc in `make build`): REQUIRED fields are required in the client's input types. */
export function requiredFieldsAreTyped(): void {
  const { entityService, oracleService } = createRestClients({ baseUrl: 'http://127.0.0.1:1' });
  // @ts-expect-error `entity` is REQUIRED (google.api.field_behavior)
  void entityService.getEntity({});
  // @ts-expect-error an observation needs `axis` and `time`
  void entityService.ingestObservations({ entity: 'a:b', observations: [{ value: 1 }] });
  // Optional fields may be left out; a full ts-proto message is accepted as it is.
  void oracleService.query({ entity: 'a:b' });
  void entityService.getEntity({ entity: 'a:b' });
}
