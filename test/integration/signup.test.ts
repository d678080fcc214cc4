/** Sign-up (API.md section 3): POST /v1/signup on both protocols, the no-JS form path, limits. */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { AccountServiceClient } from '../../gen/forecast/v1/account_service.pb';
import { startTestService, type TestService } from '../helpers/service';
import { grpcCall, rest } from '../helpers/dual';

let t: TestService;
let client: AccountServiceClient;

beforeAll(async () => {
  t = await startTestService();
  client = t.client(AccountServiceClient);
});
afterAll(() => t.close());

test('sign-up creates a Free account whose key works at once (REST and gRPC)', async () => {
  const r = await rest(t, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'Ada@Example.com' } });
  assert.equal(r.code, 'ok', r.message);
  assert.equal(r.data.tier, 'free');
  assert.equal(r.data.monthly_quota, 100);
  const acct = await rest(t, r.data.api_key, { method: 'GET', path: '/v1/account' });
  assert.equal(acct.data.email, 'ada@example.com');
  assert.equal(acct.data.support, 'community chat');
  const g = await grpcCall(client, client.signUp, undefined, { email: 'grace@example.com' });
  assert.equal(g.code, 'ok', g.message);
  assert.match(g.data.apiKey, /^fk_live_/);
});

test('invalid and duplicate emails are refused with the right codes (both protocols)', async () => {
  for (const email of ['', 'not-an-email', 'a@b', 'x'.repeat(250) + '@example.com']) {
    for (const o of [await rest(t, undefined, { method: 'POST', path: '/v1/signup', body: { email } }), await grpcCall(client, client.signUp, undefined, { email })]) {
      assert.equal(o.code, 'invalid_argument', `${o.protocol} ${email}`);
      assert.ok(o.message.startsWith('email'), o.message);
    }
  }
  const dup = await grpcCall(client, client.signUp, undefined, { email: 'ADA@example.com' });
  assert.equal(dup.code, 'already_exists');
  const dupRest = await rest(t, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'ada@example.com' } });
  assert.equal(dupRest.code, 'already_exists');
  assert.equal(dupRest.status, 409);
});

test('one client address gets at most 5 sign-ups an hour over both protocols together, then 429 with Retry-After', async () => {
  const other = await startTestService();
  const otherClient = other.client(AccountServiceClient);
  try {
    const outcomes = [];
    for (let i = 0; i < 7; i++) {
      const body = { email: `u${i}@example.com` };
      outcomes.push(i % 2 ? await grpcCall(otherClient, otherClient.signUp, undefined, body) : await rest(other, undefined, { method: 'POST', path: '/v1/signup', body }));
    }
    assert.deepEqual(outcomes.map((o) => o.code), ['ok', 'ok', 'ok', 'ok', 'ok', 'quota_exceeded', 'quota_exceeded']);
    for (const o of outcomes.slice(5)) {
      assert.equal(o.status, o.protocol === 'rest' ? 429 : 8);
      assert.ok(Number(o.headers['retry-after']) > 3500, `${o.protocol} retry-after ${o.headers['retry-after']}`);
    }
  } finally {
    await other.close();
  }
});

test('the page is served at / with local assets, and the form works without JavaScript', async () => {
  const page = await fetch(`${t.baseUrl}/`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.ok(html.includes('community chat') && html.includes('10,000') && html.includes('4 h SLA'));
  assert.ok(!/https?:\/\/(?!localhost)[^"']*\.(js|css)/.test(html), 'no CDN assets');
  for (const asset of ['/assets/styles.css', '/assets/app.js']) assert.equal((await fetch(t.baseUrl + asset)).status, 200, asset);
  const form = await fetch(`${t.baseUrl}/signup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=nojs%40example.com' });
  assert.equal(form.status, 200);
  const result = await form.text();
  const key = /<code id="api-key">(fk_live_[0-9A-Za-z]+)<\/code>/.exec(result)?.[1];
  assert.ok(key, 'the key is rendered');
  assert.equal((await rest(t, key, { method: 'GET', path: '/v1/account' })).code, 'ok');
  const bad = await fetch(`${t.baseUrl}/signup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=%3Cscript%3E' });
  assert.equal(bad.status, 400);
  const badHtml = await bad.text();
  assert.ok(badHtml.includes('&lt;script&gt;') && !badHtml.includes('"<script>'), 'error text is escaped');
});
