/** Key management over the API (`keys:admin`), both protocols: create, list, rotate with grace, revoke. */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { KeyServiceClient } from '../../gen/forecast/v1/key_service.pb';
import { ManualClock } from '../../src/clock';
import { startTestService, type TestService } from '../helpers/service';
import { grpcCall, rest } from '../helpers/dual';

const clock = new ManualClock(Date.UTC(2026, 6, 1, 9));
let t: TestService;
let client: KeyServiceClient;
let admin: string;

beforeAll(async () => {
  t = await startTestService({ clock });
  client = t.client(KeyServiceClient);
  admin = (await t.account('enterprise', ['keys:admin', 'forecast:read'])).key;
});
afterAll(() => t.close());

const account = (k: string) => rest(t, k, { method: 'GET', path: '/v1/account' });

test('create over REST and gRPC: secret once, scopes, expiry; bad scopes are 400', async () => {
  const r = await rest(t, admin, { method: 'POST', path: '/v1/keys', body: { scopes: ['forecast:read'], name: 'ci', expires_in_seconds: 3600 } });
  assert.equal(r.code, 'ok', r.message);
  assert.match(r.data.api_key, /^fk_live_/);
  assert.equal(r.data.key.state, 'active');
  assert.deepEqual(r.data.key.scopes, ['forecast:read']);
  assert.equal(r.data.key.expire_time, '2026-07-01T10:00:00Z');
  assert.equal(r.data.api_key.startsWith(r.data.key.prefix), true);
  assert.equal((await account(r.data.api_key)).code, 'ok');
  const g = await grpcCall(client, client.createKey, admin, { scopes: [], name: '', expiresInSeconds: '0' });
  assert.deepEqual(g.data.key.scopes, ['forecast:read', 'data:write', 'audit', 'subscriptions']);
  const bad = await rest(t, admin, { method: 'POST', path: '/v1/keys', body: { scopes: ['root'] } });
  assert.equal(bad.code, 'invalid_argument');
  assert.ok(bad.message.includes('scopes[0]'));
  clock.advance(3600_000);
  assert.equal((await account(r.data.api_key)).code, 'unauthenticated');
});

test('without keys:admin every key method is 403', async () => {
  const plain = (await t.account('enterprise')).key;
  assert.equal((await rest(t, plain, { method: 'GET', path: '/v1/keys' })).code, 'permission_denied');
  assert.equal((await grpcCall(client, client.createKey, plain, { scopes: [], name: '', expiresInSeconds: '0' })).code, 'permission_denied');
});

test('list is paginated, newest first, and never shows secrets', async () => {
  const seen: any[] = [];
  let cursor = '';
  do {
    const o = await rest(t, admin, { method: 'GET', path: `/v1/keys?page_size=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` });
    assert.equal(o.code, 'ok', o.message);
    seen.push(...o.data.keys);
    cursor = o.data.next_cursor;
  } while (cursor);
  assert.equal(seen.length, 3);
  assert.ok(seen.every((k) => !('api_key' in k) && k.prefix.length === 12));
  // newest first (keys made at the same instant are ordered by id); each key exactly once
  const times = seen.map((k) => k.create_time);
  assert.deepEqual(times, [...times].sort().reverse());
  assert.equal(new Set(seen.map((k) => k.key_id)).size, 3);
  assert.deepEqual(seen.map((k) => k.state).sort(), ['active', 'active', 'expired']);
});

test('rotate: the replacement works at once, the old key until the grace period ends', async () => {
  const made = await grpcCall(client, client.createKey, admin, { scopes: ['forecast:read'], name: 'deploy', expiresInSeconds: '0' });
  const old = made.data.apiKey;
  const rotated = await rest(t, admin, { method: 'POST', path: `/v1/keys/${made.data.key.keyId}:rotate`, body: { grace_period_seconds: 600 } });
  assert.equal(rotated.code, 'ok', rotated.message);
  assert.equal(rotated.data.key.name, 'deploy');
  assert.deepEqual(rotated.data.key.scopes, ['forecast:read']);
  assert.equal(rotated.data.previous.expire_time, new Date(clock.now() + 600_000).toISOString().replace('.000Z', 'Z'));
  assert.equal((await account(old)).code, 'ok');
  assert.equal((await account(rotated.data.api_key)).code, 'ok');
  clock.advance(600_000);
  assert.equal((await account(old)).code, 'unauthenticated');
  assert.equal((await account(rotated.data.api_key)).code, 'ok');
  const again = await rest(t, admin, { method: 'POST', path: `/v1/keys/${made.data.key.keyId}:rotate`, body: {} });
  assert.equal(again.code, 'invalid_argument');
  const tooLong = await rest(t, admin, { method: 'POST', path: `/v1/keys/${rotated.data.key.key_id}:rotate`, body: { grace_period_seconds: 99999999 } });
  assert.equal(tooLong.code, 'invalid_argument');
});

test('revoke is immediate; another account’s key is 404', async () => {
  const made = await rest(t, admin, { method: 'POST', path: '/v1/keys', body: {} });
  const id = made.data.key.key_id;
  assert.equal((await account(made.data.api_key)).code, 'ok');
  const revoked = await grpcCall(client, client.revokeKey, admin, { keyId: id });
  assert.equal(revoked.data.key.state, 'revoked');
  assert.equal((await account(made.data.api_key)).code, 'unauthenticated');
  const other = (await t.account('enterprise', ['keys:admin'])).key;
  assert.equal((await rest(t, other, { method: 'POST', path: `/v1/keys/${id}:revoke`, body: {} })).code, 'not_found');
});
