/**
 * Webhook delivery against real receivers that verify every request with the `standardwebhooks`
 * package and an independent HMAC check of X-Service-Signature: signatures, forgeries and stale
 * replays refused, the retry schedule (scaled: WEBHOOK_RETRY_BASE_MS = 10 on a manual clock),
 * Retry-After, 410 pausing, the delivery log, resend, secret rotation, no redirects, timeouts.
 * Tests synchronise on what the receiver saw and on the dispatcher settling, never on sleeps.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ManualClock } from '../../src/clock';
import { RETRY_MULTIPLES } from '../../src/subscriptions/retry-schedule';
import { rest } from '../helpers/dual';
import type { Received } from '../helpers/receiver';
import type { TestService } from '../helpers/service';
import { startWebhookService, type WebhookService } from '../helpers/webhook-service';

const BASE = 10;
const TIMEOUT = 500;
const clock = new ManualClock(Date.now());
let w: WebhookService;
let t: TestService;
let key: string;

beforeAll(async () => {
  w = await startWebhookService({ retryBaseMs: BASE, timeoutMs: TIMEOUT, clock });
  ({ t, key } = w);
});
afterAll(() => w.close());

const subscribed = (respond?: Parameters<WebhookService['subscribed']>[0], entity?: string) => w.subscribed(respond, entity);
const sendTest = (id: string) => w.sendTest(id);
const delivery = async (sub: string, deliveryId: string) => {
  const r = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${sub}/deliveries?page_size=200` });
  return r.data.deliveries.find((d: any) => d.delivery_id === deliveryId);
};
const settled = () => t.service.ctx.webhooks.dispatcher.settled();
const ofId = (list: readonly Received[], id: string) => list.filter((x) => x.headers['webhook-id'] === id);

/**
 * A receiver that answers a test event's first attempt with `status` and `retry-after`, then
 * `afterwards()` (200 unless told); the next attempt asserted `gap` ms after the first, the clock
 * moved there, and the second attempt awaited.
 */
async function retriedAfter(status: number, retryAfter: string, gap: number, afterwards: () => { status: number } = () => ({ status: 200 })) {
  let first = true;
  const { receiver, id } = await subscribed(() => {
    if (!first) return afterwards();
    first = false;
    return { status, headers: { 'retry-after': retryAfter } };
  });
  const sent = await sendTest(id);
  await receiver.waitFor((r) => ofId(r, sent.eventId).length >= 1);
  await settled();
  const d = await delivery(id, sent.deliveryId);
  assert.equal(Date.parse(d.next_attempt_time) - Date.parse(d.attempts[0].time), gap);
  clock.advance(gap);
  t.service.ctx.webhooks.dispatcher.poke();
  await receiver.waitFor((r) => ofId(r, sent.eventId).length >= 2);
  await settled();
  return { receiver, id, sent };
}

describe('signatures', () => {
  test('a test event arrives signed both ways; forged, stale and unsigned copies are refused', async () => {
    const { receiver, id, secret } = await subscribed();
    const { eventId, deliveryId } = await sendTest(id);
    await receiver.waitFor((r) => r.length >= 1);
    const got = receiver.received[0];
    assert.equal(got.verified, true, got.refusal);
    assert.equal(got.headers['webhook-id'], eventId);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.match(String(got.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(got.headers['webhook-timestamp'], String(Math.floor(clock.now() / 1000)));
    assert.deepEqual(Object.keys(got.event), ['id', 'type', 'created_at', 'data']);
    assert.equal(got.event.type, 'subscription.test');
    assert.equal(got.event.data.subscription_id, id);
    await settled();
    const d = await delivery(id, deliveryId);
    assert.equal(d.state, 'succeeded');
    assert.equal(d.attempt_count, 1);
    assert.equal(d.attempts[0].status_code, 200);
    assert.ok(d.attempts[0].latency_ms > 0);

    const post = (body: string, headers: Record<string, string>) => fetch(receiver.url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
    const h = Object.fromEntries(Object.entries(got.headers).filter(([k]) => k.startsWith('webhook-') || k === 'x-service-signature')) as Record<string, string>;
    // forged: the body changed after signing
    assert.equal((await post(got.body.replace('a test event', 'a forged event'), h)).status, 400);
    // a stale replay: correctly signed, but 10 minutes old
    const old = Math.floor(Date.now() / 1000) - 600;
    const stale = {
      'webhook-id': eventId,
      'webhook-timestamp': String(old),
      'webhook-signature': new Webhook(secret).sign(eventId, new Date(old * 1000), got.body),
      'x-service-signature': `t=${old},v1=${createHmac('sha256', secret).update(`${old}.${got.body}`).digest('hex')}`,
    };
    assert.equal((await post(got.body, stale)).status, 400);
    // one signature form missing, or signed with another secret
    assert.equal((await post(got.body, { ...h, 'x-service-signature': '' })).status, 400);
    const other = new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64'));
    assert.equal((await post(got.body, { ...h, 'webhook-signature': other.sign(eventId, new Date(Number(h['webhook-timestamp']) * 1000), got.body) })).status, 400);
    // the genuine request again: a duplicate, acknowledged without processing
    assert.equal((await post(got.body, h)).status, 200);
    const refusals = receiver.received.filter((r) => !r.verified).map((r) => r.refusal);
    assert.equal(refusals.length, 4);
    assert.ok(refusals.some((r) => /too old/.test(r)), refusals.join('; '));
    assert.equal(receiver.received.filter((r) => r.duplicate).length, 1);
  });
});

describe('retries', () => {
  test('fails 3 times then succeeds: one success, same webhook-id, the documented (scaled) backoff', async () => {
    const { receiver, id } = await subscribed(({ attempt }) => ({ status: attempt < 3 ? 500 : 200 }));
    const { eventId, deliveryId } = await sendTest(id);
    for (let k = 1; k <= 3; k++) {
      await receiver.waitFor((r) => ofId(r, eventId).length >= k);
      await settled();
      const d = await delivery(id, deliveryId);
      assert.equal(d.state, 'pending');
      assert.equal(d.attempt_count, k);
      assert.equal(d.attempts[k - 1].status_code, 500);
      assert.equal(d.attempts[k - 1].error, 'answered 500');
      const gap = Date.parse(d.next_attempt_time) - Date.parse(d.attempts[k - 1].time);
      const nominal = BASE * RETRY_MULTIPLES[k - 1];
      assert.ok(gap >= Math.floor(nominal * 0.8) && gap <= Math.ceil(nominal * 1.2), `retry ${k}: ${gap} ms for nominal ${nominal}`);
      // not a moment early: just before it is due nothing is sent
      clock.set(Date.parse(d.next_attempt_time) - 1);
      await settled();
      assert.equal(ofId(receiver.received, eventId).length, k);
      clock.set(Date.parse(d.next_attempt_time));
      t.service.ctx.webhooks.dispatcher.poke();
    }
    await receiver.waitFor((r) => ofId(r, eventId).length >= 4);
    await settled();
    const all = ofId(receiver.received, eventId);
    assert.equal(all.length, 4);
    assert.ok(all.every((r) => r.verified && r.event.id === eventId));
    assert.deepEqual(all.map((r) => r.status), [500, 500, 500, 200]);
    const d = await delivery(id, deliveryId);
    assert.equal(d.state, 'succeeded');
    assert.deepEqual(d.attempts.map((a: any) => a.status_code), [500, 500, 500, 200]);
    assert.equal(d.next_attempt_time, '');
  });

  test('always failing: 1 + 5 attempts, then failed in the log; resend delivers the same webhook-id', async () => {
    let healthy = false;
    const { receiver, id } = await subscribed(() => ({ status: healthy ? 200 : 503 }));
    const { eventId, deliveryId } = await sendTest(id);
    for (let k = 1; k <= 6; k++) {
      await receiver.waitFor((r) => ofId(r, eventId).length >= k);
      await settled();
      const d = await delivery(id, deliveryId);
      if (k < 6) {
        clock.set(Date.parse(d.next_attempt_time));
        t.service.ctx.webhooks.dispatcher.poke();
      }
    }
    await settled();
    const d = await delivery(id, deliveryId);
    assert.equal(d.state, 'failed');
    assert.equal(d.attempt_count, 6);
    assert.deepEqual(d.attempts.map((a: any) => a.attempt), [1, 2, 3, 4, 5, 6]);
    assert.ok(d.attempts.every((a: any) => a.status_code === 503));
    assert.equal(ofId(receiver.received, eventId).length, 6);
    const failedOnly = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${id}/deliveries?state=failed` });
    assert.deepEqual(failedOnly.data.deliveries.map((x: any) => x.delivery_id), [deliveryId]);

    healthy = true;
    const resent = await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${id}/deliveries/${deliveryId}:resend`, body: {} });
    assert.equal(resent.code, 'ok', resent.message);
    assert.equal(resent.data.delivery.event_id, eventId);
    assert.notEqual(resent.data.delivery.delivery_id, deliveryId);
    await receiver.waitFor((r) => ofId(r, eventId).length >= 7);
    await settled();
    assert.equal(ofId(receiver.received, eventId)[6].status, 200);
    assert.equal((await delivery(id, resent.data.delivery.delivery_id)).state, 'succeeded');
    const pending = await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${id}/deliveries/dlv_01J00000000000000000000000:resend`, body: {} });
    assert.equal(pending.code, 'not_found');
  });

  test('a Retry-After of 0 on 503 waits the base interval all the same (the dispatcher applies nextRetryDelay: five retries within a second otherwise)', async () => {
    const { id, sent } = await retriedAfter(503, '0', BASE);
    assert.equal((await delivery(id, sent.deliveryId)).state, 'succeeded');
  });

  test('Retry-After on 429 sets the next attempt; 410 Gone pauses the subscription until resumed', async () => {
    let gone = false;
    const { receiver, id, sent: first } = await retriedAfter(429, '7', 7000, () => (gone ? { status: 410 } : { status: 200 }));
    assert.equal((await delivery(id, first.deliveryId)).state, 'succeeded');

    gone = true;
    const second = await sendTest(id);
    await receiver.waitFor((r) => ofId(r, second.eventId).length >= 1);
    await settled();
    const d = await delivery(id, second.deliveryId);
    assert.equal(d.state, 'failed');
    assert.equal(d.attempts[0].status_code, 410);
    const sub = await rest(t, key, { method: 'GET', path: `/v1/subscriptions/${id}` });
    assert.equal(sub.data.state, 'paused');
    assert.equal(sub.data.pause_reason, 'the endpoint answered 410 Gone');
    const refused = await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${id}:test`, body: {} });
    assert.equal(refused.code, 'failed_precondition');

    gone = false;
    const resumed = await rest(t, key, { method: 'PATCH', path: `/v1/subscriptions/${id}`, body: { paused: false } });
    assert.equal(resumed.data.state, 'active');
    const third = await sendTest(id);
    await receiver.waitFor((r) => ofId(r, third.eventId).some((x) => x.status === 200));
  });

  test('a redirect is not followed; a receiver slower than the timeout fails the attempt', async () => {
    const target = await w.receiver();
    const { receiver, id } = await subscribed(() => ({ status: 302, headers: { location: target.url } }));
    const moved = await sendTest(id);
    await receiver.waitFor((r) => r.length >= 1);
    await settled();
    const d = await delivery(id, moved.deliveryId);
    assert.equal(d.attempts[0].status_code, 302);
    assert.equal(d.attempts[0].error, 'redirect (302) not followed');
    assert.equal(target.received.length, 0);

    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    receiver.respond = async () => {
      await held;
      return { status: 200 };
    };
    const slow = await sendTest(id);
    await settled(); // the attempt ends at the timeout (the receiver records it only once released)
    const s = await delivery(id, slow.deliveryId);
    assert.equal(s.attempts[0].status_code, 0);
    assert.equal(s.attempts[0].error, `timeout after ${TIMEOUT} ms`);
    release();
  });
});

describe('entity deletion', () => {
  test('a pending delivery of a subscription whose entity is deleted is never attempted again', async () => {
    const e = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:doomed', frequency: 'PT1H', axes: [{ name: 'cpu' }] } });
    assert.equal(e.code, 'ok', e.message);
    const { receiver, id } = await subscribed(() => ({ status: 503 }), 'server:doomed');
    const { eventId, deliveryId } = await sendTest(id);
    await receiver.waitFor((r) => ofId(r, eventId).length >= 1);
    await settled();
    const d = await delivery(id, deliveryId);
    assert.equal(d.state, 'pending');
    assert.equal((await rest(t, key, { method: 'DELETE', path: '/v1/entities/server:doomed' })).code, 'ok');
    const rows = await t.service.ctx.database.db.selectFrom('webhook_deliveries').select('id').where('subscription_id', '=', id).execute();
    assert.deepEqual(rows, [], 'the delivery went with its subscription');
    clock.set(Date.parse(d.next_attempt_time) + 1);
    t.service.ctx.webhooks.dispatcher.poke();
    await settled();
    assert.equal(ofId(receiver.received, eventId).length, 1, 'no retry after the delete');
  });
});

describe('secret rotation', () => {
  test('during the grace period both secrets sign; after it only the new one', async () => {
    const { receiver, id, secret } = await subscribed();
    const rotated = await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${id}:rotateSecret`, body: { grace_period_seconds: 60 } });
    const fresh = rotated.data.secret as string;
    for (const secrets of [[secret], [fresh]]) {
      receiver.secrets = secrets;
      const { eventId } = await sendTest(id);
      await receiver.waitFor((r) => ofId(r, eventId).length >= 1);
      const got = ofId(receiver.received, eventId)[0];
      assert.equal(got.verified, true, got.refusal);
      assert.equal(String(got.headers['webhook-signature']).split(' ').length, 2);
      assert.equal(String(got.headers['x-service-signature']).split(',').filter((p) => p.startsWith('v1=')).length, 2);
    }
    clock.advance(61_000);
    receiver.secrets = [secret];
    const late = await sendTest(id);
    await receiver.waitFor((r) => ofId(r, late.eventId).length >= 1);
    assert.equal(ofId(receiver.received, late.eventId)[0].verified, false);
    assert.equal(String(ofId(receiver.received, late.eventId)[0].headers['webhook-signature']).split(' ').length, 1);
    receiver.secrets = [fresh];
    await settled();
    const d = await delivery(id, late.deliveryId);
    clock.set(Date.parse(d.next_attempt_time));
    t.service.ctx.webhooks.dispatcher.poke();
    await receiver.waitFor((r) => ofId(r, late.eventId).some((x) => x.verified && x.status === 200));
  });
});
