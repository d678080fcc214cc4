/**
 * Sampling frequencies (ISO 8601 durations) and their UTC grids. Observation times must sit on
 * the grid, so each series is regular and a step index (`indexOf`) numbers its periods: the
 * engine sees a gap as a missing value, never as a shorter series.
 */
import { invalidArgument, quote } from '../rpc/errors';

export type Frequency = 'PT1M' | 'PT5M' | 'PT10M' | 'PT15M' | 'PT30M' | 'PT1H' | 'P1D' | 'P1W' | 'P1M' | 'P3M' | 'P1Y';

interface FrequencyInfo {
  /** Default seasonal period in steps (a daily cycle for intraday data; yearly otherwise). */
  readonly season: number;
  /** Fixed step in ms, for frequencies that have one. */
  readonly stepMs?: number;
  /** Months per step, for calendar frequencies. */
  readonly months?: number;
  /** Human description of the grid, for error messages. */
  readonly grid: string;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
/** 1970-01-05 (a Monday) at 00:00 UTC: weeks are counted from here. */
const MONDAY_EPOCH = 4 * DAY;

const FREQUENCIES: Readonly<Record<Frequency, FrequencyInfo>> = {
  PT1M: { season: 60, stepMs: MINUTE, grid: 'whole minutes' },
  PT5M: { season: 288, stepMs: 5 * MINUTE, grid: 'multiples of 5 minutes' },
  PT10M: { season: 144, stepMs: 10 * MINUTE, grid: 'multiples of 10 minutes' },
  PT15M: { season: 96, stepMs: 15 * MINUTE, grid: 'multiples of 15 minutes' },
  PT30M: { season: 48, stepMs: 30 * MINUTE, grid: 'multiples of 30 minutes' },
  PT1H: { season: 24, stepMs: 60 * MINUTE, grid: 'whole hours' },
  P1D: { season: 7, stepMs: DAY, grid: 'midnight UTC' },
  P1W: { season: 52, stepMs: 7 * DAY, grid: 'Mondays at midnight UTC' },
  P1M: { season: 12, months: 1, grid: 'the 1st of a month at midnight UTC' },
  P3M: { season: 4, months: 3, grid: 'the 1st of January, April, July or October at midnight UTC' },
  P1Y: { season: 1, months: 12, grid: '1 January at midnight UTC' },
};

export const FREQUENCY_NAMES = Object.keys(FREQUENCIES) as Frequency[];

export function isFrequency(value: string): value is Frequency {
  return Object.prototype.hasOwnProperty.call(FREQUENCIES, value);
}

/** Check a frequency; throws 400 naming `field`. */
export function checkFrequency(value: string, field = 'frequency'): Frequency {
  if (!isFrequency(value)) throw invalidArgument(field, `${quote(value)} is not supported: use one of ${FREQUENCY_NAMES.join(', ')}`);
  return value;
}

/**
 * Longest seasonal period, in steps (an entity's `season_length`; the benchmark files' `period`
 * too, whose engine allocates per season step: a period of 1e9 ran the CLI out of memory).
 */
export const MAX_SEASON_LENGTH = 1000;

/** Default seasonal period of a frequency. */
export function defaultSeasonLength(f: Frequency): number {
  return FREQUENCIES[f].season;
}

/** Description of a frequency's grid. */
export function gridOf(f: Frequency): string {
  return FREQUENCIES[f].grid;
}

/** The step index of an instant on the grid, or `undefined` if the instant is off the grid. */
export function indexOf(f: Frequency, timeMs: number): number | undefined {
  const info = FREQUENCIES[f];
  if (info.stepMs !== undefined) {
    const offset = f === 'P1W' ? timeMs - MONDAY_EPOCH : timeMs;
    return offset % info.stepMs === 0 ? offset / info.stepMs : undefined;
  }
  const d = new Date(timeMs);
  if (d.getUTCDate() !== 1 || timeMs % DAY !== 0) return undefined;
  const month = d.getUTCFullYear() * 12 + d.getUTCMonth();
  return month % info.months! === 0 ? month / info.months! : undefined;
}

/** The instant of a step index (inverse of `indexOf`). */
export function timeOf(f: Frequency, index: number): number {
  const info = FREQUENCIES[f];
  if (info.stepMs !== undefined) return index * info.stepMs + (f === 'P1W' ? MONDAY_EPOCH : 0);
  const month = index * info.months!;
  // Not Date.UTC(y, m, 1): it maps years 0..99 to 1900..1999.
  const d = new Date(0);
  d.setUTCFullYear(Math.floor(month / 12), ((month % 12) + 12) % 12, 1);
  return d.getTime();
}

/**
 * Parse an RFC 3339 timestamp (with `Z` or an offset) to epoch ms; throws 400 naming `field`.
 * Stricter than `Date.parse`, which accepts many other shapes. Up to 9 fraction digits. Digits
 * below the millisecond (`finer`): an observation's time must have only zeros there (`.123000Z`,
 * not `.1234Z`: 'refuse'); a filter bound is rounded up to the next millisecond ('ceil'), which
 * selects exactly the stored times (all whole milliseconds) at or after it, or before it as an
 * exclusive end. Why not refuse those too: `datetime.isoformat()` (Python) writes microseconds,
 * and such a bound is exact once rounded up (found by review).
 */
export function parseTime(value: string, field: string, finer: 'refuse' | 'ceil' = 'refuse'): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  const ms = m ? Date.parse(value.toUpperCase()) : NaN;
  if (!m || Number.isNaN(ms) || Number(m[2]) > 12 || Number(m[3]) > 31 || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) {
    throw invalidArgument(field, `${quote(String(value))} is not an RFC 3339 timestamp (e.g. 2026-01-31T00:00:00Z)`);
  }
  // Date.parse keeps milliseconds and drops finer digits: 00:00:00.0009Z would be taken for
  // 00:00:00Z, a time on the grid that was not sent (found by QA). Refuse what it would drop.
  const belowMs = m[7] !== undefined && /[1-9]/.test(m[7].slice(4));
  if (belowMs && finer === 'refuse') {
    throw invalidArgument(field, `${quote(value)} has digits below the millisecond: times are kept to the millisecond`);
  }
  // Date.parse rolls 2026-02-31 over to March: refuse dates that do not exist.
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) {
    throw invalidArgument(field, `${quote(value)} is not a valid date`);
  }
  // Date.parse truncates the millisecond field (whatever the epoch's sign): the next one is above
  return belowMs ? ms + 1 : ms;
}
