/**
 * Authentication, scopes, tenancy and the error contract, with identical expectations over
 * REST and gRPC (API.md sections 3 and 4).
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import type { TestService } from '../helpers/service';
import { startWithEcho } from '../helpers/echo';
import { createLogger } from '../../src/log';
import { EchoServiceClient } from '../gen/forecast/testing/v1/echo_service.pb';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-key';
import * as http2 from 'node:http2';
import { makeGenericClientConstructor } from '@grpc/grpc-js';

let t: TestService;
let entities: EntityServiceClient;
let accounts: AccountServiceClient;
let keyA: string;
let keyB: string;
let echo: EchoServiceClient;
/** The service's log lines (JSON), to see what it kept for itself. */
const logLines: string[] = [];
/** What a broken endpoint throws: text that must never reach a client. */
const SECRET_CAUSE = 'SELECT password FROM accounts WHERE id = 7 failed: hunter2';

beforeAll(async () => {
  t = await startWithEcho(
    {
      shout: {
        access: 'public',
        async handle() {
          throw new Error(SECRET_CAUSE);
        },
      },
      oldEcho: { access: 'public', handle: async (req) => ({ name: req.name, tags: [], loud: false }) },
    },
    { log: createLogger('error', (line) => logLines.push(line)) },
  );
  echo = t.client(EchoServiceClient);
  entities = t.client(EntityServiceClient);
  accounts = t.client(AccountServiceClient);
  keyA = (await t.account('enterprise')).key;
  keyB = (await t.account('enterprise')).key;
  const created = await rest(t, keyA, { method: 'POST', path: '/v1/entities', body: { entity: 'store:berlin', frequency: 'P1D', axes: [{ name: 'demand', kind: 'count' }] } });
  assert.equal(created.code, 'ok', created.message);
});
afterAll(() => t.close());

/** Run one case over both protocols. */
async function both(key: string | undefined, restReq: Parameters<typeof rest>[2], grpcRun: (key: string | undefined) => Promise<Outcome>): Promise<Outcome[]> {
  return [await rest(t, key, restReq), await grpcRun(key)];
}
const getEntity = (entity: string, key: string | undefined) =>
  both(key, { method: 'GET', path: `/v1/entities/${entity}` }, (k) => grpcCall(entities, entities.getEntity, k, { entity }));

function expectError(outcomes: Outcome[], code: string, httpStatus: number, grpcStatus: number, messageIncludes?: string): void {
  for (const o of outcomes) {
    assert.equal(o.code, code, `${o.protocol}: ${o.message}`);
    assert.equal(o.status, o.protocol === 'rest' ? httpStatus : grpcStatus, `${o.protocol} status`);
    assert.match(o.requestId ?? '', /^req_[0-9A-Z]{26}$/, `${o.protocol} request id`);
    if (messageIncludes) assert.ok(o.message.includes(messageIncludes), `${o.protocol} message "${o.message}" should name ${messageIncludes}`);
    if (o.protocol === 'rest') assert.equal(o.data.request_id, o.requestId, 'body request_id equals the header');
  }
}

describe('authentication', () => {
  test('a valid key succeeds and every response carries Request-Id and API-Version', async () => {
    for (const o of await getEntity('store:berlin', keyA)) {
      assert.equal(o.code, 'ok');
      assert.match(o.requestId ?? '', /^req_/);
      assert.equal(o.headers['api-version'], '1.0.0');
      const e = o.protocol === 'rest' ? o.data : o.data.entity;
      assert.equal(e.entity, 'store:berlin');
    }
  });

  test('missing, malformed, unknown and checksum-broken keys are 401 unauthenticated', async () => {
    expectError(await getEntity('store:berlin', undefined), 'unauthenticated', 401, 16);
    const [r, g] = await getEntity('store:berlin', undefined);
    assert.match(r.headers['www-authenticate'], /^Bearer/);
    assert.match(g.headers['www-authenticate'], /^Bearer/, 'gRPC carries it in the trailers');
    expectError(await getEntity('store:berlin', 'not-a-key'), 'unauthenticated', 401, 16);
    const flipped = keyA.slice(0, 12) + (keyA[12] === 'a' ? 'b' : 'a') + keyA.slice(13);
    expectError(await getEntity('store:berlin', flipped), 'unauthenticated', 401, 16);
    // well-formed (checksum fine) but never issued
    expectError(await getEntity('store:berlin', generateApiKey()), 'unauthenticated', 401, 16);
  });

  test('a key with a stray space: REST trims it; gRPC (whose HTTP/2 layer drops such a value) says to look for the space', async () => {
    const r = await rest(t, undefined, { method: 'GET', path: '/v1/entities/store:berlin', headers: { authorization: `Bearer ${keyA} ` } });
    assert.equal(r.code, 'ok', r.message);
    for (const value of [`Bearer ${keyA} `, ` Bearer ${keyA}`]) {
      const g = await grpcCall(entities, entities.getEntity, undefined, { entity: 'store:berlin' }, { authorization: value });
      expectError([g], 'unauthenticated', 401, 16, 'leading or trailing space');
    }
    const none = await grpcCall(entities, entities.getEntity, undefined, { entity: 'store:berlin' });
    expectError([none], 'unauthenticated', 401, 16, 'missing API key');
  });

  test('a revoked key is refused at once; an expired key is refused', async () => {
    const { accountId, key } = await t.account('pro');
    assert.equal((await getEntity('store:none', key))[0].code, 'not_found');
    const created = await t.service.ctx.accounts.createKey(accountId, ['forecast:read'], Date.now() - 1000);
    expectError(await getEntity('store:none', created.apiKey), 'unauthenticated', 401, 16, 'expired');
    const found = await t.service.ctx.accounts.findByKeyHash(hashApiKey(key));
    assert.ok(await t.service.ctx.accounts.revokeKey(accountId, found!.key.id));
    expectError(await getEntity('store:none', key), 'unauthenticated', 401, 16, 'revoked');
  });

  test('a key without the scope is 403 permission_denied', async () => {
    const { accountId } = await t.account('enterprise');
    const readOnly = await t.service.ctx.accounts.createKey(accountId, ['forecast:read'], null);
    const body = { entity: 'store:x', frequency: 'P1D' };
    const out = await both(readOnly.apiKey, { method: 'POST', path: '/v1/entities', body }, (k) =>
      grpcCall(entities, entities.createEntity, k, { entity: 'store:x', frequency: 'P1D', displayName: '', seasonLength: 0, axes: [], parents: [] }),
    );
    expectError(out, 'permission_denied', 403, 7, 'data:write');
  });

  test('another account’s entity is 404, exactly like a nonexistent one', async () => {
    const other = await getEntity('store:berlin', keyB);
    const none = await getEntity('store:nowhere', keyB);
    expectError(other, 'not_found', 404, 5);
    expectError(none, 'not_found', 404, 5);
    assert.equal(other[0].message.replace('berlin', 'X'), none[0].message.replace('nowhere', 'X'));
  });

  test('GetVersion needs no key; GetAccount shows tier, quota and support', async () => {
    const version = await both(undefined, { method: 'GET', path: '/v1/version' }, (k) => grpcCall(accounts, accounts.getVersion, k, {}));
    for (const o of version) {
      assert.equal(o.code, 'ok');
      assert.equal(o.data.version, '1.0.0');
    }
    const { key } = await t.account('pro');
    const acct = await both(key, { method: 'GET', path: '/v1/account' }, (k) => grpcCall(accounts, accounts.getAccount, k, {}));
    const [r, g] = acct;
    assert.equal(r.data.tier, 'pro');
    assert.equal(r.data.support, 'email, 24 h response');
    assert.equal(r.data.quota.limit, 10000);
    assert.equal(r.data.quota.used, 0, 'reading the account is free');
    assert.equal(g.data.quota.used, 0);
    assert.equal(g.data.tier, 'pro');
    assert.equal(g.data.support, 'email, 24 h response');
    assert.equal(g.data.quota.limit, 10000);
  });
});

describe('input errors', () => {
  test('a malformed entity is 400 naming the field, on both protocols', async () => {
    expectError(await getEntity('Store:berlin', keyA), 'invalid_argument', 400, 3, 'entity');
  });

  test('a bad field value in a body is 400 naming it', async () => {
    const body = { entity: 'store:x', frequency: 'P2D' };
    const out = await both(keyA, { method: 'POST', path: '/v1/entities', body }, (k) =>
      grpcCall(entities, entities.createEntity, k, { entity: 'store:x', frequency: 'P2D', displayName: '', seasonLength: 0, axes: [], parents: [] }),
    );
    expectError(out, 'invalid_argument', 400, 3, 'frequency');
  });

  test('REST: unknown JSON field, wrong type, malformed JSON → 400 naming the problem', async () => {
    const unknown = await rest(t, keyA, { method: 'POST', path: '/v1/entities', body: { entity: 'store:x', frequency: 'P1D', colour: 'red' } });
    expectError([unknown], 'invalid_argument', 400, 3, 'colour');
    const wrongType = await rest(t, keyA, { method: 'POST', path: '/v1/entities', body: { entity: 'store:x', season_length: 'weekly' } });
    expectError([wrongType], 'invalid_argument', 400, 3, 'season_length');
    const malformed = await rest(t, keyA, { method: 'POST', path: '/v1/entities', rawBody: '{"entity": ', headers: { 'content-type': 'application/json' } });
    expectError([malformed], 'invalid_argument', 400, 3, 'malformed JSON');
    const notObject = await rest(t, keyA, { method: 'POST', path: '/v1/entities', body: [1, 2] });
    expectError([notObject], 'invalid_argument', 400, 3, 'JSON object');
    const badQuery = await rest(t, keyA, { method: 'GET', path: '/v1/entities?colour=red' });
    expectError([badQuery], 'invalid_argument', 400, 3, 'colour');
  });

  test('oversized request: REST 413 payload_too_large; gRPC RESOURCE_EXHAUSTED over 4 MiB', async () => {
    const big = 'x'.repeat(1024 * 1024 + 10);
    const r = await rest(t, keyA, { method: 'POST', path: '/v1/entities', body: { entity: 'store:x', display_name: big } });
    expectError([r], 'payload_too_large', 413, 8);
    const g = await grpcCall(entities, entities.createEntity, keyA, { entity: 'store:x', frequency: 'P1D', displayName: 'y'.repeat(5 * 1024 * 1024), seasonLength: 0, axes: [], parents: [] });
    assert.equal(g.status, 8); // RESOURCE_EXHAUSTED, refused by grpc-js before any handler
  });

  test('wrong content type: REST 415; gRPC refuses a non-gRPC content type', async () => {
    const r = await rest(t, keyA, { method: 'POST', path: '/v1/entities', rawBody: 'entity=store:x', headers: { 'content-type': 'text/plain' } });
    expectError([r], 'unsupported_media_type', 415, 3, 'application/json');
    const session = http2.connect(`http://${t.grpcAddress}`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = session.request({ ':method': 'POST', ':path': '/forecast.v1.EntityService/GetEntity', 'content-type': 'application/json' });
      req.on('response', (h) => resolve(Number(h[':status'])));
      req.on('error', reject);
      req.end('{}');
    });
    session.close();
    assert.equal(status, 415);
  });

  test('unknown route: REST 404 not_found (405 for a known path), gRPC UNIMPLEMENTED', async () => {
    expectError([await rest(t, keyA, { method: 'GET', path: '/v1/nothing-here' })], 'not_found', 404, 5);
    const wrongMethod = await rest(t, keyA, { method: 'PUT', path: '/v1/entities/store:berlin' });
    expectError([wrongMethod], 'method_not_allowed', 405, 12);
    assert.equal(wrongMethod.headers.allow, 'DELETE, GET, HEAD');
    const Ctor = makeGenericClientConstructor(
      { nope: { path: '/forecast.v1.EntityService/Nope', requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
      'Nope',
    );
    const client = t.client(Ctor as never) as any;
    const g = await grpcCall(client, client.nope, keyA, Buffer.alloc(0));
    assert.equal(g.status, 12);
  });

  test('an internal error keeps its cause out of the answer on the wire (both protocols) and in the log', async () => {
    const r = await rest(t, undefined, { method: 'POST', path: '/v1/testing/echo/x:shout', body: {} });
    const g = await grpcCall(echo, echo.shout, undefined, { name: 'x', text: '', times: 0, legacyNote: '' });
    expectError([r, g], 'internal', 500, 13);
    for (const o of [r, g]) assert.equal(o.message, 'internal error', o.protocol);
    // nothing of the cause anywhere in what the client received: body, headers, trailers, status details
    const wire = [JSON.stringify(r.data), JSON.stringify(r.headers), JSON.stringify(g.headers)].join('\n');
    for (const word of ['hunter2', 'password', 'SELECT', 'stack']) assert.ok(!wire.includes(word), `"${word}" reached the client`);
    const logged = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'internal error');
    assert.equal(logged.length, 2, 'both logged, with their cause');
    for (const l of logged) assert.equal(l.error.message, SECRET_CAUSE);
    assert.deepEqual(logged.map((l) => l.requestId).sort(), [r.requestId, g.requestId].sort(), 'the log names the request ids the client got');
  });
});
