/** Tiers, their monthly request quotas and support levels (seed sections 1 and 8). */

export type Tier = 'free' | 'pro' | 'enterprise';

export interface TierInfo {
  /** Requests per calendar month (UTC); `null` = unlimited. */
  readonly monthlyQuota: number | null;
  /** Support level as the seed states it. */
  readonly support: string;
}

export const TIERS: Readonly<Record<Tier, TierInfo>> = {
  free: { monthlyQuota: 100, support: 'community chat' },
  pro: { monthlyQuota: 10_000, support: 'email, 24 h response' },
  enterprise: { monthlyQuota: null, support: 'dedicated chat channel, 4 h SLA, escalation for production incidents' },
};

export function isTier(value: string): value is Tier {
  return Object.prototype.hasOwnProperty.call(TIERS, value);
}

/** All scopes (API.md section 3). */
export const SCOPES = ['forecast:read', 'data:write', 'audit', 'subscriptions', 'keys:admin'] as const;
export type Scope = (typeof SCOPES)[number];
/** Scopes a new key gets unless asked otherwise: all but `keys:admin`. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'keys:admin');

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
