/**
 * The dispatcher on the real clock: a receiver that hangs until the attempt's timeout must not
 * hold back another subscription's retry. (The other delivery tests run on a manual clock and
 * poke the dispatcher; here nothing pokes it when the retry falls due, only its own timer.)
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
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
