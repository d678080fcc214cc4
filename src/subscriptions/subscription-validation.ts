/**
 * Checks of subscription requests, each naming the offending field: URL (scheme, shape, and the
 * SSRF guard on every address its host resolves to), event types, level, axes, ids.
 */
import { checkAxisName } from '../entities/entity-id';
import type { EntityRecord } from '../entities/entity-store';
import { MAX_AXES } from '../entities/entity-validation';
import { invalidArgument } from '../rpc/errors';
import { DRIFT_EVENTS } from './events';
import { literalHost, resolveAllowed, UrlRefusedError, type AddressGuard, type Resolver } from './ssrf-guard';

/** Longest webhook URL. */
export const MAX_URL_LENGTH = 2048;
/** Central interval level when none is given. */
export const DEFAULT_LEVEL = 0.95;
/** Smallest and largest level accepted. */
export const MIN_LEVEL = 0.5;
export const MAX_LEVEL = 0.999;

/** What URL checks need. */
export interface UrlPolicy {
  readonly allowHttp: boolean;
  readonly guard: AddressGuard;
  readonly resolver: Resolver;
}

/** Check a webhook URL (see the proto); returns its normalised form. */
export async function checkUrl(raw: string, policy: UrlPolicy, field = 'url'): Promise<string> {
  if (!raw) throw invalidArgument(field, 'is required (an https:// URL)');
  if (raw.length > MAX_URL_LENGTH) throw invalidArgument(field, `at most ${MAX_URL_LENGTH} characters, got ${raw.length}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidArgument(field, `${JSON.stringify(raw.slice(0, 80))} is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw invalidArgument(field, `must use https${policy.allowHttp ? ' or http' : ''}, got ${JSON.stringify(url.protocol.slice(0, 20))}`);
  }
  if (url.username || url.password) throw invalidArgument(field, 'must not carry user information (user:password@)');
  if (url.hash) throw invalidArgument(field, 'must not carry a fragment (#…)');
  // found by QA: port 0 was accepted, where no delivery can ever arrive
  if (url.port === '0') throw invalidArgument(field, 'port 0 cannot be delivered to');
  try {
    const literal = literalHost(url);
    if (literal !== undefined) {
      const refused = policy.guard.refusal(literal);
      if (refused) throw new UrlRefusedError(refused);
    } else {
      await resolveAllowed(url.hostname, policy.guard, policy.resolver);
    }
  } catch (err) {
    if (err instanceof UrlRefusedError) throw invalidArgument(field, `${err.message}: webhooks must reach the public internet`);
    throw err;
  }
  return url.href;
}

/** Check event types; empty → `fallback`. */
export function checkEvents(events: readonly string[], fallback: readonly string[]): string[] {
  if (events.length === 0) return [...fallback];
  const seen = new Set<string>();
  events.forEach((e, i) => {
    if (!(DRIFT_EVENTS as readonly string[]).includes(e)) throw invalidArgument(`events[${i}]`, `${JSON.stringify(e.slice(0, 60))} is not an event type; types are ${DRIFT_EVENTS.join(', ')}`);
    if (seen.has(e)) throw invalidArgument(`events[${i}]`, `duplicate event type ${e}`);
    seen.add(e);
  });
  return [...seen];
}

/** Check a level; 0 → the default (when `zeroIsDefault`, as at creation). */
export function checkLevel(level: number, zeroIsDefault = true): number {
  if (level === 0 && zeroIsDefault) return DEFAULT_LEVEL;
  if (!Number.isFinite(level) || level < MIN_LEVEL || level > MAX_LEVEL) throw invalidArgument('level', `must be in [${MIN_LEVEL}, ${MAX_LEVEL}], got ${level}`);
  return level;
}

/** Check the axes filter: names, count, duplicates, and (without descendants) that the entity has them. */
export function checkAxes(axes: readonly string[], entity: EntityRecord, includeDescendants: boolean): string[] {
  if (axes.length > MAX_AXES) throw invalidArgument('axes', `at most ${MAX_AXES}, got ${axes.length}`);
  const seen = new Set<string>();
  axes.forEach((a, i) => {
    checkAxisName(a, `axes[${i}]`);
    if (seen.has(a)) throw invalidArgument(`axes[${i}]`, `duplicate axis ${a}`);
    if (!includeDescendants && !entity.axes.some((x) => x.name === a)) throw invalidArgument(`axes[${i}]`, `entity ${entity.entity} has no axis ${a}`);
    seen.add(a);
  });
  return [...seen];
}

/** Check an identifier field of the form `<prefix>_…`. */
export function checkId(value: string, prefix: string, field: string): string {
  if (!value) throw invalidArgument(field, 'is required');
  if (!new RegExp(`^${prefix}_[0-9A-Z]{26}$`).test(value)) throw invalidArgument(field, `${JSON.stringify(value.slice(0, 60))} is not a ${prefix}_… identifier`);
  return value;
}
