/**
 * When a failed webhook attempt is retried (API.md section 8). Five retries after the first
 * attempt, on the Standard Webhooks example schedule: 5 s, 5 min, 30 min, 2 h, 5 h — as multiples
 * of a base interval (`WEBHOOK_RETRY_BASE_MS`, default 5 s) so tests can run the same schedule
 * scaled down. Each delay gets ±20% uniform jitter, so receivers that failed together are not
 * retried together. A `Retry-After` on 429 or 503 replaces the scheduled delay (capped at a day,
 * and never shorter than the base interval: `nextRetryDelay`).
 */

/** Attempts in all: the first and five retries. */
export const MAX_ATTEMPTS = 6;

/** Delay before retry n (n = 1..5) in multiples of the base: 5 s, 5 min, 30 min, 2 h, 5 h at base 5 s. */
export const RETRY_MULTIPLES: readonly number[] = [1, 60, 360, 1440, 3600];

/** Relative jitter: a delay is multiplied by a uniform factor in [1 − JITTER, 1 + JITTER]. */
export const JITTER = 0.2;

/** Longest `Retry-After` honoured. */
export const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

/**
 * Delay in ms before the next attempt, after `attempts` attempts have failed (1..5), or undefined
 * when none is left. `random` is uniform in [0, 1) (injected so tests can pin it).
 */
export function retryDelay(attempts: number, baseMs: number, random: () => number = Math.random): number | undefined {
  if (attempts < 1 || attempts >= MAX_ATTEMPTS) return undefined;
  const nominal = baseMs * RETRY_MULTIPLES[attempts - 1];
  return Math.round(nominal * (1 - JITTER + 2 * JITTER * random()));
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const CLOCK = '\\d{2}:\\d{2}:\\d{2}';
/** RFC 9110 §5.6.7 HTTP-date: IMF-fixdate and the obsolete RFC 850 form (both in GMT). */
const HTTP_DATE = new RegExp(`^(?:${DAY}, \\d{2} ${MONTH} \\d{4} ${CLOCK} GMT|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, \\d{2}-${MONTH}-\\d{2} ${CLOCK} GMT)$`);
/** The obsolete asctime form, which names no zone (it means GMT). */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${CLOCK} \\d{4}$`);

/**
 * The delay a `Retry-After` header asks for, in ms (delta-seconds or an HTTP date, RFC 9110
 * §10.2.3), capped at a day; undefined when absent or unreadable. Only those two shapes: what
 * `Date.parse` alone takes for a date (found by QA: `-5`, `1.5` and `5 5` read as dates in 2001,
 * so a retry at once where the header meant nothing) is unreadable.
 */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = HTTP_DATE.test(text) ? Date.parse(text) : ASCTIME.test(text) ? Date.parse(`${text} GMT`) : NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * Delay in ms before the next attempt after `attempts` failed ones: what the receiver's
 * `Retry-After` asked (`asked`, ms; undefined when none), else the schedule's (`retryDelay`);
 * undefined when no attempt is left. A `Retry-After` may ask for a retry sooner than the schedule
 * (a 2-hour wait cut to a minute) but never sooner than the base interval (5 s). Why: found by QA,
 * a receiver answering 503 with `Retry-After: 0` (or a date already past) through a restart of a
 * few seconds had all five retries made within a second, and the event was failed.
 */
export function nextRetryDelay(attempts: number, baseMs: number, asked: number | undefined, random: () => number = Math.random): number | undefined {
  if (attempts < 1 || attempts >= MAX_ATTEMPTS) return undefined;
  return asked === undefined ? retryDelay(attempts, baseMs, random) : Math.max(asked, baseMs);
}
