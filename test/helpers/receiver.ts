/**
 * A webhook receiver for tests: a real HTTP server on loopback that verifies every delivery the
 * way a customer would, twice and independently of the service's code — with the
 * `standardwebhooks` package (webhook-id / webhook-timestamp / webhook-signature) and with a
 * plain HMAC-SHA256 check of `X-Service-Signature` — and refuses forged or stale (timestamp more
 * than 5 minutes away: a replayed capture) deliveries with 400. A genuine delivery of a
 * webhook-id it already acknowledged is a duplicate: acknowledged again (200) without asking the
 * responder, as Standard Webhooks advises. Tests decide what it answers to genuine deliveries
 * and wait on what it saw, never on time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Parsed body when it verified. */
  readonly event: any;
  /** Verified by both checks. */
  readonly verified: boolean;
  /** Verified, but its webhook-id was already acknowledged. */
  readonly duplicate: boolean;
  /** Why it was refused (empty when verified). */
  readonly refusal: string;
  /** What the receiver answered. */
  readonly status: number;
  /** Real time it arrived (ms). */
  readonly at: number;
}

/** What to answer to the n-th verified delivery (0-based) of a webhook-id. */
export type Responder = (r: { id: string; attempt: number; event: any }) => { status: number; headers?: Record<string, string> } | Promise<{ status: number; headers?: Record<string, string> }>;

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Secrets accepted (any one verifying is enough, as during a rotation). */
  secrets: string[];
  respond: Responder;
  /** Resolves once `predicate` holds for what was received (checked on every arrival). */
  waitFor(predicate: (received: readonly Received[]) => boolean): Promise<void>;
  close(): Promise<void>;
}

const TOLERANCE_S = 300;

/** The independent check of `X-Service-Signature: t=…,v1=…` (hex HMAC-SHA256 of "<t>.<body>" keyed with the secret's text, as API.md writes it). */
export function serviceSignatureValid(header: string | undefined, body: string, secret: string, nowS = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.split('=') as [string, string]);
  const t = parts.find(([k]) => k === 't')?.[1];
  if (!t || Math.abs(nowS - Number(t)) > TOLERANCE_S) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts.some(([k, v]) => k === 'v1' && v.length === 64 && timingSafeEqual(Buffer.from(v, 'hex'), expected));
}

export async function startReceiver(secrets: string[] = [], respond: Responder = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  const accepted = new Map<string, number>();
  const waiters: { predicate: (r: readonly Received[]) => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.predicate(received)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const self: Receiver = {
    url: '',
    received,
    secrets,
    respond,
    waitFor(predicate) {
      return new Promise((resolve) => {
        waiters.push({ predicate, resolve });
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      let event: any;
      let refusal = '';
      const id = headers['webhook-id'] ?? '';
      const standardOk = self.secrets.some((s) => {
        try {
          event = new Webhook(s).verify(body, headers);
          return true;
        } catch (err) {
          refusal = `standardwebhooks: ${(err as Error).message}`;
          return false;
        }
      });
      if (standardOk) refusal = '';
      if (standardOk && !self.secrets.some((s) => serviceSignatureValid(headers['x-service-signature'], body, s))) refusal = 'X-Service-Signature does not verify';
      if (!refusal && event?.id !== id) refusal = 'body id differs from webhook-id';
      const verified = refusal === '' && self.secrets.length > 0;
      const duplicate = verified && accepted.has(id);
      let status = verified ? 200 : 400;
      let extra: Record<string, string> = {};
      if (verified && !duplicate) {
        const attempt = received.filter((r) => r.verified && !r.duplicate && r.headers['webhook-id'] === id).length;
        const answer = await self.respond({ id, attempt, event });
        status = answer.status;
        extra = answer.headers ?? {};
        if (status >= 200 && status < 300) accepted.set(id, Date.now());
      }
      received.push({ headers: req.headers, body, event: verified ? event : undefined, verified, duplicate, refusal: verified ? '' : refusal || 'no secret', status, at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain', ...extra });
      res.end(verified ? 'ok' : refusal);
      check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (self as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return self;
}
