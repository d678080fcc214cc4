/**
 * A test service for webhook delivery: plain-http loopback receivers allowed, the retry base and
 * attempt timeout given, one enterprise account with an hourly entity to subscribe to; and the
 * two steps every delivery test takes, a subscription to a fresh receiver and a test event.
 */
import assert from 'node:assert/strict';
import type { Clock } from '../../src/clock';
import { rest } from './dual';
import { startReceiver, type Receiver } from './receiver';
import { startTestService, type TestService } from './service';

export interface WebhookService {
  readonly t: TestService;
  /** The account's API key. */
  readonly key: string;
  /** A receiver, closed with the service. */
  receiver(respond?: Parameters<typeof startReceiver>[1]): Promise<Receiver>;
  /** A receiver (closed with the service) and a subscription on `entity` (default `server:api-1`) that sends to it. */
  subscribed(respond?: Parameters<typeof startReceiver>[1], entity?: string): Promise<{ receiver: Receiver; id: string; secret: string }>;
  /** Send a `subscription.test` event. */
  sendTest(id: string): Promise<{ eventId: string; deliveryId: string }>;
  close(): Promise<void>;
}

export async function startWebhookService(options: { retryBaseMs: number; timeoutMs: number; clock?: Clock; env?: Record<string, string> }): Promise<WebhookService> {
  const t = await startTestService({
    clock: options.clock,
    env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_RETRY_BASE_MS: String(options.retryBaseMs), WEBHOOK_TIMEOUT_MS: String(options.timeoutMs), ...options.env },
  });
  const key = (await t.account('enterprise')).key;
  const e = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:api-1', frequency: 'PT1H', axes: [{ name: 'cpu' }] } });
  assert.equal(e.code, 'ok', e.message);
  const receivers: Receiver[] = [];
  const self: WebhookService = {
    t,
    key,
    async receiver(respond) {
      const receiver = await startReceiver([], respond);
      receivers.push(receiver);
      return receiver;
    },
    async subscribed(respond, entity = 'server:api-1') {
      const receiver = await self.receiver(respond);
      const r = await rest(t, key, { method: 'POST', path: '/v1/subscriptions', body: { entity, url: receiver.url } });
      assert.equal(r.code, 'ok', r.message);
      receiver.secrets = [r.data.secret];
      return { receiver, id: r.data.subscription.subscription_id as string, secret: r.data.secret as string };
    },
    async sendTest(id) {
      const r = await rest(t, key, { method: 'POST', path: `/v1/subscriptions/${id}:test`, body: {} });
      assert.equal(r.code, 'ok', r.message);
      return { eventId: r.data.event_id as string, deliveryId: r.data.delivery.delivery_id as string };
    },
    async close() {
      await t.close();
      await Promise.all(receivers.map((r) => r.close()));
    },
  };
  return self;
}
