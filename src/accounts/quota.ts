/**
 * Monthly request quotas (API.md section 12). Counting is one atomic upsert per request —
 * `INSERT … ON CONFLICT DO UPDATE SET count = count + 1 WHERE count < limit RETURNING count` —
 * so with quota N exactly N requests succeed however many run at once, on one process or many
 * replicas sharing PostgreSQL. No read-then-write.
 */
import { sql } from 'kysely';
import type { Clock } from '../clock';
import type { Interceptor } from '../rpc/pipeline';
import { ServiceError } from '../rpc/errors';
import type { Database } from '../store/database';
import { GroupCommit } from '../store/group-commit';
import { TIERS, type Tier } from './tiers';

/** The calendar month (UTC) containing `ms`: its key and bounds. */
export function monthOf(ms: number): { key: string; start: number; end: number } {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return { key: `${y}-${String(m + 1).padStart(2, '0')}`, start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
}

export class UsageStore {
  /**
   * Unlimited tiers only count for reporting, so their increments are group-committed: one
   * `count + n` upsert per (account, month) per batch. Each call still waits for its commit.
   */
  private readonly unlimited: GroupCommit<string>;

  constructor(private readonly database: Database) {
    this.unlimited = new GroupCommit((keys) =>
      this.database.transaction(async (trx) => {
        const counts = new Map<string, number>();
        for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
        for (const [k, n] of counts) {
          const [accountId, month] = k.split('\u0000');
          await sql`INSERT INTO usage (account_id, month, count) VALUES (${accountId}, ${month}, ${n})
            ON CONFLICT (account_id, month) DO UPDATE SET count = usage.count + ${n}`.execute(trx);
        }
      }),
    );
  }

  /**
   * Count one request if the account is under `limit` (null = unlimited); the new count (0 for
   * unlimited tiers, which report no remaining), or undefined when over quota.
   */
  async consume(accountId: string, month: string, limit: number | null): Promise<number | undefined> {
    if (limit === null) {
      await this.unlimited.add(`${accountId}\u0000${month}`);
      return 0;
    }
    const guard = sql` WHERE usage.count < ${limit}`;
    const res = await sql<{ count: number }>`
      INSERT INTO usage (account_id, month, count) VALUES (${accountId}, ${month}, 1)
      ON CONFLICT (account_id, month) DO UPDATE SET count = usage.count + 1${guard}
      RETURNING count`.execute(this.database.db);
    return res.rows.length > 0 ? Number(res.rows[0].count) : undefined;
  }

  /** Requests counted for the account in `month`. */
  async used(accountId: string, month: string): Promise<number> {
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

/**
 * The quota interceptor: counts every authenticated call once (before it runs) and refuses it
 * with 429 `quota_exceeded` + `Retry-After` once the month's quota is used.
 */
export function quotaInterceptor(usage: UsageStore, clock: Clock): Interceptor {
  return async ({ ctx }, next) => {
    const principal = ctx.principal;
    if (!principal) return next();
    const now = clock.now();
    const month = monthOf(now);
    const limit = TIERS[principal.tier].monthlyQuota;
    const count = await usage.consume(principal.accountId, month.key, limit);
    if (count === undefined) {
      const retryAfter = Math.max(1, Math.ceil((month.end - now) / 1000));
      throw new ServiceError(
        'quota_exceeded',
        `monthly quota of ${limit} requests for the ${principal.tier} tier is used up; it resets at ${new Date(month.end).toISOString()}`,
        { limit, reset_time: new Date(month.end).toISOString() },
        { 'retry-after': String(retryAfter), ...rateLimitHeaders(principal.tier, limit ?? 0, now) },
      );
    }
    for (const [k, v] of Object.entries(rateLimitHeaders(principal.tier, count, now))) ctx.setHeader(k, v);
    return next();
  };
}
