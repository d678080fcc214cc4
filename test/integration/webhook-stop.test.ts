/**
 * A graceful stop stops the webhook workers alongside the drain of calls, not after it: while an
 * open call holds the drain, a retry falling due is not attempted by the stopping process (it
 * stays in the database for another replica or the next start), so the stop takes the drain and
 * no attempt started after it began. Before, the dispatcher went on claiming through the drain and
 * the stop then waited for those attempts.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { EntityServiceClient, type BulkIngestObservationsRequest } from '../../gen/forecast/v1/entity_service.pb';
import { startWebhookService, type WebhookService } from '../helpers/webhook-service';

const GRACE_MS = 2500;
let w: WebhookService;

beforeAll(async () => {
  // the first retry 1,000 ms after the first attempt (±20%): due during the drain
  w = await startWebhookService({ retryBaseMs: 1000, timeoutMs: 5000, env: { SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
});
afterAll(() => w.close());

test('no delivery attempt starts once the stop has begun, while an open call holds the drain', async () => {
  const { receiver, id } = await w.subscribed(() => ({ status: 500 }));
  await w.sendTest(id);
  await receiver.waitFor((r) => r.length >= 1);
  // an open client stream: the drain waits for it until the grace runs out
  const entities = w.t.client(EntityServiceClient);
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${w.key}`);
  const stream = entities.bulkIngestObservations(md, () => undefined);
  const message: BulkIngestObservationsRequest = { entity: 'server:api-1', observations: [{ axis: 'cpu', time: '2026-01-01T00:00:00Z', value: 1, revision: '0' }] };
  stream.write(message);
  // (the stream reaches the server: the drain below must be held for the test to show anything)
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = Date.now();
  await w.t.service.stop();
  const took = Date.now() - started;
  stream.cancel();
  // the drain really was held (else this test would show nothing) ...
  expect(took).toBeGreaterThanOrEqual(GRACE_MS - 100);
  // ... and the retries that fell due during it (the first 0.8–1.2 s after the first attempt, the stop began about 0.5 s after it) were left for later
  expect(receiver.received).toHaveLength(1);
}, 30_000);
