/**
 * Monthly request quotas (API.md section 12). Counting is one atomic upsert per request —
 * `INSERT … ON CONFLICT DO UPDATE SET count = count + 1 WHERE count < limit RETURNING count` —
 * so with quota N exactly N requests succeed however many run at once, on one process or many
 * replicas sharing PostgreSQL. No read-then-write.
 */
import { sql } from 'kysely';
import { AccountServiceService } from '../../gen/forecast/v1/account_service.pb';
import { formatTime, type Clock } from '../clock';
import type { Interceptor } from '../rpc/pipeline';
import type { Principal } from './auth';
import { ServiceError } from '../rpc/errors';
import { outsideCalls } from '../store/commit-hook';
import type { Database } from '../store/database';
import { TIERS, type Tier } from './tiers';

/**
 * Methods that never count against the quota and are answered over it (GetVersion needs no key,
 * so it is never counted either): the quota interceptor's `exempt`, and no 429 in their OpenAPI.
 */
export const QUOTA_EXEMPT_METHODS: ReadonlySet<string> = new Set([AccountServiceService.getAccount.path, AccountServiceService.getVersion.path]);

/** The calendar month (UTC) containing `ms`: its key and bounds. */
export function monthOf(ms: number): { key: string; start: number; end: number } {
  // Every call asks this; the answer changes twelve times a year.
  if (ms >= lastMonth.start && ms < lastMonth.end) return lastMonth;
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return (lastMonth = { key: `${y}-${String(m + 1).padStart(2, '0')}`, start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) });
}
let lastMonth: { readonly key: string; readonly start: number; readonly end: number } = { key: '', start: 0, end: 0 };

/** Longest time an unlimited tier's counts wait in memory before they are written. */
export const USAGE_FLUSH_MS = 200;

export class UsageStore {
  /**
   * Unlimited tiers are only counted for reporting (nothing is ever refused on them), so their
   * increments are kept in memory and written as one `count + n` upsert per (account, month)
   * at most `USAGE_FLUSH_MS` later, off the request path: the call does not wait for a write
   * (why: the shared wait made every in-flight call answer in lock-step, which halved gRPC
   * throughput). Reads of the count (`used`) and `close` flush first, so nothing is lost on a
   * graceful stop; a crash can lose at most the last `USAGE_FLUSH_MS` of unlimited-tier counts.
   */
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly database: Database,
    private readonly onFlushError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Count one request if the account is under `limit` (null = unlimited); the new count (0 for
   * unlimited tiers, which report no remaining), or undefined when over quota.
   */
  async consume(accountId: string, month: string, limit: number | null): Promise<number | undefined> {
    const key = `${accountId}\u0000${month}`;
    if (limit === null) {
      this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
      this.scheduleFlush();
      return 0;
    }
    // Counts taken while the account was on an unlimited tier come first.
    if (this.pending.has(key)) await this.flush();
    const guard = sql` WHERE usage.count < ${limit}`;
    const res = await sql<{ count: number }>`
      INSERT INTO usage (account_id, month, count) VALUES (${accountId}, ${month}, 1)
      ON CONFLICT (account_id, month) DO UPDATE SET count = usage.count + 1${guard}
      RETURNING count`.execute(this.database.db);
    return res.rows.length > 0 ? Number(res.rows[0].count) : undefined;
  }

  /** Write the counts held in memory (one transaction); on failure they are kept for the next flush. */
  flush(): Promise<void> {
    // Counts of many calls: the flush is none's effect (it runs no call's commit hook, store/commit-hook.ts).
    return outsideCalls(() => this.flushCounts());
  }

  private flushCounts(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    const write = async () => {
      if (batch.size === 0) return;
      try {
        await this.database.transaction(async (trx) => {
          // In key order: replicas flushing the same accounts lock their rows in the same order (no deadlock).
          for (const [k, n] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
            const [accountId, month] = k.split('\u0000');
            await sql`INSERT INTO usage (account_id, month, count) VALUES (${accountId}, ${month}, ${n})
              ON CONFLICT (account_id, month) DO UPDATE SET count = usage.count + ${n}`.execute(trx);
          }
        });
      } catch (err) {
        for (const [k, n] of batch) this.pending.set(k, (this.pending.get(k) ?? 0) + n);
        this.scheduleFlush();
        throw err;
      }
    };
    // One write at a time, in order.
    const next = this.writing.then(write, write);
    this.writing = next.catch(() => {});
    return next;
  }

  /** A flush at most `USAGE_FLUSH_MS` from now, unless one is already due. */
  private scheduleFlush(): void {
    this.timer ??= outsideCalls(() => setTimeout(() => void this.flush().catch(this.onFlushError), USAGE_FLUSH_MS).unref());
  }

  /** Flush what is held; call before closing the database. */
  close(): Promise<void> {
    return this.flush();
  }

  /** Requests counted for the account in `month`. */
  async used(accountId: string, month: string): Promise<number> {
    await this.flush();
    const row = await this.database.db.selectFrom('usage').select('count').where('account_id', '=', accountId).where('month', '=', month).executeTakeFirst();
    return Number(row?.count ?? 0);
  }
}

/** The `RateLimit-Policy` / `RateLimit` headers (IETF draft) for a tier's state this month. */
export function rateLimitHeaders(tier: Tier, used: number, now: number): Record<string, string> {
  const limit = TIERS[tier].monthlyQuota;
  if (limit === null) return {};
  const month = monthOf(now);
  const window = Math.round((month.end - month.start) / 1000);
  const reset = Math.max(0, Math.ceil((month.end - now) / 1000));
  return {
    'ratelimit-policy': `"monthly";q=${limit};w=${window}`,
    ratelimit: `"monthly";r=${Math.max(0, limit - used)};t=${reset}`,
  };
}

export interface QuotaOptions {
  /**
   * Methods that are not counted and never refused (reads of the account itself, API.md section
   * 12), so a user over quota can still see their usage. They still carry the RateLimit headers
   * (`rateLimitDescriber`).
   */
  readonly exempt?: (methodPath: string) => boolean;
}

/**
 * The `RateLimit-Policy` / `RateLimit` headers for every answer to a caller whose key is known
 * (`PipelineDeps.describeCaller`), where the quota interceptor did not set them on the way: calls
 * never counted (exempt reads, idempotent replays, a public method called with a key) and calls
 * refused before or after the count (403, 400, 404, …). They show the month's remaining as it
 * stands, counting nothing. Unlimited tiers (Enterprise) have no quota to describe: no headers,
 * and no read.
 */
export function rateLimitDescriber(usage: UsageStore, clock: Clock) {
  return async (caller: Principal, headers: Readonly<Record<string, string>>): Promise<Record<string, string>> => {
    if ('ratelimit' in headers || TIERS[caller.tier].monthlyQuota === null) return {};
    const now = clock.now();
    return rateLimitHeaders(caller.tier, await usage.used(caller.accountId, monthOf(now).key), now);
  };
}

/**
 * The quota interceptor: counts every authenticated call once (before it runs) and refuses it
 * with 429 `quota_exceeded` + `Retry-After` once the month's quota is used; exempt methods are
 * neither counted nor refused. A counted call's RateLimit headers carry the count it took.
 */
export function quotaInterceptor(usage: UsageStore, clock: Clock, options: QuotaOptions = {}): Interceptor {
  return async ({ ctx, entry }, next) => {
    const principal = ctx.principal;
    if (!principal) return next();
    // Uncounted: the pipeline's describer adds the headers once the call has its answer.
    if (options.exempt?.(entry.path)) return next();
    const now = clock.now();
    const month = monthOf(now);
    const limit = TIERS[principal.tier].monthlyQuota;
    const count = await usage.consume(principal.accountId, month.key, limit);
    if (count === undefined) {
      const retryAfter = Math.max(1, Math.ceil((month.end - now) / 1000));
      throw new ServiceError(
        'quota_exceeded',
        `monthly quota of ${limit} requests for the ${principal.tier} tier is used up; it resets at ${formatTime(month.end)}`,
        { limit, reset_time: formatTime(month.end) },
        { 'retry-after': String(retryAfter), ...rateLimitHeaders(principal.tier, limit ?? 0, now) },
      );
    }
    if (limit !== null) for (const [k, v] of Object.entries(rateLimitHeaders(principal.tier, count, now))) ctx.setHeader(k, v);
    return next();
  };
}
