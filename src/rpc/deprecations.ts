/**
 * When each deprecated method or field was announced (seed section 9: deprecations are announced
 * 12 months ahead). The proto says *that* something is deprecated (`deprecated = true`); this
 * table says *since when* and where it is documented. Start-up fails when the proto deprecates
 * something this table does not date, so a deprecation can never ship without its notice.
 */
import type { Deprecation } from './method';

/** An announcement: ISO date and documentation link. */
export interface DeprecationNotice {
  readonly since: string;
  readonly link: string;
}

/** Deprecations of the served contract, by method full name (`forecast.v1.Service.Method`) or field full name. */
export const DEPRECATIONS: Readonly<Record<string, DeprecationNotice>> = {};

/** Notice period: the sunset is at least this many months after the announcement. */
export const NOTICE_MONTHS = 12;

/** Resolve a notice into dates; throws naming the element when it is missing. */
export function deprecationOf(name: string, table: Readonly<Record<string, DeprecationNotice>>): Deprecation {
  const notice = table[name];
  if (!notice) throw new Error(`${name} is deprecated in the proto but has no entry in the deprecation table (src/rpc/deprecations.ts)`);
  const since = Date.parse(notice.since);
  if (Number.isNaN(since)) throw new Error(`deprecation of ${name}: bad date ${notice.since}`);
  const d = new Date(since);
  const sunset = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + NOTICE_MONTHS, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds());
  return { since, sunset, link: notice.link };
}
