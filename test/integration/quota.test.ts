/**
 * Monthly quotas (API.md section 12): exact under concurrency across both protocols, 429 with
 * Retry-After, RateLimit headers on both protocols, and the month boundary via an injected clock.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { ManualClock } from '../../src/clock';
import { startTestService, type TestService } from '../helpers/service';
import { grpcCall, rest, type Outcome } from '../helpers/dual';

const clock = new ManualClock(Date.UTC(2026, 10, 30, 23, 0, 0)); // one hour before December
let t: TestService;
let client: AccountServiceClient;

beforeAll(async () => {
  t = await startTestService({ clock });
  client = t.client(AccountServiceClient);
});
afterAll(() => t.close());

const callBoth = (key: string, i: number): Promise<Outcome> =>
  i % 2 === 0 ? rest(t, key, { method: 'GET', path: '/v1/account' }) : grpcCall(client, client.getAccount, key, {});

test('Free tier: of 300 concurrent mixed REST/gRPC requests exactly 100 succeed, 200 get 429 with Retry-After', async () => {
  const { key } = await t.account('free');
  const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => callBoth(key, i)));
  const ok = outcomes.filter((o) => o.code === 'ok');
  const limited = outcomes.filter((o) => o.code === 'quota_exceeded');
  assert.equal(ok.length, 100);
  assert.equal(limited.length, 200);
  const secondsToDecember = 3600;
  for (const o of limited) {
    assert.equal(o.status, o.protocol === 'rest' ? 429 : 8);
    assert.equal(o.headers['retry-after'], String(secondsToDecember), `${o.protocol} retry-after`);
    assert.equal(o.headers['ratelimit'], `"monthly";r=0;t=${secondsToDecember}`);
  }
  assert.ok(limited.some((o) => o.protocol === 'grpc') && limited.some((o) => o.protocol === 'rest'));
  // the remaining counts in the successes are a permutation of 99..0
  const remaining = ok.map((o) => Number(/r=(\d+)/.exec(o.headers['ratelimit'])![1])).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 100 }, (_, i) => i));
  for (const o of ok) assert.equal(o.headers['ratelimit-policy'], `"monthly";q=100;w=${30 * 86400}`);

  clock.set(Date.UTC(2026, 11, 1, 0, 0, 1)); // December
  const fresh = await callBoth(key, 0);
  assert.equal(fresh.code, 'ok');
  assert.equal(fresh.data.quota.used, 1);
  assert.equal(fresh.data.quota.reset_time, '2027-01-01T00:00:00Z');
  assert.equal(fresh.headers['ratelimit-policy'], `"monthly";q=100;w=${31 * 86400}`);
  const g = await callBoth(key, 1);
  assert.equal(g.code, 'ok');
  assert.equal(g.headers['ratelimit'], `"monthly";r=98;t=${31 * 86400 - 1}`);
});

test('unauthenticated requests and GetVersion do not count; enterprise has no limit headers', async () => {
  const { key } = await t.account('pro');
  await rest(t, undefined, { method: 'GET', path: '/v1/account' });
  const wrong = key.slice(0, -1) + (key.endsWith('x') ? 'y' : 'x'); // always differs from the real key
  assert.equal((await rest(t, wrong, { method: 'GET', path: '/v1/account' })).code, 'unauthenticated');
  await rest(t, undefined, { method: 'GET', path: '/v1/version' });
  const o = await rest(t, key, { method: 'GET', path: '/v1/account' });
  assert.equal(o.data.quota.used, 1);
  assert.equal(o.data.quota.remaining, 9999);
  const ent = await t.account('enterprise');
  const e = await rest(t, ent.key, { method: 'GET', path: '/v1/account' });
  assert.equal(e.data.quota.unlimited, true);
  assert.equal(e.headers['ratelimit'], undefined);
});

test('a tier change by the operator applies at once', async () => {
  const { accountId, key } = await t.account('free');
  await t.service.ctx.accounts.setTier(accountId, 'pro');
  const o = await grpcCall(client, client.getAccount, key, {});
  assert.equal(o.data.tier, 'pro');
  assert.equal(o.data.quota.limit, 10000);
  assert.equal(o.headers['ratelimit-policy'], `"monthly";q=10000;w=${31 * 86400}`);
});
