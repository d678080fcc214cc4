/**
 * Monthly quotas (API.md section 12) on both protocols: exact under concurrency (across two
 * processes: two-processes.test.ts), 429 with Retry-After, RateLimit headers, the month boundary
 * via an injected clock, reads of the account itself free and working over quota, quota
 * refusals never stored under an idempotency key.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { ManualClock } from '../../src/clock';
import { startTestService, type TestService } from '../helpers/service';
import { grpcCall, rest, type Outcome } from '../helpers/dual';

const clock = new ManualClock(Date.UTC(2026, 10, 30, 23, 0, 0)); // one hour before December
let t: TestService;
let accounts: AccountServiceClient;
let entities: EntityServiceClient;

beforeAll(async () => {
  t = await startTestService({ clock });
  accounts = t.client(AccountServiceClient);
  entities = t.client(EntityServiceClient);
});
afterAll(() => t.close());

/** A counted call (ListEntities), REST for even i, gRPC for odd. */
const counted = (key: string, i: number): Promise<Outcome> =>
  i % 2 === 0 ? rest(t, key, { method: 'GET', path: '/v1/entities' }) : grpcCall(entities, entities.listEntities, key, { type: '', pageSize: 0, cursor: '' });
/** GetAccount on both protocols. */
const account = async (key: string): Promise<Outcome[]> => [await rest(t, key, { method: 'GET', path: '/v1/account' }), await grpcCall(accounts, accounts.getAccount, key, {})];
const used = (o: Outcome) => (o.protocol === 'rest' ? o.data.quota.used : o.data.quota.used);

test('Free tier: of 300 concurrent mixed REST/gRPC requests exactly 100 succeed, 200 get 429 with Retry-After; a new month starts afresh', async () => {
  const { key } = await t.account('free');
  const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => counted(key, i)));
  const ok = outcomes.filter((o) => o.code === 'ok');
  const limited = outcomes.filter((o) => o.code === 'quota_exceeded');
  assert.equal(ok.length, 100);
  assert.equal(limited.length, 200);
  const secondsToDecember = 3600;
  for (const o of limited) {
    assert.equal(o.status, o.protocol === 'rest' ? 429 : 8);
    assert.equal(o.headers['retry-after'], String(secondsToDecember), `${o.protocol} retry-after`);
    assert.equal(o.headers['ratelimit'], `"monthly";r=0;t=${secondsToDecember}`);
    // the reset time written as every timestamp of the API is (GetAccount's reset_time alike)
    if (o.protocol === 'rest') assert.equal(o.data.details.reset_time, '2026-12-01T00:00:00Z');
    assert.match(o.message, /it resets at 2026-12-01T00:00:00Z$/);
  }
  assert.ok(limited.some((o) => o.protocol === 'grpc') && limited.some((o) => o.protocol === 'rest'));
  // the remaining counts in the successes are a permutation of 99..0: each call counted once
  const remaining = ok.map((o) => Number(/r=(\d+)/.exec(o.headers['ratelimit'])![1])).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 100 }, (_, i) => i));
  for (const o of ok) assert.equal(o.headers['ratelimit-policy'], `"monthly";q=100;w=${30 * 86400}`);

  clock.set(Date.UTC(2026, 11, 1, 0, 0, 1)); // December
  const fresh = await counted(key, 0);
  assert.equal(fresh.code, 'ok');
  assert.equal(fresh.headers['ratelimit-policy'], `"monthly";q=100;w=${31 * 86400}`);
  const g = await counted(key, 1);
  assert.equal(g.code, 'ok');
  assert.equal(g.headers['ratelimit'], `"monthly";r=98;t=${31 * 86400 - 1}`);
  for (const o of await account(key)) {
    assert.equal(used(o), 2, o.protocol);
    assert.equal(o.protocol === 'rest' ? o.data.quota.reset_time : o.data.quota.resetTime, '2027-01-01T00:00:00Z');
  }
});

test('over quota, GetAccount and GetVersion still answer on both protocols, with RateLimit headers, and count nothing', async () => {
  const { key } = await t.account('free');
  const all = await Promise.all(Array.from({ length: 101 }, (_, i) => counted(key, i)));
  assert.equal(all.filter((o) => o.code === 'quota_exceeded').length, 1);
  for (let round = 0; round < 3; round++) {
    for (const o of await account(key)) {
      assert.equal(o.code, 'ok', `${o.protocol}: ${o.message}`);
      assert.equal(used(o), 100);
      assert.equal(o.data.quota.remaining, 0);
      assert.match(o.headers['ratelimit'], /^"monthly";r=0;t=\d+$/, o.protocol);
      assert.match(o.headers['ratelimit-policy'], /^"monthly";q=100;w=\d+$/);
    }
    const version = [await rest(t, key, { method: 'GET', path: '/v1/version' }), await grpcCall(accounts, accounts.getVersion, key, {})];
    for (const o of version) assert.equal(o.code, 'ok', o.protocol);
  }
  assert.equal((await counted(key, 1)).code, 'quota_exceeded', 'the free reads did not change the count');
});

test('unauthenticated requests do not count; enterprise has no limit headers (both protocols)', async () => {
  const { key } = await t.account('pro');
  await rest(t, undefined, { method: 'GET', path: '/v1/entities' });
  await grpcCall(entities, entities.listEntities, undefined, { type: '', pageSize: 0, cursor: '' });
  const wrong = key.slice(0, -1) + (key.endsWith('x') ? 'y' : 'x'); // always differs from the real key
  assert.equal((await counted(wrong, 0)).code, 'unauthenticated');
  assert.equal((await counted(wrong, 1)).code, 'unauthenticated');
  assert.equal((await counted(key, 0)).code, 'ok');
  for (const o of await account(key)) {
    assert.equal(used(o), 1, o.protocol);
    assert.equal(o.data.quota.remaining, 9999);
  }
  const ent = await t.account('enterprise');
  for (const o of [...(await account(ent.key)), await counted(ent.key, 0), await counted(ent.key, 1)]) {
    assert.equal(o.code, 'ok');
    assert.equal(o.headers['ratelimit'], undefined, o.protocol);
    assert.equal(o.headers['ratelimit-policy'], undefined, o.protocol);
  }
  const [e] = await account(ent.key);
  assert.equal(e.data.quota.unlimited, true);
  assert.equal(e.data.quota.used, 2, 'enterprise calls are counted for reporting');
});

test('a quota refusal is never stored under an idempotency key: minutes later, in the next month, the same key executes (both protocols)', async () => {
  // half an hour before February: the key's 24-hour window is still open when the quota resets
  clock.set(Date.UTC(2027, 0, 31, 23, 30));
  const { key } = await t.account('free');
  await Promise.all(Array.from({ length: 100 }, (_, i) => counted(key, i)));
  const body = { entity: 'store:q', frequency: 'P1D', axes: [{ name: 'demand' }] };
  const viaRest = () => rest(t, key, { method: 'POST', path: '/v1/entities', body, headers: { 'idempotency-key': 'q-rest' } });
  const viaGrpc = () =>
    grpcCall(entities, entities.createEntity, key, { entity: 'store:q2', displayName: '', frequency: 'P1D', seasonLength: 0, axes: [{ name: 'demand', unit: '', kind: '' }], parents: [] }, { 'idempotency-key': 'q-grpc' });
  assert.equal((await viaRest()).code, 'quota_exceeded');
  assert.equal((await viaGrpc()).code, 'quota_exceeded');
  clock.set(Date.UTC(2027, 1, 1, 0, 0, 1)); // February: quota available again
  for (const o of [await viaRest(), await viaGrpc()]) {
    assert.equal(o.code, 'ok', `${o.protocol}: ${o.message}`);
    assert.equal(o.headers['idempotent-replayed'], undefined, `${o.protocol}: executed, not a replay`);
  }
  assert.equal((await viaRest()).headers['idempotent-replayed'], 'true', 'and now stored');
});

test('a tier change by the operator applies at once (both protocols)', async () => {
  const { accountId, key } = await t.account('free');
  await t.service.ctx.accounts.setTier(accountId, 'pro');
  for (const o of await account(key)) {
    assert.equal(o.data.tier, 'pro');
    assert.equal(o.data.quota.limit, 10000);
    assert.match(o.headers['ratelimit-policy'], /^"monthly";q=10000;w=\d+$/, o.protocol);
  }
});

test('every answer to a Free or Pro key carries RateLimit-Policy and RateLimit, counted or not: GetVersion, GetAccount, 400 before the handler, 403, 404, a replay (both protocols); Enterprise and unauthenticated answers carry neither', async () => {
  clock.set(Date.UTC(2027, 2, 10, 0, 0, 0)); // March (31 days), 22 days before April
  const toReset = 22 * 86400;
  const long = 'x'.repeat(3000); // over the 2,048-character limit, refused while decoding
  const cases = (key: string): (() => Promise<Outcome>)[] => [
    () => rest(t, key, { method: 'GET', path: '/v1/version' }),
    () => grpcCall(accounts, accounts.getVersion, key, {}),
    () => rest(t, key, { method: 'GET', path: '/v1/account' }),
    () => grpcCall(accounts, accounts.getAccount, key, {}),
    () => rest(t, key, { method: 'GET', path: '/v1/entities?bogus=1' }), // 400 decoding the request
    () => grpcCall(entities, entities.getEntity, key, { entity: long }), // the same, over gRPC
    () => rest(t, key, { method: 'GET', path: '/v1/entities/store:nowhere' }), // 404 from the endpoint
    () => grpcCall(entities, entities.getEntity, key, { entity: 'store:nowhere' }),
  ];
  const expect = [
    ['ok', false],
    ['ok', false],
    ['ok', false],
    ['ok', false],
    ['invalid_argument', false],
    ['invalid_argument', false],
    ['not_found', true],
    ['not_found', true],
  ] as const;
  for (const [tier, limit] of [['free', 100], ['pro', 10000]] as const) {
    const { key } = await t.account(tier);
    let counted = 0;
    // one at a time, so that each answer shows the count as it stands
    for (const [i, call] of cases(key).entries()) {
      const o = await call();
      assert.equal(o.code, expect[i][0], `${tier} case ${i} ${o.protocol}: ${o.message}`);
      if (expect[i][1]) counted++;
      assert.equal(o.headers['ratelimit-policy'], `"monthly";q=${limit};w=${31 * 86400}`, `${tier} case ${i} ${o.protocol}`);
      assert.equal(o.headers['ratelimit'], `"monthly";r=${limit - counted};t=${toReset}`, `${tier} case ${i} ${o.protocol}`);
    }
    // a key without the scope: 403, refused before the count
    const readOnly = await t.account(tier, ['forecast:read']);
    for (const o of [
      await rest(t, readOnly.key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:rl', frequency: 'P1D', axes: [{ name: 'demand' }] } }),
      await grpcCall(entities, entities.createEntity, readOnly.key, { entity: 'store:rl', displayName: '', frequency: 'P1D', seasonLength: 0, axes: [{ name: 'demand', unit: '', kind: '' }], parents: [] }),
    ]) {
      assert.equal(o.code, 'permission_denied', o.protocol);
      assert.equal(o.headers['ratelimit'], `"monthly";r=${limit};t=${toReset}`, `403 ${o.protocol}`);
    }
    // a stored 404 (counted) and its replay (not counted)
    const obs = { axis: 'demand', time: '2027-03-01T00:00:00Z', value: 1 };
    const ingest = (protocol: 'rest' | 'grpc') =>
      protocol === 'rest'
        ? rest(t, key, { method: 'POST', path: '/v1/entities/store:nowhere/observations', body: { observations: [obs] }, headers: { 'idempotency-key': 'rl-rest' } })
        : grpcCall(entities, entities.ingestObservations, key, { entity: 'store:nowhere', observations: [{ ...obs, revision: '0' }] }, { 'idempotency-key': 'rl-grpc' });
    for (const protocol of ['rest', 'grpc'] as const) {
      const first = await ingest(protocol);
      assert.equal(first.code, 'not_found', `${protocol}: ${first.message}`);
      counted++;
      assert.equal(first.headers['ratelimit'], `"monthly";r=${limit - counted};t=${toReset}`, protocol);
      const replay = await ingest(protocol);
      assert.equal(replay.headers['idempotent-replayed'], 'true', protocol);
      assert.equal(replay.headers['ratelimit'], `"monthly";r=${limit - counted};t=${toReset}`, `replay ${protocol}`);
    }
  }
  const ent = await t.account('enterprise');
  for (const o of await Promise.all([...cases(ent.key), ...cases('fk_live_not-a-key')].map((call) => call()))) {
    assert.equal(o.headers['ratelimit'], undefined, o.protocol);
    assert.equal(o.headers['ratelimit-policy'], undefined, o.protocol);
  }
});
