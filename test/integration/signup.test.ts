/**
 * Sign-up (API.md section 3): POST /v1/signup on both protocols, the no-JS form path, limits;
 * no answer tells whether an email has an account; Idempotency-Key without an account.
 */
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

test('invalid emails are refused naming the field (both protocols)', async () => {
  for (const email of ['', 'not-an-email', 'a@b', 'x'.repeat(250) + '@example.com']) {
    for (const o of [await rest(t, undefined, { method: 'POST', path: '/v1/signup', body: { email } }), await grpcCall(client, client.signUp, undefined, { email })]) {
      assert.equal(o.code, 'invalid_argument', `${o.protocol} ${email}`);
      assert.ok(o.message.startsWith('email'), o.message);
    }
  }
});

test('an email that has an account is answered like any other: no stranger learns it exists (both protocols)', async () => {
  const other = await startTestService(); // a client address of its own: four sign-ups here
  const otherClient = other.client(AccountServiceClient);
  try {
    const taken = await rest(other, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'taken@example.com' } });
    assert.equal(taken.code, 'ok', taken.message);
    const again = [
      await grpcCall(otherClient, otherClient.signUp, undefined, { email: 'TAKEN@example.com' }),
      await rest(other, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'taken@example.com' } }),
    ];
    const fresh = await rest(other, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'never-seen@example.com' } });
    for (const o of [...again, fresh]) assert.equal(o.code, 'ok', `${o.protocol}: ${o.message}`);
    assert.deepEqual(Object.keys(again[1].data).sort(), Object.keys(fresh.data).sort());
    const ids = new Set([taken.data.account_id, again[0].data.accountId, again[1].data.account_id]);
    assert.equal(ids.size, 3, 'each sign-up is its own account');
    for (const k of [taken.data.api_key, again[1].data.api_key]) {
      assert.equal((await rest(other, k, { method: 'GET', path: '/v1/account' })).data.email, 'taken@example.com');
    }
    // The operator's --email stays unique.
    await other.service.ctx.accounts.createAccount('pro', 'ops@example.com');
    await assert.rejects(other.service.ctx.accounts.createAccount('pro', 'ops@example.com'), /already exists/);
    assert.equal((await rest(other, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'ops@example.com' } })).code, 'ok');
  } finally {
    await other.close();
  }
});

test('every sign-up counts toward the hourly limit, the same email again included', async () => {
  // Every sign-up that reaches the store counts (there is no failure left but the limit itself).
  const other = await startTestService();
  try {
    const codes = [];
    for (let i = 0; i < 6; i++) codes.push((await rest(other, undefined, { method: 'POST', path: '/v1/signup', body: { email: 'same@example.com' } })).code);
    assert.deepEqual(codes, ['ok', 'ok', 'ok', 'ok', 'ok', 'quota_exceeded']);
  } finally {
    await other.close();
  }
});

test('Idempotency-Key: a retry after a lost answer gets the same account, never its key again (both protocols; found by QA: anyone holding the Idempotency-Key read the new account\'s API key)', async () => {
  const other = await startTestService();
  const otherClient = other.client(AccountServiceClient);
  const signUp = (email: string, key: string | undefined) => rest(other, undefined, { method: 'POST', path: '/v1/signup', body: { email }, headers: key ? { 'idempotency-key': key } : undefined });
  try {
    const key = 'signup-3f0c2a9e-8d1b-4c55-9f0e-6a7b8c9d0e1f';
    const first = await signUp('retry@example.com', key);
    assert.equal(first.code, 'ok', first.message);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const replay = await signUp('retry@example.com', key);
    assert.equal(replay.code, 'ok', replay.message);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.match(first.data.api_key, /^fk_/);
    assert.deepEqual({ ...replay.data, api_key: undefined }, { ...first.data, api_key: undefined }, 'the same account and key id');
    assert.ok(!replay.data.api_key, 'the one-time key is not replayed');
    assert.equal((await rest(other, first.data.api_key, { method: 'GET', path: '/v1/account' })).data.account_id, first.data.account_id);
    const grpcReplay = await grpcCall(otherClient, otherClient.signUp, undefined, { email: 'retry@example.com' }, { 'idempotency-key': key });
    assert.equal(grpcReplay.code, 'ok', grpcReplay.message);
    assert.equal(grpcReplay.data.accountId, first.data.account_id);
    assert.equal(grpcReplay.data.apiKey, '');
    assert.equal(grpcReplay.headers['idempotent-replayed'], 'true');

    const reused = await signUp('someone-else@example.com', key);
    assert.deepEqual([reused.code, reused.status], ['idempotency_key_reused', 422]);
    const grpcReused = await grpcCall(otherClient, otherClient.signUp, undefined, { email: 'someone-else@example.com' }, { 'idempotency-key': key });
    assert.equal(grpcReused.code, 'idempotency_key_reused');

    const short = await signUp('short@example.com', 'retry-1');
    assert.deepEqual([short.code, short.status], ['invalid_argument', 400]);
    assert.match(short.message, /^Idempotency-Key: must be 16\.\.255 characters, got 7 \(SignUp needs no API key/);

    // The replays did not count: four more sign-ups fit in the hour (five in all), the sixth does not.
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await signUp(`n${i}@example.com`, undefined)).code);
    assert.deepEqual(codes, ['ok', 'ok', 'ok', 'ok', 'quota_exceeded']);
    // The key is stored only as its hash, the response only sealed.
    const rows = await other.service.ctx.database.db.selectFrom('idempotency').selectAll().where('method', '=', '/forecast.v1.AccountService/SignUp').execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].account_id, '');
    assert.ok(!JSON.stringify(rows).includes(key) && !JSON.stringify(rows).includes(first.data.api_key), 'no key and no API key in clear');
  } finally {
    await other.close();
  }
});

test('the page is served at / with local assets, and the form works without JavaScript', async () => {
  const page = await fetch(`${t.baseUrl}/`);
  assert.equal(page.status, 200);
  // under no-referrer a browser posts the form with `Origin: null`, which the cross-site check refuses
  assert.equal(page.headers.get('referrer-policy'), 'same-origin');
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

test('the form\'s answers, the one showing a new key above all, are never cached (found by QA: no Cache-Control)', async () => {
  const other = await startTestService();
  try {
    const post = (body: string) => fetch(`${other.baseUrl}/signup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    const ok = await post('email=cache%40example.com');
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /<code id="api-key">fk_live_/);
    assert.equal(ok.headers.get('cache-control'), 'no-store');
    const bad = await post('email=nope');
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('cache-control'), 'no-store');
  } finally {
    await other.close();
  }
});

test('a form post sent by another site\'s page is refused (403) and makes no account; the site\'s own page and clients that are no browser sign up (found by QA: any site could make its visitors sign up)', async () => {
  const other = await startTestService();
  try {
    const host = new URL(other.baseUrl).host;
    const post = (headers: Record<string, string>, email: string) =>
      fetch(`${other.baseUrl}/signup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: `email=${encodeURIComponent(email)}` });
    const refused: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site', origin: 'https://sub.example' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ];
    for (const [i, headers] of refused.entries()) {
      const r = await post(headers, `csrf${i}@example.com`);
      assert.equal(r.status, 403, JSON.stringify(headers));
      const html = await r.text();
      assert.ok(!html.includes('fk_live_'), 'no key');
      assert.match(html, /<p id="signup-error" class="error" role="alert">sign up from the form on this site<\/p>/);
    }
    const allowed: Record<string, string>[] = [{ 'sec-fetch-site': 'same-origin', origin: `https://${host}` }, { origin: `http://${host}` }, {}];
    for (const [i, headers] of allowed.entries()) {
      const r = await post(headers, `own${i}@example.com`);
      assert.equal(r.status, 200, JSON.stringify(headers));
      assert.match(await r.text(), /<code id="api-key">fk_live_/);
    }
    // the refused posts used none of this address's hourly allowance (5): two more still succeed
    for (const i of [3, 4]) assert.equal((await post({}, `own${i}@example.com`)).status, 200);
  } finally {
    await other.close();
  }
});

test('what a client sends is shown as sent: `$\'` or `$&` in an email pastes no part of the page into it (found by QA)', async () => {
  for (const email of ["$'x", '$&y', '$`z']) {
    const r = await fetch(`${t.baseUrl}/signup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}` });
    assert.equal(r.status, 400);
    const html = await r.text();
    const shown = /<p id="signup-error" class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
    const escaped = email.replace(/&/g, '&amp;').replace(/'/g, '&#39;');
    assert.equal(shown, `email: &quot;${escaped}&quot; is not a valid email address`, email);
    assert.equal(html.split('<form id="signup-form"').length, 2, `${email}: one form`);
  }
});
