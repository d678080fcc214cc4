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
 * (account, method, key). Secrets a response shows once (fields marked `debug_redact` in the
 * contract: a new API key, a webhook signing secret) are not stored at all: a replay has them
 * empty. Why: secrets are never replayed from caches — a replay of SignUp needs no API key, only
 * the Idempotency-Key, and one of CreateKey returned a revoked key's secret as "active" (found by
 * QA); the caller who lost the first answer creates or rotates again.
 *
 * Executed once, even when recording the outcome fails (as Stripe's atomic phases do). The
 * outcome (the response) exists only once the handler has returned, after its transactions have
 * committed, so it cannot share their transaction; what can is the fact that the request was
 * applied. The interceptor hands the pipeline's call a commit hook (`store/commit-hook.ts`) that
 * every write transaction of the handler runs right before COMMIT: it moves the claim from
 * `running` to `applied`, fenced by the claim's token (its create_time). So:
 * - a `running` claim has nothing committed: when it lapses (its owner died: after
 *   IDEMPOTENCY_LOCK_MS) the retry may execute, and should the old owner still be alive, its
 *   commit finds the claim taken over and rolls back (409);
 * - an `applied` claim never lapses. Recording its outcome is retried for a few seconds
 *   (RECORD_RETRY_DELAYS_MS); the caller gets its real response either way (it was applied). If
 *   it still cannot be recorded, retries get 409 `idempotency_key_in_use` for APPLIED_GRACE_MS,
 *   then 409 `already_exists`: the request was applied but its response cannot be replayed
 *   (chosen over 5xx, which invites a retry that can never succeed, and over a fresh execution,
 *   which would apply it twice; ALREADY_EXISTS is what gRPC clients do not retry blindly).
 * Writes a handler makes outside `Database.transaction` are not fenced: the oracle query's audit
 * record (group-committed with other calls') is one; a lapse can at worst record a second query.
 *
 * A 409 `idempotency_key_in_use` carries `Retry-After` (gRPC: `retry-after` metadata): as many
 * seconds as the claim has run, at least 1 and never past when it could lapse. Why: the usual
 * case is a retry racing a call that finishes within a second; a claim whose owner died is
 * polled at doubling intervals and the last wait ends when it lapses, instead of 300 polls.
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
import type { Transaction } from 'kysely';
import { withCommitHook } from '../store/commit-hook';
import type { Database } from '../store/database';
import type { Schema } from '../store/schema';
import { SecretBox } from '../store/secret-box';
import { ERROR_STATUS, invalidArgument, ServiceError, type ErrorCode, quote } from './errors';
import type { Interceptor } from './pipeline';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
/**
 * The lease of a claim with nothing committed: a call that has not finished after this long is
 * considered abandoned (its process died) and the key may execute again (README, idempotency).
 */
export const IDEMPOTENCY_LOCK_MS = 5 * 60 * 1000;
/** How long after its effect committed an unrecorded outcome is answered 409 (being recorded) rather than `already_exists`. */
export const APPLIED_GRACE_MS = 30 * 1000;
/** Waits between attempts to record an outcome (about 3 s in all: bounded, so shutdown is never held up for long). */
export const RECORD_RETRY_DELAYS_MS: readonly number[] = [100, 200, 400, 800, 1600];
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Shortest key a method without an API key accepts (see the file comment). */
export const MIN_PUBLIC_KEY_LENGTH = 16;

/**
 * Error codes that refuse the request itself before anything ran: never stored, the key is
 * released. (Those of reading the request, 413 and 415, and the interceptor's own 409 and 422
 * are raised before a key is claimed; they are listed so that `storesOutcome` is exact.)
 */
const NOT_EXECUTED: ReadonlySet<ErrorCode> = new Set([
  'invalid_argument',
  'invalid_cursor',
  'unauthenticated',
  'permission_denied',
  'quota_exceeded',
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_in_use',
  'idempotency_key_reused',
]);

/**
 * Whether an outcome with this error code is stored under its Idempotency-Key (and so may come
 * back as a replay with `Idempotent-Replayed: true`); a success always is. Not those refused
 * before anything ran, nor status ≥ 500 (file comment).
 */
export function storesOutcome(code: ErrorCode): boolean {
  return ERROR_STATUS[code].http < 500 && !NOT_EXECUTED.has(code);
}

/** Response headers that describe the moment, not the response: never replayed from storage. */
const VOLATILE_HEADERS = new Set(['request-id', 'api-version', 'ratelimit', 'ratelimit-policy', 'retry-after', 'idempotent-replayed']);

interface StoredRow {
  fingerprint: string;
  /** `running`, `applied` or `done` (store/schema.ts). */
  state: string;
  create_time: number;
  lock_expire_time: number;
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

  /**
   * Claim (account, method, key) for a new call, or return the row that holds it. A claim's token
   * (its create_time) fences what its call writes later: another claim of the key after a lapse
   * has a later one.
   */
  async claim(accountId: string, method: string, key: string, fingerprint: string, now: number): Promise<{ claimed: true; token: number } | { claimed: false; row: StoredRow }> {
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
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { claimed: true, token: now };
    const found = await db
      .selectFrom('idempotency')
      .select(['fingerprint', 'state', 'outcome', 'response', 'headers', 'create_time', 'lock_expire_time'])
      .where('account_id', '=', accountId)
      .where('method', '=', method)
      .where('key', '=', key)
      .executeTakeFirst();
    // Deleted between our insert and select (expired just now): treat as in use; the client retries.
    if (!found) return { claimed: false, row: { fingerprint, state: 'running', create_time: now, lock_expire_time: now, outcome: null, response: null, headers: null } };
    // PostgreSQL returns bigint columns as strings.
    const row = { ...found, create_time: Number(found.create_time), lock_expire_time: Number(found.lock_expire_time) };
    // Rows written before responses were sealed hold them in clear (none carries a secret: migration 0005 removed those).
    const response = row.response !== null && SecretBox.isSealed(row.response) ? this.box.openText(row.response, IdempotencyStore.context(accountId, method, key)) : row.response;
    return { claimed: false, row: { ...row, response } };
  }

  /**
   * In the transaction `trx` of the claimed call (`token`): its request is applied once `trx`
   * commits. False when the claim is no longer this call's (it lapsed and was taken over): the
   * caller then rolls back.
   */
  async markApplied(trx: Transaction<Schema>, accountId: string, method: string, key: string, token: number, now: number): Promise<boolean> {
    const res = await trx
      .updateTable('idempotency')
      .set({ state: 'applied', lock_expire_time: now + APPLIED_GRACE_MS })
      .where('account_id', '=', accountId)
      .where('method', '=', method)
      .where('key', '=', key)
      .where('create_time', '=', token)
      .where('state', 'in', ['running', 'applied'])
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Record the outcome of the claimed call `token` (not of a later claim of the key); `response` is stored sealed. */
  async complete(accountId: string, method: string, key: string, token: number, outcome: string, response: string, headers: Record<string, string>): Promise<void> {
    const sealed = this.box.seal(response, IdempotencyStore.context(accountId, method, key));
    await this.database.db
      .updateTable('idempotency')
      .set({ state: 'done', outcome, response: sealed, headers: JSON.stringify(headers) })
      .where('account_id', '=', accountId)
      .where('method', '=', method)
      .where('key', '=', key)
      .where('create_time', '=', token)
      .execute();
  }

  /**
   * Give the claimed key back (outcome not stored). With `unlessApplied`, a claim that something
   * of its call committed under (`applied`) is kept instead: a retry must not apply it again.
   */
  async release(accountId: string, method: string, key: string, token: number, unlessApplied: boolean): Promise<void> {
    let q = this.database.db.deleteFrom('idempotency').where('account_id', '=', accountId).where('method', '=', method).where('key', '=', key).where('create_time', '=', token);
    if (unlessApplied) q = q.where('state', '=', 'running');
    await q.execute();
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
  /** A method's response fields that are secrets shown once (`redactedResponseFields`): never stored, empty on replay. */
  readonly secretFields?: (methodPath: string) => readonly string[] | undefined;
}

/** The idempotency interceptor; place it before the quota interceptor so replays do not count. */
export function idempotencyInterceptor(store: IdempotencyStore, clock: Clock, options: IdempotencyOptions): Interceptor {
  return async (call, next) => {
    const { ctx, entry } = call;
    if (!options.appliesTo(entry.path)) return next();
    const keys = ctx.headerValues('idempotency-key');
    if (keys.length === 0) return next();
    // Two keys (a client's and a proxy's, say) are ambiguous: joined, they would make a key the
    // client never chose, and its retry by another route, with its own key alone, would apply
    // the request twice.
    if (keys.length > 1) throw invalidArgument('Idempotency-Key', `was sent ${keys.length} times; send one key per request`);
    const key = keys[0];
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
      if (row.state !== 'done') throw notDone(row, key, entry.name, clock.now());
      const headers = JSON.parse(row.headers ?? '{}') as Record<string, string>;
      for (const [k, v] of Object.entries(headers)) ctx.setHeader(k, v);
      ctx.setHeader('idempotent-replayed', 'true');
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
    const { token } = claim;
    let open = true;
    // Whether a transaction of the call may have committed (set as its hook marks the claim).
    let applied = false;
    // Every write transaction of the call marks the claim applied as it commits (file comment).
    const markApplied = async (trx: Transaction<Schema>) => {
      if (!open) return; // work the call left behind is not its effect
      if (await store.markApplied(trx, accountId, entry.path, stored, token, clock.now())) {
        applied = true;
        return;
      }
      const lease = `${IDEMPOTENCY_LOCK_MS / 60_000} minutes`;
      throw new ServiceError('idempotency_key_in_use', `this request with Idempotency-Key ${quote(key)} ran past its ${lease} lease and another request with the key took over; nothing of this one was applied`, { field: 'Idempotency-Key' }, { 'retry-after': '1' });
    };
    const record = (outcome: string, response: string) =>
      recordPersistently(
        () => store.complete(accountId, entry.path, stored, token, outcome, response, keep()),
        async (error) => {
          if (applied) {
            ctx.log.error('idempotency outcome not recorded; the key stays claimed, never executed again', { requestId: ctx.requestId, method: entry.path, error });
            return;
          }
          // nothing of the call committed (a read): the key is given back at once rather than
          // answering 409 until its lease lapses (if even that fails, the lease lapses as usual)
          ctx.log.warn('idempotency outcome not recorded; nothing was applied, the key is given back', { requestId: ctx.requestId, method: entry.path, error });
          await store.release(accountId, entry.path, stored, token, true).catch(() => undefined);
        },
      );
    let response: unknown;
    try {
      response = await withCommitHook(markApplied, next);
    } catch (err) {
      open = false;
      const error = ServiceError.from(err);
      // A refusal says nothing was done (a transaction it committed only read: SignUp's rate limit);
      // a failure ≥ 500 may come after a commit, and then the claim stays; anything else is stored.
      if (storesOutcome(error.code)) await record(error.code, JSON.stringify({ message: error.message, details: error.details, headers: error.headers }));
      else await store.release(accountId, entry.path, stored, token, !NOT_EXECUTED.has(error.code));
      throw err;
    }
    open = false;
    // Recorded or not, the request was done: its caller gets the real response (the stored one lacks its secrets).
    const secrets = options.secretFields?.(entry.path) ?? [];
    const replayable = secrets.length > 0 ? { ...(response as object), ...Object.fromEntries(secrets.map((f) => [f, ''])) } : response;
    await record('ok', entry.definition.responseSerialize(replayable).toString('base64'));
    return response;
  };
}

/** The answer to a call whose key's claim is not done: 409 while it may still finish, `already_exists` once it was applied and its outcome is lost. */
function notDone(row: StoredRow, key: string, method: string, now: number): ServiceError {
  if (row.state === 'applied' && row.lock_expire_time <= now) {
    return new ServiceError(
      'already_exists',
      `the request with Idempotency-Key ${quote(key)} to ${method} was applied, but its response could not be recorded and cannot be replayed: look its result up instead of retrying (a new key would apply it again)`,
      { field: 'Idempotency-Key' },
    );
  }
  const retryAfter = Math.max(1, Math.min(Math.ceil((now - row.create_time) / 1000), Math.ceil((row.lock_expire_time - now) / 1000)));
  return new ServiceError('idempotency_key_in_use', `a request with Idempotency-Key ${quote(key)} is still being processed; retry in ${retryAfter} s`, { field: 'Idempotency-Key' }, { 'retry-after': String(retryAfter) });
}

/** Run `write` until it succeeds, waiting RECORD_RETRY_DELAYS_MS between attempts; after the last, `onFailure`. */
async function recordPersistently(write: () => Promise<void>, onFailure: (error: unknown) => void | Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= RECORD_RETRY_DELAYS_MS.length) return onFailure(error);
      // unref: a process that has nothing else to do does not stay up for these waits.
      await new Promise((resolve) => setTimeout(resolve, RECORD_RETRY_DELAYS_MS[attempt]).unref());
    }
  }
}
