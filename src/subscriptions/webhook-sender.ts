/**
 * One webhook attempt: a POST over a fresh connection (no keep-alive, so every attempt resolves
 * and checks the address again) through the SSRF guard at connection time: the host name is
 * resolved by our own `lookup`, which refuses the connection when any address is not allowed,
 * and the connected socket's peer address is checked once more (it also covers IP-literal hosts,
 * which Node connects to without a lookup). Redirects are not followed: a 3xx is a failed
 * attempt. The whole attempt, connection to last byte, is bounded by the timeout.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { literalHost, resolveAllowed, UrlRefusedError, type AddressGuard, type Resolver } from './ssrf-guard';

/** How an attempt ended. */
export interface AttemptResult {
  /** HTTP status, 0 when there was no answer. */
  readonly status: number;
  /** The `Retry-After` header of the answer, if any. */
  readonly retryAfter?: string;
  /** Why the attempt failed without an answer, or why the answer is a failure; empty on 2xx. */
  readonly error: string;
  readonly latencyMs: number;
}

/** The guard, resolver, timeout and scheme policy an attempt runs under. */
export interface SenderOptions {
  readonly guard: AddressGuard;
  readonly resolver: Resolver;
  /** Whole-attempt timeout (10 s in production, `WEBHOOK_TIMEOUT_MS`). */
  readonly timeoutMs: number;
  /** Whether `http:` URLs may be used (`WEBHOOK_ALLOW_HTTP`). */
  readonly allowHttp: boolean;
}

/** Most bytes of an answer read (and discarded): receivers owe us a status, not a body. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** The User-Agent of every attempt. */
export const USER_AGENT = 'forecast-webhooks/1.0';

/** POST `body` with `headers` to `url`. Never throws: failures are results. */
export function postWebhook(url: string, body: string, headers: Readonly<Record<string, string>>, options: SenderOptions): Promise<AttemptResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
  return new Promise((resolve) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (status: number, error: string, retryAfter?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, error, retryAfter, latencyMs: elapsed() });
    };
    const timer = setTimeout(() => {
      finish(0, `timeout after ${options.timeoutMs} ms`);
      req?.destroy();
    }, options.timeoutMs);
    let target: URL;
    try {
      target = new URL(url);
      if (target.protocol !== 'https:' && !(target.protocol === 'http:' && options.allowHttp)) {
        throw new UrlRefusedError(`${target.protocol} URLs are not allowed: use https`);
      }
      const literal = literalHost(target);
      const refused = literal === undefined ? undefined : options.guard.refusal(literal);
      if (refused) throw new UrlRefusedError(refused);
    } catch (err) {
      finish(0, err instanceof UrlRefusedError ? err.message : `bad URL: ${(err as Error).message}`);
      return;
    }
    const lookup: LookupFunction = (hostname, opts, callback) => {
      resolveAllowed(hostname, options.guard, options.resolver).then(
        (addresses) => {
          if ((opts as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, addresses.map((a) => ({ ...a })));
          else callback(null, addresses[0].address, addresses[0].family);
        },
        (err: Error) => callback(Object.assign(err, { code: 'EREFUSED_BY_GUARD' }) as NodeJS.ErrnoException, '', 0),
      );
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    req = send(target, {
      method: 'POST',
      agent: false,
      lookup,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT },
    });
    req.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        const refused = socket.remoteAddress ? options.guard.refusal(socket.remoteAddress) : 'no peer address';
        if (refused) {
          finish(0, refused);
          req?.destroy();
        }
      });
    });
    req.on('response', (res: IncomingMessage) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const status = res.statusCode ?? 0;
      const retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined;
      const outcome = () => finish(status, status >= 200 && status < 300 ? '' : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`, retryAfter);
      res.on('end', outcome);
      res.on('close', outcome);
      res.on('error', outcome);
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish(0, describe(err)));
    req.end(body);
  });
}

/** A short, stable description of a connection error. */
function describe(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EREFUSED_BY_GUARD':
      return err.message;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host does not resolve';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}
