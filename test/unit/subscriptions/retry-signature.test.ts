/** The retry schedule, Retry-After parsing, and the signature scheme against an independent verifier. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { MAX_ATTEMPTS, nextRetryDelay, retryAfterMs, retryDelay } from '../../../src/subscriptions/retry-schedule';
import { newWebhookSecret, signatureHeaders, verifyWebhook } from '../../../src/subscriptions/webhook-signature';

test('the production schedule: 5 s, 5 min, 30 min, 2 h, 5 h, each within ±20%; none after the fifth retry', () => {
  const nominal = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000];
  for (let n = 1; n <= 5; n++) {
    assert.equal(retryDelay(n, 5000, () => 0.5), nominal[n - 1]);
    assert.equal(retryDelay(n, 5000, () => 0), nominal[n - 1] * 0.8);
    const top = retryDelay(n, 5000, () => 0.999999)!;
    assert.ok(top <= nominal[n - 1] * 1.2 && top >= nominal[n - 1] * 1.1999, String(top));
  }
  assert.equal(MAX_ATTEMPTS, 6);
  assert.equal(retryDelay(6, 5000), undefined);
  assert.equal(retryDelay(0, 5000), undefined);
  assert.equal(retryDelay(2, 10, () => 0.5), 600);
});

test('a Retry-After replaces the scheduled delay, sooner or later, but never below the base interval (found by QA: Retry-After: 0 made all five retries within a second)', () => {
  const base = 5000;
  assert.equal(nextRetryDelay(1, base, 0), base);
  assert.equal(nextRetryDelay(1, base, 1200), base);
  assert.equal(nextRetryDelay(1, base, 7000), 7000);
  // the fourth retry is scheduled 2 h on; a receiver may ask for it sooner
  assert.equal(nextRetryDelay(4, base, 60_000), 60_000);
  assert.equal(nextRetryDelay(4, base, undefined, () => 0.5), retryDelay(4, base, () => 0.5));
  assert.equal(nextRetryDelay(MAX_ATTEMPTS, base, 60_000), undefined);
});

test('Retry-After: seconds or an HTTP date, capped at a day, garbage ignored', () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(retryAfterMs('7', now), 7000);
  assert.equal(retryAfterMs('999999', now), 86_400_000);
  assert.equal(retryAfterMs(new Date(now + 90_000).toUTCString(), now), 90_000);
  assert.equal(retryAfterMs(new Date(now - 90_000).toUTCString(), now), 0);
  assert.equal(retryAfterMs('soon', now), undefined);
  // the three HTTP-date forms of RFC 9110 (the asctime one names no zone: GMT)
  const at = new Date(now + 90_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const [wd, mon] = [at.toUTCString().slice(0, 3), at.toUTCString().slice(8, 11)];
  const clock = `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}`;
  const weekday = { Mon: 'Monday', Tue: 'Tuesday', Wed: 'Wednesday', Thu: 'Thursday', Fri: 'Friday', Sat: 'Saturday', Sun: 'Sunday' }[wd];
  assert.equal(retryAfterMs(`${weekday}, ${pad(at.getUTCDate())}-${mon}-${String(at.getUTCFullYear()).slice(2)} ${clock} GMT`, now), 90_000);
  assert.equal(retryAfterMs(`${wd} ${mon} ${String(at.getUTCDate()).padStart(2, ' ')} ${clock} ${at.getUTCFullYear()}`, now), 90_000);
  // neither delta-seconds nor an HTTP date: ignored, not read by Date.parse as a date in 2001 (found by QA: a retry at once)
  for (const garbage of ['-5', '1.5', '5 5', '1e3', 'NaN', '0x10', 'Tuesday 2026']) assert.equal(retryAfterMs(garbage, now), undefined, garbage);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

test('signatures verify with the standardwebhooks package and a plain HMAC; both secrets sign during a rotation', () => {
  const [a, b] = [newWebhookSecret(), newWebhookSecret()];
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const body = JSON.stringify({ id: 'evt_1', type: 'subscription.test', created_at: '2026-01-01T00:00:00Z', data: {} });
  const now = Math.floor(Date.now() / 1000);
  const h = signatureHeaders('evt_1', now, body, [a, b]);
  for (const s of [a, b]) {
    assert.deepEqual(new Webhook(s).verify(body, h), JSON.parse(body));
    // X-Service-Signature is keyed with the secret's text as shown (API.md), Standard Webhooks with its decoded bytes
    const hex = createHmac('sha256', s).update(`${now}.${body}`).digest('hex');
    assert.ok(h['x-service-signature'].split(',').includes(`v1=${hex}`));
    const decoded = createHmac('sha256', Buffer.from(s.slice(6), 'base64')).update(`${now}.${body}`).digest('hex');
    assert.ok(!h['x-service-signature'].includes(decoded));
    assert.deepEqual(verifyWebhook(body, h, s, now), { ok: true, id: 'evt_1', timestamp: now });
  }
  const stranger = newWebhookSecret();
  assert.throws(() => new Webhook(stranger).verify(body, h));
  assert.equal(verifyWebhook(body, h, stranger, now).ok, false);
  assert.equal(verifyWebhook(body + ' ', h, a, now).ok, false);
  assert.deepEqual(verifyWebhook(body, h, a, now + 301), { ok: false, reason: `timestamp ${now} is more than 300 s from now` });
  assert.equal(verifyWebhook(body, { ...h, 'x-service-signature': `t=${now}` }, a, now).ok, false);
  assert.equal(verifyWebhook(body, { ...h, 'webhook-id': 'evt_2' }, a, now).ok, false);
});
