/**
 * The subscription API on both protocols: create (secret once), get, list (paginated), update,
 * delete, rotate; validation naming fields with nothing half-written; tenancy (404); the
 * `subscriptions` scope (403); idempotent creation; deleting an entity deletes the subscriptions on it.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { EntityServiceClient } from '../../gen/forecast/v1/entity_service.pb';
import { SubscriptionServiceClient } from '../../gen/forecast/v1/subscription_service.pb';
import { ManualClock } from '../../src/clock';
import { MAX_SUBSCRIPTIONS } from '../../src/subscriptions/subscription-service';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { testResolver } from '../helpers/resolver';
import { startTestService, type TestService } from '../helpers/service';

const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
const dns = testResolver({ 'hooks.example.com': ['93.184.216.34'], 'inside.example.com': ['10.1.2.3'] });
let t: TestService;
let client: SubscriptionServiceClient;
let key: string;
const HOOK = 'https://hooks.example.com/forecast';

beforeAll(async () => {
  t = await startTestService({ clock, webhookResolver: dns.resolve });
  client = t.client(SubscriptionServiceClient);
  key = (await t.account('enterprise')).key;
  const e = await rest(t, key, {
    method: 'POST',
    path: '/v1/entities',
    body: { entity: 'store:berlin', frequency: 'P1D', axes: [{ name: 'demand' }, { name: 'revenue' }] },
  });
  assert.equal(e.code, 'ok', e.message);
});
afterAll(() => t.close());

const create = (k: string, body: Record<string, unknown>, headers?: Record<string, string>) => rest(t, k, { method: 'POST', path: '/v1/subscriptions', body, headers });
const createGrpc = (k: string, req: Record<string, unknown>) =>
  grpcCall(client, client.createSubscription, k, { entity: '', axes: [], includeDescendants: false, url: '', events: [], level: 0, ...req });
const count = async (k: string) => (await rest(t, k, { method: 'GET', path: '/v1/subscriptions?page_size=200' })).data.subscriptions.length;

describe('create', () => {
  test('REST: the secret once, defaults filled in; GET never shows it', async () => {
    const r = await create(key, { entity: 'store:berlin', url: HOOK });
    assert.equal(r.code, 'ok', r.message);
    const s = r.data.subscription;
    assert.match(s.subscription_id, /^sub_[0-9A-Z]{26}$/);
    assert.match(r.data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(r.data.secret.slice(6), 'base64').length, 32);
    assert.deepEqual(s.events, ['drift.detected', 'drift.resolved']);
    assert.equal(s.level, 0.95);
    assert.equal(s.state, 'active');
    assert.equal(s.url, HOOK);
    assert.equal(s.create_time, '2026-03-01T12:00:00Z');
    const got = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${s.subscription_id}` });
    assert.equal(got.code, 'ok');
    assert.deepEqual(got.data, s);
    assert.ok(!JSON.stringify(got.data).includes('whsec_'));
  });

  test('gRPC: the same, with axes, events and level', async () => {
    const g = await createGrpc(key, { entity: 'store:berlin', url: HOOK, axes: ['demand'], events: ['drift.detected'], level: 0.9 });
    assert.equal(g.code, 'ok', g.message);
    assert.match(g.data.secret, /^whsec_/);
    assert.deepEqual(g.data.subscription.axes, ['demand']);
    assert.deepEqual(g.data.subscription.events, ['drift.detected']);
    assert.equal(g.data.subscription.level, 0.9);
    const got = await grpcCall(client, client.getSubscription, key, { subscriptionId: g.data.subscription.subscriptionId });
    assert.deepEqual(got.data.subscription, g.data.subscription);
  });

  test('bad input is 400 naming the field on both protocols, and nothing is stored', async () => {
    const before = await count(key);
    const cases: [Record<string, unknown>, string][] = [
      [{ url: HOOK }, 'entity'],
      [{ entity: 'store', url: HOOK }, 'entity'],
      [{ entity: 'store:nowhere', url: HOOK }, 'entity'],
      [{ entity: 'store:berlin' }, 'url'],
      [{ entity: 'store:berlin', url: 'not a url' }, 'url'],
      [{ entity: 'store:berlin', url: 'ftp://hooks.example.com/x' }, 'url'],
      [{ entity: 'store:berlin', url: 'https://user:pw@hooks.example.com/x' }, 'url'],
      [{ entity: 'store:berlin', url: `${HOOK}#frag` }, 'url'],
      [{ entity: 'store:berlin', url: 'https://hooks.example.com:0/x' }, 'url'],
      [{ entity: 'store:berlin', url: `https://hooks.example.com/${'a'.repeat(2100)}` }, 'url'],
      [{ entity: 'store:berlin', url: 'https://inside.example.com/x' }, 'url'],
      [{ entity: 'store:berlin', url: 'https://no-such-host.invalid/x' }, 'url'],
      [{ entity: 'store:berlin', url: HOOK, events: ['drift.maybe'] }, 'events[0]'],
      [{ entity: 'store:berlin', url: HOOK, events: ['drift.detected', 'drift.detected'] }, 'events[1]'],
      [{ entity: 'store:berlin', url: HOOK, level: 1.5 }, 'level'],
      [{ entity: 'store:berlin', url: HOOK, level: 0.2 }, 'level'],
      [{ entity: 'store:berlin', url: HOOK, axes: ['demand', 'stock'] }, 'axes[1]'],
      [{ entity: 'store:berlin', url: HOOK, axes: ['Bad Axis'] }, 'axes[0]'],
      [{ entity: 'store:berlin', url: HOOK, axes: ['demand', 'demand'] }, 'axes[1]'],
    ];
    for (const [body, field] of cases) {
      for (const o of [await create(key, body), await createGrpc(key, body)]) {
        assert.equal(o.code, 'invalid_argument', `${o.protocol} ${JSON.stringify(body).slice(0, 120)}: ${o.message}`);
        assert.ok(o.message.startsWith(`${field}:`), `${o.protocol}: ${o.message}`);
        if (o.protocol === 'rest') assert.equal(o.data.details.field, field);
      }
    }
    assert.equal((await create(key, { entity: 'store:berlin', url: HOOK, colour: 'red' })).status, 400);
    assert.equal(await count(key), before);
  });

  test('the same Idempotency-Key replays the creation (same id, the secret not replayed); one subscription is stored', async () => {
    const before = await count(key);
    const body = { entity: 'store:berlin', url: HOOK, level: 0.8 };
    const first = await create(key, body, { 'idempotency-key': 'sub-1' });
    const again = await create(key, body, { 'idempotency-key': 'sub-1' });
    const viaGrpc = await grpcCall(
      client,
      client.createSubscription,
      key,
      { entity: 'store:berlin', axes: [], includeDescendants: false, url: HOOK, events: [], level: 0.8 },
      { 'idempotency-key': 'sub-1' },
    );
    assert.equal(first.code, 'ok', first.message);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(viaGrpc.headers['idempotent-replayed'], 'true');
    assert.equal(again.data.subscription.subscription_id, first.data.subscription.subscription_id);
    assert.equal(viaGrpc.data.subscription.subscriptionId, first.data.subscription.subscription_id);
    // the signing secret is shown once: never stored for replay (found by QA: a replay after a rotation returned the old secret)
    assert.match(first.data.secret, /^whsec_/);
    assert.ok(!again.data.secret);
    assert.equal(viaGrpc.data.secret, '');
    assert.equal(await count(key), before + 1);
    const other = await create(key, { ...body, level: 0.9 }, { 'idempotency-key': 'sub-1' });
    assert.equal(other.code, 'idempotency_key_reused');
  });
});

describe('read, change, delete', () => {
  test('list is paginated newest first, each once; a filter and a foreign cursor', async () => {
    const k = (await t.account('enterprise')).key;
    await rest(t, k, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:a', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    await rest(t, k, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:b', frequency: 'P1D', axes: [{ name: 'demand' }] } });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await create(k, { entity: i < 3 ? 'sku:a' : 'sku:b', url: HOOK });
      assert.equal(r.code, 'ok', r.message);
      made.push(r.data.subscription.subscription_id);
      clock.advance(1000);
    }
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const o: Outcome = pages % 2 === 0
        ? await rest(t, k, { method: 'GET', path: `/v1/subscriptions?page_size=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` })
        : await grpcCall(client, client.listSubscriptions, k, { pageSize: 2, cursor, entity: '' });
      assert.equal(o.code, 'ok', o.message);
      const list = o.protocol === 'rest' ? o.data.subscriptions.map((s: any) => s.subscription_id) : o.data.subscriptions.map((s: any) => s.subscriptionId);
      assert.ok(list.length <= 2);
      seen.push(...list);
      cursor = o.protocol === 'rest' ? o.data.next_cursor : o.data.nextCursor;
      pages++;
    } while (cursor);
    assert.deepEqual(seen, [...made].reverse());
    const filtered = await rest(t, k, { method: 'GET', path: '/v1/subscriptions?entity=sku:b' });
    assert.deepEqual(filtered.data.subscriptions.map((s: any) => s.subscription_id), made.slice(3).reverse());
    const page = await rest(t, k, { method: 'GET', path: '/v1/subscriptions?page_size=1' });
    const foreign = await rest(t, k, { method: 'GET', path: `/v1/subscriptions?entity=sku:a&cursor=${encodeURIComponent(page.data.next_cursor)}` });
    assert.equal(foreign.code, 'invalid_cursor');
    assert.equal((await rest(t, k, { method: 'GET', path: '/v1/subscriptions?page_size=-1' })).code, 'invalid_argument');
  });

  test('update changes url, events, level and pause; unset fields stay; bad values are 400', async () => {
    const s = (await create(key, { entity: 'store:berlin', url: HOOK })).data.subscription;
    const path = `/v1/subscriptions/${s.subscription_id}`;
    const u = await rest(t, key, { method: 'PATCH', path, body: { url: 'https://hooks.example.com/v2', level: 0.99, paused: true } });
    assert.equal(u.code, 'ok', u.message);
    assert.equal(u.data.url, 'https://hooks.example.com/v2');
    assert.equal(u.data.level, 0.99);
    assert.equal(u.data.state, 'paused');
    assert.equal(u.data.pause_reason, 'paused by request');
    assert.deepEqual(u.data.events, s.events);
    const g = await grpcCall(client, client.updateSubscription, key, { subscriptionId: s.subscription_id, events: ['drift.resolved'], paused: false });
    assert.equal(g.code, 'ok', g.message);
    assert.equal(g.data.subscription.state, 'active');
    assert.equal(g.data.subscription.level, 0.99);
    assert.deepEqual(g.data.subscription.events, ['drift.resolved']);
    for (const [body, field] of [
      [{ level: 0 }, 'level'],
      [{ url: 'http://[::1]/x' }, 'url'],
      [{ url: 'https://inside.example.com/' }, 'url'],
      [{ events: ['nope'] }, 'events[0]'],
    ] as const) {
      const bad = await rest(t, key, { method: 'PATCH', path, body });
      assert.equal(bad.code, 'invalid_argument', JSON.stringify(body));
      assert.ok(bad.message.startsWith(`${field}:`), bad.message);
    }
    assert.equal((await rest(t, key, { method: 'GET', path })).data.url, 'https://hooks.example.com/v2');
  });

  test('rotate returns a new secret once and the old one’s grace period; bad grace is 400', async () => {
    const s = (await create(key, { entity: 'store:berlin', url: HOOK })).data;
    const path = `/v1/subscriptions/${s.subscription.subscription_id}:rotateSecret`;
    const r = await rest(t, key, { method: 'POST', path, body: { grace_period_seconds: 3600 } });
    assert.equal(r.code, 'ok', r.message);
    assert.match(r.data.secret, /^whsec_/);
    assert.notEqual(r.data.secret, s.secret);
    assert.equal(r.data.subscription.previous_secret_expire_time, new Date(clock.now() + 3600_000).toISOString().replace('.000Z', 'Z'));
    const g = await grpcCall(client, client.rotateSubscriptionSecret, key, { subscriptionId: s.subscription.subscription_id, gracePeriodSeconds: '0' });
    assert.equal(g.data.subscription.previousSecretExpireTime, new Date(clock.now() + 86_400_000).toISOString().replace('.000Z', 'Z'));
    const bad = await rest(t, key, { method: 'POST', path, body: { grace_period_seconds: 8 * 86400 } });
    assert.equal(bad.code, 'invalid_argument');
    assert.ok(bad.message.startsWith('grace_period_seconds:'));
    // with an Idempotency-Key the replay has the subscription but not the secret
    const keyed = await rest(t, key, { method: 'POST', path, body: {}, headers: { 'idempotency-key': 'rotate-1' } });
    assert.match(keyed.data.secret, /^whsec_/);
    const replayed = await rest(t, key, { method: 'POST', path, body: {}, headers: { 'idempotency-key': 'rotate-1' } });
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    assert.equal(replayed.data.subscription.subscription_id, s.subscription.subscription_id);
    assert.ok(!replayed.data.secret);
    const grpcKeyed = await grpcCall(client, client.rotateSubscriptionSecret, key, { subscriptionId: s.subscription.subscription_id, gracePeriodSeconds: '0' }, { 'idempotency-key': 'rotate-2' });
    assert.match(grpcKeyed.data.secret, /^whsec_/);
    const grpcReplayed = await grpcCall(client, client.rotateSubscriptionSecret, key, { subscriptionId: s.subscription.subscription_id, gracePeriodSeconds: '0' }, { 'idempotency-key': 'rotate-2' });
    assert.equal(grpcReplayed.headers['idempotent-replayed'], 'true');
    assert.equal(grpcReplayed.data.subscription.subscriptionId, s.subscription.subscription_id);
    assert.equal(grpcReplayed.data.secret, '');
  });

  test('delete, then 404; a malformed id is 400', async () => {
    const id = (await create(key, { entity: 'store:berlin', url: HOOK })).data.subscription.subscription_id;
    const d = await grpcCall(client, client.deleteSubscription, key, { subscriptionId: id });
    assert.deepEqual(d.data, { subscriptionId: id, deleted: true });
    assert.equal((await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${id}` })).code, 'not_found');
    assert.equal((await rest(t, key, { method: 'DELETE', path: `/v1/subscriptions/${id}` })).code, 'not_found');
    const bad = await rest(t, key, { method: 'GET', path: '/v1/subscriptions/nope' });
    assert.equal(bad.code, 'invalid_argument');
    assert.ok(bad.message.startsWith('subscription_id:'));
  });
});

describe('deleting the entity', () => {
  const entity = (k: string, body: Record<string, unknown>) => rest(t, k, { method: 'POST', path: '/v1/entities', body: { frequency: 'P1D', axes: [{ name: 'demand' }], ...body } });
  const onEntity = async (k: string, name: string) => (await rest(t, k, { method: 'GET', path: `/v1/subscriptions?entity=${name}` })).data.subscriptions;

  test.each(['REST', 'gRPC'])('%s: deletes the subscriptions on it; those on an ancestor with include_descendants stay; a re-made entity has none', async (protocol) => {
    const name = `sku:del_${protocol.toLowerCase()}`;
    assert.equal((await entity(key, { entity: 'region:del' })).code, 'ok');
    assert.equal((await entity(key, { entity: name, parents: ['region:del'] })).code, 'ok');
    const mine = [(await create(key, { entity: name, url: HOOK })).data.subscription.subscription_id, (await create(key, { entity: name, url: HOOK, axes: ['demand'] })).data.subscription.subscription_id];
    const above = (await create(key, { entity: 'region:del', url: HOOK, include_descendants: true })).data.subscription.subscription_id;
    // Another account's entity of the same name and its subscription are not touched.
    const other = (await t.account('enterprise')).key;
    assert.equal((await entity(other, { entity: name })).code, 'ok');
    const theirs = (await create(other, { entity: name, url: HOOK })).data.subscription.subscription_id;

    const deleted =
      protocol === 'REST'
        ? await rest(t, key, { method: 'DELETE', path: `/v1/entities/${name}` })
        : await grpcCall(t.client(EntityServiceClient), t.client(EntityServiceClient).deleteEntity, key, { entity: name });
    assert.equal(deleted.code, 'ok', deleted.message);
    assert.deepEqual(await onEntity(key, name), []);
    for (const id of mine) assert.equal((await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${id}` })).code, 'not_found');
    const kept = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${above}` });
    assert.equal(kept.data.state, 'active');
    assert.equal((await rest(t, other, { method: 'GET', path: `/v1/subscriptions/${theirs}` })).data.state, 'active');

    assert.equal((await entity(key, { entity: name })).code, 'ok');
    assert.deepEqual(await onEntity(key, name), [], 'the old subscriber is not re-attached');
  });
});

describe('access', () => {
  test('another account’s subscription is 404 on every method, both protocols', async () => {
    const id = (await create(key, { entity: 'store:berlin', url: HOOK })).data.subscription.subscription_id;
    const other = (await t.account('enterprise')).key;
    const calls: Promise<Outcome>[] = [
      rest(t, other, { method: 'GET', path: `/v1/subscriptions/${id}` }),
      rest(t, other, { method: 'PATCH', path: `/v1/subscriptions/${id}`, body: { paused: true } }),
      rest(t, other, { method: 'DELETE', path: `/v1/subscriptions/${id}` }),
      rest(t, other, { method: 'POST', path: `/v1/subscriptions/${id}:rotateSecret`, body: {} }),
      rest(t, other, { method: 'POST', path: `/v1/subscriptions/${id}:test`, body: {} }),
      rest(t, other, { method: 'GET', path: `/v1/subscriptions/${id}/deliveries` }),
      rest(t, other, { method: 'POST', path: `/v1/subscriptions/${id}/deliveries/dlv_01J00000000000000000000000:resend`, body: {} }),
      grpcCall(client, client.getSubscription, other, { subscriptionId: id }),
      grpcCall(client, client.testSubscription, other, { subscriptionId: id }),
      grpcCall(client, client.listDeliveries, other, { subscriptionId: id, pageSize: 0, cursor: '', state: '' }),
    ];
    for (const o of await Promise.all(calls)) assert.equal(o.code, 'not_found', `${o.protocol}: ${o.message}`);
    assert.equal((await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${id}` })).data.state, 'active');
    // the other account's entity of the same name is not this account's
    assert.equal((await create(other, { entity: 'store:berlin', url: HOOK })).code, 'invalid_argument');
  });

  test('without the subscriptions scope every method is 403', async () => {
    const reader = (await t.account('enterprise', ['forecast:read', 'data:write'])).key;
    const r = await create(reader, { entity: 'store:berlin', url: HOOK });
    assert.equal(r.code, 'permission_denied');
    assert.equal(r.status, 403);
    assert.equal((await rest(t, reader, { method: 'GET', path: '/v1/subscriptions' })).code, 'permission_denied');
    const g = await createGrpc(reader, { entity: 'store:berlin', url: HOOK });
    assert.equal(g.code, 'permission_denied');
    assert.equal((await grpcCall(client, client.listSubscriptions, reader, { pageSize: 0, cursor: '', entity: '' })).code, 'permission_denied');
    assert.equal((await rest(t, undefined, { method: 'GET', path: '/v1/subscriptions' })).code, 'unauthenticated');
  });
});

describe('the limit', () => {
  test(`at most ${MAX_SUBSCRIPTIONS} per account, however many creations run at once (found by QA: 60 at once at 990 left 1,004 on PostgreSQL)`, async () => {
    const k = (await t.account('enterprise')).key;
    const accountId = (await rest(t, k, { method: 'GET', path: '/v1/account' })).data.account_id as string;
    assert.equal((await rest(t, k, { method: 'POST', path: '/v1/entities', body: { entity: 'store:many', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
    // 990 stored directly (the API would take minutes), then 60 creations at once over the API
    const { database } = t.service.ctx;
    const { subscriptions } = t.service.ctx.webhooks;
    for (let i = 0; i < MAX_SUBSCRIPTIONS - 10; i++) {
      await subscriptions.create(database.db, accountId, { id: `sub_seed${String(i).padStart(4, '0')}`, entity: 'store:many', axes: [], includeDescendants: false, url: HOOK, events: ['drift.detected'], level: 0.95 }, 'whsec_seed', clock.now());
    }
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => create(k, { entity: 'store:many', url: HOOK })));
    assert.equal(outcomes.filter((o) => o.code === 'ok').length, 10);
    for (const o of outcomes.filter((x) => x.code !== 'ok')) {
      assert.equal(o.status, 400);
      assert.equal(o.code, 'failed_precondition');
      assert.match(o.message, new RegExp(`the account has ${MAX_SUBSCRIPTIONS} subscriptions, the most allowed`));
    }
    assert.equal(await subscriptions.count(database.db, accountId), MAX_SUBSCRIPTIONS);
    // gRPC the same
    const g = await createGrpc(k, { entity: 'store:many', url: HOOK });
    assert.equal(g.code, 'failed_precondition');
    assert.match(g.message, new RegExp(`the account has ${MAX_SUBSCRIPTIONS} subscriptions, the most allowed`));
    assert.equal(await subscriptions.count(database.db, accountId), MAX_SUBSCRIPTIONS);
  }, 120_000);
});
