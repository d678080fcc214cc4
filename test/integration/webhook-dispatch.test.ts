/**
 * The dispatcher on the real clock: a receiver that hangs until the attempt's timeout must not
 * hold back another subscription's retry. (The other delivery tests run on a manual clock and
 * poke the dispatcher; here nothing pokes it when the retry falls due, only its own timer.)
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { ACCOUNT_CONCURRENCY, CONCURRENCY } from '../../src/subscriptions/dispatcher';
import { rest } from '../helpers/dual';
import { startWebhookService, type WebhookService } from '../helpers/webhook-service';

/** Retry base: the first retry falls due about half a second after a failed attempt (well after the attempt is recorded and the dispatcher has gone to sleep). */
const BASE = 500;
/** Far longer than the test: a hanging attempt stays in flight throughout. */
const TIMEOUT = 60_000;
let w: WebhookService;

beforeAll(async () => {
  w = await startWebhookService({ retryBaseMs: BASE, timeoutMs: TIMEOUT });
});
afterAll(() => w.close());

const attempts = async (sub: string, deliveryId: string): Promise<number> => {
  const r = await rest(w.t, w.key, { method: 'GET', path: `/v1/subscriptions/${sub}/deliveries` });
  return r.data.deliveries.find((d: any) => d.delivery_id === deliveryId).attempt_count;
};

test("a hanging receiver does not delay another subscription's retry", async () => {
  let arrived!: () => void;
  const hanging = new Promise<void>((r) => (arrived = r));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const a = await w.subscribed(async () => {
    arrived();
    await held;
    return { status: 200 };
  });
  const aDelivery = (await w.sendTest(a.id)).deliveryId;
  await hanging; // A's attempt is in flight and stays so until released

  const b = await w.subscribed(({ attempt }) => ({ status: attempt === 0 ? 500 : 200 }));
  await w.sendTest(b.id);
  await b.receiver.waitFor((r) => r.filter((x) => x.verified).length >= 2);
  // B failed, fell due again and was retried while A's attempt was still open
  expect(await attempts(a.id, aDelivery)).toBe(0);
  expect(b.receiver.received.map((x) => x.status)).toEqual([500, 200]);

  release();
  await a.receiver.waitFor((r) => r.length >= 1);
  await w.t.service.ctx.webhooks.dispatcher.settled();
  expect(await attempts(a.id, aDelivery)).toBe(1);
});

test("one account's hanging receiver holds at most ACCOUNT_CONCURRENCY attempts: another account's delivery goes out at once (found by QA)", async () => {
  let arrivals = 0;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const a = await w.subscribed(async () => {
    arrivals++;
    await held;
    return { status: 200 };
  });
  // more due deliveries than the dispatcher has slots, all to the hanging receiver, due first
  for (let i = 0; i < 40; i++) await w.sendTest(a.id);
  const other = await w.t.account('enterprise');
  const created = await rest(w.t, other.key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:b', frequency: 'PT1H', axes: [{ name: 'cpu' }] } });
  expect(created.code).toBe('ok');
  const fast = await w.receiver(() => ({ status: 200 }));
  const sub = await rest(w.t, other.key, { method: 'POST', path: '/v1/subscriptions', body: { entity: 'server:b', url: fast.url } });
  expect(sub.code).toBe('ok');
  fast.secrets = [sub.data.secret];
  expect((await rest(w.t, other.key, { method: 'POST', path: `/v1/subscriptions/${sub.data.subscription.subscription_id}:test`, body: {} })).code).toBe('ok');
  await fast.waitFor((r) => r.filter((x) => x.verified).length >= 1);
  expect(arrivals).toBeLessThanOrEqual(ACCOUNT_CONCURRENCY);
  release();
  await a.receiver.waitFor((r) => r.length >= 40);
  await w.t.service.ctx.webhooks.dispatcher.settled();
  expect(arrivals).toBe(40);
});

test("accounts with nothing in flight are served first: when eight accounts' hanging receivers hold every slot, the next slot that frees goes to another account, not to their backlogs (found by QA)", async () => {
  const releases: (() => void)[] = [];
  let arrivals = 0;
  const hang = async () => {
    arrivals++;
    await new Promise<void>((r) => releases.push(r));
    return { status: 200 };
  };
  // eight accounts, each with more due deliveries than its share, all to receivers that hang
  for (let i = 0; i < CONCURRENCY / ACCOUNT_CONCURRENCY; i++) {
    const acct = await w.t.account('enterprise');
    const entity = await rest(w.t, acct.key, { method: 'POST', path: '/v1/entities', body: { entity: `server:hang-${i}`, frequency: 'PT1H', axes: [{ name: 'cpu' }] } });
    expect(entity.code).toBe('ok');
    const receiver = await w.receiver(hang);
    const sub = await rest(w.t, acct.key, { method: 'POST', path: '/v1/subscriptions', body: { entity: `server:hang-${i}`, url: receiver.url } });
    expect(sub.code).toBe('ok');
    receiver.secrets = [sub.data.secret];
    for (let k = 0; k < ACCOUNT_CONCURRENCY + 2; k++) {
      expect((await rest(w.t, acct.key, { method: 'POST', path: `/v1/subscriptions/${sub.data.subscription.subscription_id}:test`, body: {} })).code).toBe('ok');
    }
  }
  const until = async (done: () => boolean) => {
    for (let waited = 0; !done() && waited < 10_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  };
  await until(() => arrivals === CONCURRENCY);
  expect(arrivals).toBe(CONCURRENCY);
  // another account's delivery, due after all their backlogs
  const other = await w.t.account('enterprise');
  expect((await rest(w.t, other.key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:calm', frequency: 'PT1H', axes: [{ name: 'cpu' }] } })).code).toBe('ok');
  let arrivalsBefore = -1;
  const fast = await w.receiver(() => {
    arrivalsBefore = arrivals;
    return { status: 200 };
  });
  const sub = await rest(w.t, other.key, { method: 'POST', path: '/v1/subscriptions', body: { entity: 'server:calm', url: fast.url } });
  fast.secrets = [sub.data.secret];
  expect((await rest(w.t, other.key, { method: 'POST', path: `/v1/subscriptions/${sub.data.subscription.subscription_id}:test`, body: {} })).code).toBe('ok');
  // one attempt ends: the slot it frees is the other account's (before: the backlog of the account that freed it)
  releases.shift()!();
  await until(() => arrivalsBefore >= 0 || arrivals > CONCURRENCY);
  expect(arrivalsBefore).toBe(CONCURRENCY);
  // the rest go out as slots free
  const total = (CONCURRENCY / ACCOUNT_CONCURRENCY) * (ACCOUNT_CONCURRENCY + 2);
  for (let waited = 0; arrivals < total && waited < 20_000; waited += 20) {
    for (let r = releases.shift(); r; r = releases.shift()) r();
    await new Promise((r) => setTimeout(r, 20));
  }
  for (let r = releases.shift(); r; r = releases.shift()) r();
  expect(arrivals).toBe(total);
  await w.t.service.ctx.webhooks.dispatcher.settled();
}, 60_000);
