/**
 * Key management over the API (`keys:admin`), every behaviour on both protocols: create, list
 * (paginated, no secrets), rotate with a grace period (the replacement keeps the old key's
 * expiry unless asked otherwise), revoke; a secret is never stored for idempotent replay (the
 * replay has it empty).
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { KeyServiceClient } from '../../gen/forecast/v1/key_service.pb';
import { ManualClock, formatTime } from '../../src/clock';
import { startTestService, type TestService } from '../helpers/service';
import { grpcCall, rest, type Outcome } from '../helpers/dual';

const clock = new ManualClock(Date.UTC(2026, 6, 1, 9));
let t: TestService;
let client: KeyServiceClient;

beforeAll(async () => {
  t = await startTestService({ clock });
  client = t.client(KeyServiceClient);
});
afterAll(() => t.close());

type Protocol = 'rest' | 'grpc';
const PROTOCOLS: Protocol[] = ['rest', 'grpc'];
const account = (k: string) => rest(t, k, { method: 'GET', path: '/v1/account' });
const admin = async () => (await t.account('enterprise', ['keys:admin', 'forecast:read'])).key;

/** A key record in one shape whichever protocol answered (REST snake_case, gRPC camelCase). */
function keyOf(o: Outcome, field: 'key' | 'previous' = 'key') {
  const k = o.data[field];
  return o.protocol === 'rest'
    ? { id: k.key_id, prefix: k.prefix, scopes: k.scopes, name: k.name, state: k.state, expire: k.expire_time, secret: o.data.api_key as string | undefined }
    : { id: k.keyId, prefix: k.prefix, scopes: k.scopes, name: k.name, state: k.state, expire: k.expireTime, secret: o.data.apiKey as string | undefined };
}

function create(p: Protocol, key: string, body: { scopes?: string[]; name?: string; expires_in_seconds?: number }, headers: Record<string, string> = {}): Promise<Outcome> {
  if (p === 'rest') return rest(t, key, { method: 'POST', path: '/v1/keys', body, headers });
  return grpcCall(client, client.createKey, key, { scopes: body.scopes ?? [], name: body.name ?? '', expiresInSeconds: String(body.expires_in_seconds ?? 0) }, headers);
}
function rotate(p: Protocol, key: string, id: string, body: { grace_period_seconds?: number; expires_in_seconds?: number }, headers: Record<string, string> = {}): Promise<Outcome> {
  if (p === 'rest') return rest(t, key, { method: 'POST', path: `/v1/keys/${id}:rotate`, body, headers });
  return grpcCall(client, client.rotateKey, key, { keyId: id, gracePeriodSeconds: String(body.grace_period_seconds ?? 0), expiresInSeconds: String(body.expires_in_seconds ?? 0) }, headers);
}
function revoke(p: Protocol, key: string, id: string): Promise<Outcome> {
  if (p === 'rest') return rest(t, key, { method: 'POST', path: `/v1/keys/${id}:revoke`, body: {} });
  return grpcCall(client, client.revokeKey, key, { keyId: id });
}
function list(p: Protocol, key: string, pageSize: number, cursor: string): Promise<Outcome> {
  if (p === 'rest') return rest(t, key, { method: 'GET', path: `/v1/keys?page_size=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` });
  return grpcCall(client, client.listKeys, key, { pageSize, cursor });
}

describe.each(PROTOCOLS)('%s', (p) => {
  test('a lifetime is exact: expire_time = create_time + expires_in_seconds, on create and rotate, however the clock moves between readings', async () => {
    const a = await admin();
    const frozen = clock.now.bind(clock);
    let ticks = 0;
    clock.now = () => frozen() + ticks++; // every reading 1 ms later than the one before
    try {
      const times = (o: Outcome) => {
        assert.equal(o.code, 'ok', o.message);
        const k = o.data.key;
        return [Date.parse(p === 'rest' ? k.create_time : k.createTime), Date.parse(p === 'rest' ? k.expire_time : k.expireTime)];
      };
      const made = await create(p, a, { expires_in_seconds: 3600 });
      const [created, expires] = times(made);
      assert.equal(expires - created, 3600_000);
      const [rotated, rotatedExpires] = times(await rotate(p, a, keyOf(made).id, { expires_in_seconds: 7200 }));
      assert.equal(rotatedExpires - rotated, 7200_000);
    } finally {
      clock.now = frozen;
    }
  });

  test('create: the secret once, scopes, expiry; the key works until it expires; bad scopes are 400', async () => {
    const a = await admin();
    const r = await create(p, a, { scopes: ['forecast:read'], name: 'ci', expires_in_seconds: 3600 });
    assert.equal(r.code, 'ok', r.message);
    const k = keyOf(r);
    assert.match(k.secret!, /^fk_live_/);
    assert.equal(k.state, 'active');
    assert.deepEqual(k.scopes, ['forecast:read']);
    assert.equal(k.expire, formatTime(clock.now() + 3600_000));
    assert.ok(k.secret!.startsWith(k.prefix));
    assert.equal((await account(k.secret!)).code, 'ok');
    const defaults = keyOf(await create(p, a, {}));
    assert.deepEqual(defaults.scopes, ['forecast:read', 'data:write', 'audit', 'subscriptions']);
    assert.equal(defaults.expire, '');
    const bad = await create(p, a, { scopes: ['root'] });
    assert.equal(bad.code, 'invalid_argument');
    assert.ok(bad.message.startsWith('scopes[0]'), bad.message);
    clock.advance(3600_000);
    assert.equal((await account(k.secret!)).code, 'unauthenticated');
  });

  test('without keys:admin every key method is 403', async () => {
    const plain = (await t.account('enterprise')).key;
    assert.equal((await list(p, plain, 0, '')).code, 'permission_denied');
    assert.equal((await create(p, plain, {})).code, 'permission_denied');
    assert.equal((await revoke(p, plain, 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV')).code, 'permission_denied');
  });

  test('list is paginated, newest first, each key once, never a secret', async () => {
    const a = await admin();
    for (let i = 0; i < 4; i++) {
      clock.advance(1000);
      assert.equal((await create(p, a, { name: `k${i}` })).code, 'ok');
    }
    const seen: any[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const o = await list(p, a, 2, cursor);
      assert.equal(o.code, 'ok', o.message);
      pages++;
      seen.push(...o.data.keys);
      cursor = p === 'rest' ? o.data.next_cursor : o.data.nextCursor;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(seen.length, 5, 'the admin key and four more');
    assert.ok(seen.every((k) => !('api_key' in k) && !('apiKey' in k) && k.prefix.length === 12));
    assert.deepEqual(seen.map((k) => k.name).slice(0, 4), ['k3', 'k2', 'k1', 'k0']);
    assert.equal(new Set(seen.map((k) => (p === 'rest' ? k.key_id : k.keyId))).size, 5);
  });

  test('rotate: the replacement works at once, the old key until the grace period ends; only an active key rotates', async () => {
    const a = await admin();
    const made = keyOf(await create(p, a, { scopes: ['forecast:read'], name: 'deploy' }));
    const rotated = await rotate(p, a, made.id, { grace_period_seconds: 600 });
    assert.equal(rotated.code, 'ok', rotated.message);
    const fresh = keyOf(rotated);
    assert.equal(fresh.name, 'deploy');
    assert.deepEqual(fresh.scopes, ['forecast:read']);
    assert.equal(fresh.expire, '', 'a key that never expired is replaced by one that never does');
    assert.equal(keyOf(rotated, 'previous').expire, formatTime(clock.now() + 600_000));
    assert.equal((await account(made.secret!)).code, 'ok');
    assert.equal((await account(fresh.secret!)).code, 'ok');
    clock.advance(600_000);
    assert.equal((await account(made.secret!)).code, 'unauthenticated');
    assert.equal((await account(fresh.secret!)).code, 'ok');
    assert.equal((await rotate(p, a, made.id, {})).code, 'invalid_argument', 'the expired old key cannot be rotated again');
    assert.equal((await rotate(p, a, fresh.id, { grace_period_seconds: 99999999 })).code, 'invalid_argument');
  });

  test('rotate keeps the old key’s expiry on the replacement, unless expires_in_seconds asks otherwise', async () => {
    const a = await admin();
    const thirtyDays = 30 * 86_400;
    const made = keyOf(await create(p, a, { expires_in_seconds: thirtyDays }));
    const end = formatTime(clock.now() + thirtyDays * 1000);
    clock.advance(86_400_000);
    const rotated = await rotate(p, a, made.id, { grace_period_seconds: 60 });
    assert.equal(keyOf(rotated).expire, end, 'the replacement ends when the old key would have');
    const again = await rotate(p, a, keyOf(rotated).id, { expires_in_seconds: 7200 });
    assert.equal(keyOf(again).expire, formatTime(clock.now() + 7200_000));
    assert.equal((await rotate(p, a, keyOf(again).id, { expires_in_seconds: -1 })).code, 'invalid_argument');
  });

  test('revoke is immediate; another account’s key is 404, exactly like a missing one', async () => {
    const a = await admin();
    const made = keyOf(await create(p, a, {}));
    assert.equal((await account(made.secret!)).code, 'ok');
    const revoked = await revoke(p, a, made.id);
    assert.equal(keyOf(revoked).state, 'revoked');
    assert.equal((await account(made.secret!)).code, 'unauthenticated');
    const other = await admin();
    const theirs = await revoke(p, other, made.id);
    const missing = await revoke(p, other, 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    assert.equal(theirs.code, 'not_found');
    assert.equal(missing.code, 'not_found');
    assert.equal(theirs.message.replace(made.id, 'X'), missing.message.replace('key_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'X'));
  });

  test('a key created or rotated with an Idempotency-Key: its secret is never stored, so the replay has the same key without it (found by QA: it replayed the secret)', async () => {
    const a = await admin();
    const first = await create(p, a, { name: 'idem' }, { 'idempotency-key': `idem-create-${p}` });
    assert.match(keyOf(first).secret!, /^fk_/);
    const replay = await create(p, a, { name: 'idem' }, { 'idempotency-key': `idem-create-${p}` });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual({ ...keyOf(replay), secret: undefined }, { ...keyOf(first), secret: undefined });
    assert.ok(!keyOf(replay).secret, 'no secret in the replay');
    const rotated = await rotate(p, a, keyOf(first).id, {}, { 'idempotency-key': `idem-rotate-${p}` });
    assert.match(keyOf(rotated).secret!, /^fk_/);
    const rotatedAgain = await rotate(p, a, keyOf(first).id, {}, { 'idempotency-key': `idem-rotate-${p}` });
    assert.equal(rotatedAgain.headers['idempotent-replayed'], 'true');
    assert.equal(keyOf(rotatedAgain).id, keyOf(rotated).id);
    assert.ok(!keyOf(rotatedAgain).secret, 'no secret in the replay');
    const rows = await t.service.ctx.database.db.selectFrom('idempotency').selectAll().where('key', 'in', [`idem-create-${p}`, `idem-rotate-${p}`]).execute();
    assert.equal(rows.length, 2);
    for (const row of rows) {
      const text = JSON.stringify(row);
      for (const secret of [keyOf(first).secret!, keyOf(rotated).secret!]) {
        assert.ok(!text.includes(secret), 'no secret in clear');
        assert.ok(!text.includes(Buffer.from(secret).toString('base64').slice(4, 40)), 'nor in base64');
        assert.ok(!text.includes(secret.slice(8, 30)), 'nor any long part of it');
      }
      assert.match(row.response!, /^sb1\./, 'sealed');
    }
  });
});
