/**
 * Idempotency for every POST method on both protocols (API.md section 11). The key
 * (`Idempotency-Key` header / `idempotency-key` metadata, ≤ 255 characters) is scoped to the
 * account and the method. The first call claims the key atomically (INSERT … ON CONFLICT DO
 * NOTHING); within 24 hours the same key with the same request replays the stored outcome with
 * `Idempotent-Replayed: true`, with a different request is 422 `idempotency_key_reused`, and
 * while the first call still runs is 409 `idempotency_key_in_use`.
 *
 * A response is stored only once the endpoint has started executing (as Stripe does): requests
 * refused before that — authentication (401), scopes (403), malformed input and validation (400
 * `invalid_argument` / `invalid_cursor`: nothing ran, nothing was written) — release the key, so
 * a corrected retry with the same key executes. Quota refusals (which say nothing about the
 * request) and outcomes with status ≥ 500 release it too.
 *
 * Stored responses are sealed with the master key (AES-256-GCM, `store/secret-box.ts`), bound to
 * (account, method, key): a response that carries a secret (a new API key from CreateKey or
 * RotateKey) is never in the database in clear, and its replay returns it whole.
 *
 * The request fingerprint is the SHA-256 of its binary protobuf encoding, identical for a REST
 * and a gRPC call of the same request.
 *
 * A method that needs no API key (SignUp) has no account to scope its keys to: they share one
 * scope per method (account id ''), so the key alone guards the replay, which may carry a new API
 * key. There it must be at least MIN_PUBLIC_KEY_LENGTH characters (a random UUID is 36), and it is
 * stored only as its SHA-256, so the table never holds what would unlock a replay.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock';
import type { Database } from '../store/database';
import { SecretBox } from '../store/secret-box';
import { invalidArgument, ServiceError, type ErrorCode, quote } from './errors';
import type { Interceptor } from './pipeline';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
/** A claim whose call has not finished after this long is considered abandoned (process died). */
export const IDEMPOTENCY_LOCK_MS = 5 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Shortest key a method without an API key accepts (see the file comment). */
export const MIN_PUBLIC_KEY_LENGTH = 16;

/** Error codes that refuse the request itself before anything ran: never stored, the key is released. */
const NOT_EXECUTED: ReadonlySet<ErrorCode> = new Set(['invalid_argument', 'invalid_cursor', 'unauthenticated', 'permission_denied', 'quota_exceeded']);

/** Response headers that describe the moment, not the response: never replayed from storage. */
const VOLATILE_HEADERS = new Set(['request-id', 'api-version', 'ratelimit', 'ratelimit-policy', 'retry-after', 'idempotent-replayed']);

interface StoredRow {
  fingerprint: string;
  state: string;
  outcome: string | null;
  response: string | null;
  headers: string | null;
}

export class IdempotencyStore {
  constructor(
    private readonly database: Database,
    /** Seals stored responses (they may carry secrets). */
    private readonly box: SecretBox,
  ) {}

  /** What a stored response is sealed to: the entry it belongs to. */
  private static context(accountId: string, method: string, key: string): string {
    return `idempotency:${accountId}:${method}:${key}`;
  }

  /** Claim (account, method, key) for a new call, or return the row that holds it. */
  async claim(accountId: string, method: string, key: string, fingerprint: string, now: number): Promise<{ claimed: true } | { claimed: false; row: StoredRow }> {
    const db = this.database.db;
    // Expired windows and abandoned claims no longer hold the key.
    await db
      .deleteFrom('idempotency')
      .where('account_id', '=', accountId)
      .where('method', '=', method)
      .where('key', '=', key)
      .where((eb) => eb.or([eb('expire_time', '<=', now), eb.and([eb('state', '=', 'running'), eb('lock_expire_time', '<=', now)])]))
      .execute();
    const inserted = await db
      .insertInto('idempotency')
      .values({
        account_id: accountId,
        method,
        key,
        fingerprint,
        state: 'running',
        outcome: null,
        response: null,
        headers: null,
        create_time: now,
        lock_expire_time: now + IDEMPOTENCY_LOCK_MS,
        expire_time: now + IDEMPOTENCY_WINDOW_MS,
      })
      .onConflict((oc) => oc.columns(['account_id', 'method', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { claimed: true };
    const row = await db
      .selectFrom('idempotency')
      .select(['fingerprint', 'state', 'outcome', 'response', 'headers'])
      .where('account_id', '=', accountId)
      .where('method', '=', method)
      .where('key', '=', key)
      .executeTakeFirst();
    // Deleted between our insert and select (expired just now): treat as in use; the client retries.
    if (!row) return { claimed: false, row: { fingerprint, state: 'running', outcome: null, response: null, headers: null } };
    // Rows written before responses were sealed hold them in clear (none carries a secret: migration 0005 removed those).
    const response = row.response !== null && SecretBox.isSealed(row.response) ? this.box.openText(row.response, IdempotencyStore.context(accountId, method, key)) : row.response;
    return { claimed: false, row: { ...row, response } };
  }

  /** Record the outcome of a claimed call; `response` is stored sealed. */
  async complete(accountId: string, method: string, key: string, outcome: string, response: string, headers: Record<string, string>): Promise<void> {
    const sealed = this.box.seal(response, IdempotencyStore.context(accountId, method, key));
    await this.database.db
      .updateTable('idempotency')
      .set({ state: 'done', outcome, response: sealed, headers: JSON.stringify(headers) })
      .where('account_id', '=', accountId)
      .where('method', '=', method)
      .where('key', '=', key)
      .execute();
  }

  /** Give a claimed key back (outcome not stored). */
  async release(accountId: string, method: string, key: string): Promise<void> {
    await this.database.db.deleteFrom('idempotency').where('account_id', '=', accountId).where('method', '=', method).where('key', '=', key).execute();
  }

  /** Delete every entry whose window has ended; returns how many. */
  async purgeExpired(now: number): Promise<number> {
    const res = await this.database.db.deleteFrom('idempotency').where('expire_time', '<=', now).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

export interface IdempotencyOptions {
  /** Which methods take idempotency keys (the POST methods). */
  readonly appliesTo: (methodPath: string) => boolean;
  /** Called on a replay of an authenticated call to add headers a fresh call would have (e.g. current RateLimit). */
  readonly onReplay?: (ctx: Parameters<Interceptor>[0]['ctx']) => Promise<void>;
}

/** The idempotency interceptor; place it before the quota interceptor so replays do not count. */
export function idempotencyInterceptor(store: IdempotencyStore, clock: Clock, options: IdempotencyOptions): Interceptor {
  return async (call, next) => {
    const { ctx, entry } = call;
    const key = ctx.header('idempotency-key');
    if (key === undefined || !options.appliesTo(entry.path)) return next();
    // No principal here means a method that needs no key (authentication ran before).
    const min = ctx.principal ? 1 : MIN_PUBLIC_KEY_LENGTH;
    if (key.length < min || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      const why = ctx.principal ? '' : ` (${entry.name} needs no API key, so the Idempotency-Key alone guards its replay: use a random value such as a UUID)`;
      throw invalidArgument('Idempotency-Key', `must be ${min}..${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${key.length}${why}`);
    }
    const bytes = await call.requestBytes();
    const fingerprint = createHash('sha256').update(bytes ?? Buffer.alloc(0)).digest('hex');
    const accountId = ctx.principal?.accountId ?? '';
    const stored = ctx.principal ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
    const claim = await store.claim(accountId, entry.path, stored, fingerprint, clock.now());
    if (!claim.claimed) {
      const { row } = claim;
      if (row.fingerprint !== fingerprint) {
        throw new ServiceError('idempotency_key_reused', `Idempotency-Key ${quote(key)} was already used with a different request to ${entry.name}`, { field: 'Idempotency-Key' });
      }
      if (row.state !== 'done') {
        throw new ServiceError('idempotency_key_in_use', `a request with Idempotency-Key ${quote(key)} is still being processed; retry later`, { field: 'Idempotency-Key' });
      }
      const headers = JSON.parse(row.headers ?? '{}') as Record<string, string>;
      for (const [k, v] of Object.entries(headers)) ctx.setHeader(k, v);
      ctx.setHeader('idempotent-replayed', 'true');
      if (ctx.principal) await options.onReplay?.(ctx);
      if (row.outcome === 'ok') return entry.definition.responseDeserialize(Buffer.from(row.response ?? '', 'base64'));
      const saved = JSON.parse(row.response ?? '{}') as { message: string; details?: Record<string, unknown>; headers?: Record<string, string> };
      throw new ServiceError(row.outcome as ErrorCode, saved.message, saved.details, saved.headers);
    }
    const keep = () => {
      const out: Record<string, string> = {};
      // Headers the call set so far are in the pipeline's map; we only see them through ctx, so
      // the pipeline passes them on `call.responseHeaders`.
      for (const [k, v] of Object.entries(call.responseHeaders())) if (!VOLATILE_HEADERS.has(k)) out[k] = v;
      return out;
    };
    let response: unknown;
    try {
      response = await next();
    } catch (err) {
      const error = ServiceError.from(err);
      if (error.httpStatus >= 500 || NOT_EXECUTED.has(error.code)) await store.release(accountId, entry.path, stored);
      else await store.complete(accountId, entry.path, stored, error.code, JSON.stringify({ message: error.message, details: error.details, headers: error.headers }), keep());
      throw err;
    }
    await store.complete(accountId, entry.path, stored, 'ok', entry.definition.responseSerialize(response).toString('base64'), keep());
    return response;
  };
}
