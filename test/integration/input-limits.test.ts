/**
 * Input limits (issue 11, defects 4 and 7): every string field has a length limit checked before
 * use, messages quote at most a short prefix of user input, an over-long `key_id` neither hangs
 * nor poisons a gRPC channel, and malformed protobuf is INVALID_ARGUMENT with our error details.
 * A gRPC message over the 4 MiB limit gets the same error contract as REST's 413 (ErrorInfo
 * `payload_too_large`, request-id), after authentication.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { EntityServiceClient, IngestObservationsRequest } from '../../gen/forecast/v1/entity_service.pb';
import { KeyServiceClient } from '../../gen/forecast/v1/key_service.pb';
import { MAX_STRING_CHARS } from '../../src/rpc/limits';
import { decodeErrorInfo } from '../../src/transport/grpc/status-details';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { frame, RawGrpc } from '../helpers/raw-grpc';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let keys: KeyServiceClient;
let entities: EntityServiceClient;
let accounts: AccountServiceClient;
let admin: string;
let raw: RawGrpc;

beforeAll(async () => {
  t = await startTestService();
  keys = t.client(KeyServiceClient);
  entities = t.client(EntityServiceClient);
  accounts = t.client(AccountServiceClient);
  admin = (await t.account('enterprise', ['keys:admin', 'forecast:read', 'data:write'])).key;
  raw = new RawGrpc(t.grpcAddress);
});
afterAll(async () => {
  raw.close();
  await t.close();
});

/** The error contract holds and the message stays short whatever the input was. */
function shortError(o: Outcome, code: string, field?: string): void {
  assert.equal(o.code, code, `${o.protocol}: ${o.message.slice(0, 200)}`);
  assert.ok(o.message.length <= 300, `${o.protocol} message of ${o.message.length} characters`);
  assert.match(o.requestId ?? '', /^req_/);
  if (field) assert.ok(o.message.startsWith(field), `${o.protocol}: "${o.message}" should name ${field}`);
}

describe('over-long strings', () => {
  test('a 40,000-character key_id: a quick short 400 on gRPC, and the channel keeps working', async () => {
    const id = 'k'.repeat(40_000);
    const [revoke, rotate] = await Promise.all([
      grpcCall(keys, keys.revokeKey, admin, { keyId: id }),
      grpcCall(keys, keys.rotateKey, admin, { keyId: id, gracePeriodSeconds: '0', expiresInSeconds: '0' }),
    ]);
    shortError(revoke, 'invalid_argument', 'key_id');
    shortError(rotate, 'invalid_argument', 'key_id');
    // other calls on the same channel (and the same client) still work
    const after = await Promise.all(Array.from({ length: 5 }, () => grpcCall(accounts, accounts.getAccount, admin, {})));
    for (const o of after) assert.equal(o.code, 'ok', o.message);
    assert.equal((await grpcCall(keys, keys.listKeys, admin, { pageSize: 1, cursor: '' })).code, 'ok');
  });

  test('a 10,000-character key_id in a REST path: 400 naming key_id, a short message', async () => {
    const o = await rest(t, admin, { method: 'POST', path: `/v1/keys/${'k'.repeat(10_000)}:revoke`, body: {} });
    shortError(o, 'invalid_argument', 'key_id');
  });

  test('a well-formed but unknown key id is 404 whose message quotes it', async () => {
    const id = 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    for (const o of [await rest(t, admin, { method: 'POST', path: `/v1/keys/${id}:revoke`, body: {} }), await grpcCall(keys, keys.revokeKey, admin, { keyId: id })]) {
      shortError(o, 'not_found');
      assert.ok(o.message.includes(id));
    }
  });

  test(`any string field over ${MAX_STRING_CHARS} characters is 400 naming it, before the endpoint runs (both protocols)`, async () => {
    const long = 'x'.repeat(MAX_STRING_CHARS + 1);
    const cases: [string, () => Promise<Outcome>, () => Promise<Outcome>][] = [
      ['display_name', () => rest(t, admin, { method: 'POST', path: '/v1/entities', body: { entity: 'store:a', display_name: long } }), () => grpcCall(entities, entities.createEntity, admin, { entity: 'store:a', displayName: long, frequency: '', seasonLength: 0, axes: [], parents: [] })],
      ['axes[0].unit', () => rest(t, admin, { method: 'POST', path: '/v1/entities', body: { entity: 'store:a', axes: [{ name: 'a', unit: long }] } }), () => grpcCall(entities, entities.createEntity, admin, { entity: 'store:a', displayName: '', frequency: '', seasonLength: 0, axes: [{ name: 'a', unit: long, kind: '' }], parents: [] })],
      ['cursor', () => rest(t, admin, { method: 'GET', path: `/v1/entities?cursor=${long}` }), () => grpcCall(entities, entities.listEntities, admin, { type: '', pageSize: 0, cursor: long })],
      ['name', () => rest(t, admin, { method: 'POST', path: '/v1/keys', body: { name: long } }), () => grpcCall(keys, keys.createKey, admin, { scopes: [], name: long, expiresInSeconds: '0' })],
      ['scopes[1]', () => rest(t, admin, { method: 'POST', path: '/v1/keys', body: { scopes: ['audit', long] } }), () => grpcCall(keys, keys.createKey, admin, { scopes: ['audit', long], name: '', expiresInSeconds: '0' })],
      ['email', () => rest(t, undefined, { method: 'POST', path: '/v1/signup', body: { email: long } }), () => grpcCall(accounts, accounts.signUp, undefined, { email: long })],
    ];
    for (const [field, viaRest, viaGrpc] of cases) {
      for (const o of [await viaRest(), await viaGrpc()]) shortError(o, 'invalid_argument', field);
    }
    assert.equal((await grpcCall(entities, entities.getEntity, admin, { entity: 'store:a' })).code, 'not_found', 'nothing was created');
  });

  test('an over-long entity id, axis or idempotency key is refused with a short message quoting a prefix', async () => {
    const entity = `store:${'e'.repeat(1500)}`;
    const cases = [
      await rest(t, admin, { method: 'GET', path: `/v1/entities/${entity}` }),
      await grpcCall(entities, entities.getEntity, admin, { entity }),
      await rest(t, admin, { method: 'POST', path: '/v1/entities', body: { entity: 'store:a', frequency: 'P1D', axes: [{ name: 'a'.repeat(1000) }] } }),
      await rest(t, admin, { method: 'POST', path: '/v1/keys', body: {}, headers: { 'idempotency-key': 'i'.repeat(1000) } }),
      await grpcCall(keys, keys.createKey, admin, { scopes: [], name: '', expiresInSeconds: '0' }, { 'idempotency-key': 'i'.repeat(1000) }),
    ];
    for (const o of cases) shortError(o, 'invalid_argument');
    assert.ok(cases[0].message.includes('…'), 'the quoted value is cut');
  });
});

describe('malformed protobuf on gRPC', () => {
  test('bytes that are not a request message: INVALID_ARGUMENT with ErrorInfo and request-id (after authentication)', async () => {
    const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]); // field 1, a length past the end
    const r = await raw.call('/forecast.v1.EntityService/CreateEntity', frame(garbage), { authorization: `Bearer ${admin}` });
    assert.equal(r.status, grpc.status.INVALID_ARGUMENT, r.message);
    assert.equal(r.reason, 'invalid_argument');
    assert.match(r.requestId ?? '', /^req_/);
    assert.match(r.message, /^request: /);
    const wrongWire = Buffer.from([0x0f]); // field 1 with wire type 7
    assert.equal((await raw.call('/forecast.v1.AccountService/GetAccount', frame(wrongWire), { authorization: `Bearer ${admin}` })).reason, 'invalid_argument');
    // without a key the answer is 401, whatever the body
    const anonymous = await raw.call('/forecast.v1.EntityService/CreateEntity', frame(garbage));
    assert.equal(anonymous.reason, 'unauthenticated');
  });

  test('a malformed message in a client stream names its position', async () => {
    const ok = await rest(t, admin, { method: 'POST', path: '/v1/entities', body: { entity: 'store:s', frequency: 'P1D', axes: [{ name: 'a' }] } });
    assert.equal(ok.code, 'ok', ok.message);
    const good = Buffer.from(IngestObservationsRequest.encode({ entity: 'store:s', observations: [{ axis: 'a', time: '2026-01-01T00:00:00Z', value: 1, revision: '0' }] }).finish());
    const r = await raw.call('/forecast.v1.EntityService/BulkIngestObservations', frame(good, Buffer.from([0x0a, 0x7f])), { authorization: `Bearer ${admin}` });
    assert.equal(r.status, grpc.status.INVALID_ARGUMENT, r.message);
    assert.equal(r.reason, 'invalid_argument');
    assert.match(r.message, /^messages\[1\]: /);
    const list = await rest(t, admin, { method: 'GET', path: '/v1/entities/store:s/observations' });
    assert.deepEqual(list.data.observations, [], 'nothing of the stream was stored');
  });
});

describe('oversized gRPC messages', () => {
  const MiB = 1024 * 1024;
  const big = 'x'.repeat(5 * MiB); // over the 4 MiB limit, under grpc-js's ceiling (4 × the limit)
  const create = (key: string | undefined) =>
    grpcCall(entities, entities.createEntity, key, { entity: 'store:big', displayName: big, frequency: 'P1D', seasonLength: 0, axes: [], parents: [] });

  test('a 5 MiB request: RESOURCE_EXHAUSTED with ErrorInfo payload_too_large and request-id, after authentication, as REST answers 413', async () => {
    const o = await create(admin);
    assert.equal(o.status, grpc.status.RESOURCE_EXHAUSTED, o.message);
    shortError(o, 'payload_too_large');
    assert.match(o.message, /^request \(\d+ bytes\) exceeds the limit of 4194304 bytes$/);
    assert.equal((await create(undefined)).code, 'unauthenticated', 'without a key the answer is 401, whatever the size');
    // the REST gateway's answer to an oversized body: the same code
    const r = await rest(t, admin, { method: 'POST', path: '/v1/entities', body: { entity: 'store:big', display_name: big } });
    assert.equal(r.code, 'payload_too_large');
    assert.equal(r.status, 413);
    // and the channel still works
    assert.equal((await grpcCall(accounts, accounts.getAccount, admin, {})).code, 'ok');
  });

  test('a message just under 4 MiB still reaches the endpoint checks (400 for its over-long field, not a size error)', async () => {
    const o = await grpcCall(entities, entities.createEntity, admin, { entity: 'store:big', displayName: 'x'.repeat(4 * MiB - 100), frequency: 'P1D', seasonLength: 0, axes: [], parents: [] });
    shortError(o, 'invalid_argument', 'display_name');
  });

  test('a 5 MiB message in a bulk stream: payload_too_large naming it, with request-id; nothing stored', async () => {
    const ok = await rest(t, admin, { method: 'POST', path: '/v1/entities', body: { entity: 'store:bigstream', frequency: 'P1D', axes: [{ name: 'a' }] } });
    assert.equal(ok.code, 'ok', ok.message);
    const md = new grpc.Metadata();
    md.set('authorization', `Bearer ${admin}`);
    const err = await new Promise<grpc.ServiceError | null>((resolve) => {
      const call = entities.bulkIngestObservations(md, (e) => resolve(e));
      call.write({ entity: 'store:bigstream', observations: [{ axis: 'a', time: '2026-01-01T00:00:00Z', value: 1, revision: '0' }] });
      call.write({ entity: 'store:bigstream', observations: [{ axis: big, time: '2026-01-02T00:00:00Z', value: 1, revision: '0' }] });
      call.end();
    });
    assert.equal(err?.code, grpc.status.RESOURCE_EXHAUSTED, err?.details);
    const details = err!.metadata.get('grpc-status-details-bin')[0] as Buffer;
    assert.equal(decodeErrorInfo(details).reason, 'payload_too_large');
    assert.match(String(err!.metadata.get('request-id')[0]), /^req_/);
    assert.match(err!.details, /^messages\[1\] \(\d+ bytes\) exceeds the limit of 4194304 bytes$/);
    const list = await rest(t, admin, { method: 'GET', path: '/v1/entities/store:bigstream/observations' });
    assert.deepEqual(list.data.observations, []);
  });
});
