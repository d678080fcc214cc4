/**
 * Webhook secrets and signatures (API.md section 8).
 *
 * A secret is `whsec_` + base64 of 32 random bytes, as Standard Webhooks serialises symmetric
 * secrets. Each header uses the key its own convention names:
 * - `X-Service-Signature: t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, keyed with the
 *   secret exactly as shown to the user (its UTF-8 text, `whsec_` included), as API.md section 8
 *   writes it and as Stripe keys the same header format; one `v1=` per signing secret;
 * - `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256(key,
 *   "<id>.<t>.<body>")>` keyed with the decoded bytes after `whsec_`, as the Standard Webhooks
 *   specification requires (space-separated, one per signing secret), which the
 *   `standardwebhooks` packages verify.
 * `verifyWebhook` is the receiver side (the CLI listener uses it); it requires both forms.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How a secret starts (Standard Webhooks' symmetric secret serialisation). */
export const SECRET_PREFIX = 'whsec_';
/** Secret length in bytes (Standard Webhooks: 24 to 64). */
export const SECRET_BYTES = 32;
/** How far a signature's timestamp may be from the receiver's clock (Standard Webhooks: 5 minutes). */
export const TIMESTAMP_TOLERANCE_S = 300;

/** A new random secret. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The Standard Webhooks HMAC key of a secret (`whsec_` + base64): the decoded bytes. Throws on anything else. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  if (key.length < 16) throw new Error('webhook secret is too short');
  return key;
}

/** The `X-Service-Signature` HMAC key of a secret: the secret's own text (checked like `secretKey`). */
export function serviceSignatureKey(secret: string): Buffer {
  secretKey(secret);
  return Buffer.from(secret, 'utf8');
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}

/** The signature headers of one attempt: `id` (the event id), `timestamp` in unix seconds, each secret signing. */
export function signatureHeaders(id: string, timestamp: number, body: string, secrets: readonly string[]): Record<string, string> {
  const standardKeys = secrets.map(secretKey);
  const serviceKeys = secrets.map(serviceSignatureKey);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardKeys.map((k) => `v1,${hmac(k, `${id}.${timestamp}.${body}`).toString('base64')}`).join(' '),
    'x-service-signature': [`t=${timestamp}`, ...serviceKeys.map((k) => `v1=${hmac(k, `${timestamp}.${body}`).toString('hex')}`)].join(','),
  };
}

/** The outcome of verifying a delivery. */
export type Verification = { readonly ok: true; readonly id: string; readonly timestamp: number } | { readonly ok: false; readonly reason: string };

function equal(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Verify a received delivery with `secret`: both signature forms must carry a valid signature,
 * both timestamps must agree and lie within the tolerance of `nowS` (unix seconds).
 */
export function verifyWebhook(body: string, headers: Readonly<Record<string, string | undefined>>, secret: string, nowS: number): Verification {
  const key = secretKey(secret);
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sw = headers['webhook-signature'];
  const xs = headers['x-service-signature'];
  if (!id || !ts || !sw || !xs) return { ok: false, reason: 'missing signature headers' };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: 'bad webhook-timestamp' };
  const timestamp = Number(ts);
  if (Math.abs(nowS - timestamp) > TIMESTAMP_TOLERANCE_S) return { ok: false, reason: `timestamp ${timestamp} is more than ${TIMESTAMP_TOLERANCE_S} s from now` };
  const standard = hmac(key, `${id}.${timestamp}.${body}`);
  const standardOk = sw.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    return version === 'v1' && value !== undefined && equal(Buffer.from(value, 'base64'), standard);
  });
  if (!standardOk) return { ok: false, reason: 'no valid webhook-signature' };
  const parts = xs.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  if (t !== ts) return { ok: false, reason: 'X-Service-Signature timestamp differs from webhook-timestamp' };
  const service = hmac(serviceSignatureKey(secret), `${t}.${body}`);
  const serviceOk = parts.some(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v) && equal(Buffer.from(v, 'hex'), service));
  if (!serviceOk) return { ok: false, reason: 'no valid X-Service-Signature' };
  return { ok: true, id, timestamp };
}
