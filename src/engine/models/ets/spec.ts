/**
 * ETS model specifications: the (error, trend, season, damped) taxonomy of Hyndman, Koehler,
 * Ord & Snyder (2008), *Forecasting with Exponential Smoothing*, ch. 2, with R `forecast::ets`
 * (8.x) naming (`ETS(M,Ad,M)`) and its default restrictions (`restrict = TRUE`).
 */
import { InvalidSeriesError } from '../../errors';

/** Component codes as in R: N = none, A = additive, M = multiplicative. */
export type ErrorType = 'A' | 'M';
export type TrendType = 'N' | 'A' | 'M';
export type SeasonType = 'N' | 'A' | 'M';

/** One fully specified ETS model. */
export interface EtsSpec {
  readonly error: ErrorType;
  readonly trend: TrendType;
  readonly season: SeasonType;
  /** Damped trend (phi estimated); only with a trend. */
  readonly damped: boolean;
}

/** Integer codes used in the hot loops (R's etscalc.c: NONE 0, ADD 1, MULT 2). */
export const NONE = 0;
export const ADD = 1;
export const MULT = 2;

/** R `etscalc.c`'s guards: a divisor below `TOL` in absolute value makes a ratio `HUGEN`. */
export const TOL = 1e-10;
export const HUGEN = 1e10;

/** Code of a component letter for the numeric kernels. */
export function code(c: 'N' | 'A' | 'M'): number {
  return c === 'N' ? NONE : c === 'A' ? ADD : MULT;
}

/** R's label, e.g. `ETS(M,Ad,N)`. */
export function specName(s: EtsSpec): string {
  return `ETS(${s.error},${s.trend}${s.damped ? 'd' : ''},${s.season})`;
}

/** A partially specified model: `Z` (or undefined) means "select automatically". */
export interface EtsPattern {
  error: 'A' | 'M' | 'Z';
  trend: 'N' | 'A' | 'M' | 'Z';
  season: 'N' | 'A' | 'M' | 'Z';
  /** undefined = try both (R's `damped = NULL`). */
  damped: boolean | undefined;
}

/**
 * Parse R's model strings: three letters (`ZZZ`, `AAN`, `MAM`) or `AAdN`-style with the damping
 * marker (our convenience; R takes `damped = TRUE` separately).
 */
export function parseModel(model: string): EtsPattern {
  const m = /^([AMZ])([NAMZ])(d?)([NAMZ])$/.exec(model);
  if (!m) throw new InvalidSeriesError(`ets: model "${model}" is not of the form ZZZ / AAN / AAdN / MAM`);
  const trend = m[2] as EtsPattern['trend'];
  if (m[3] === 'd' && trend === 'N') throw new InvalidSeriesError(`ets: model "${model}" damps a trend it does not have`);
  return {
    error: m[1] as EtsPattern['error'],
    trend,
    season: m[4] as EtsPattern['season'],
    damped: m[3] === 'd' ? true : undefined,
  };
}

/**
 * R's `restrict = TRUE` exclusions: additive error with a multiplicative trend or season
 * (numerically unstable, Hyndman et al. 2008 §2.5.2), and M,M,A. `additiveOnly` also drops every
 * multiplicative component.
 */
export function isForbidden(s: EtsSpec, additiveOnly = false): boolean {
  if (s.error === 'A' && (s.trend === 'M' || s.season === 'M')) return true;
  if (s.error === 'M' && s.trend === 'M' && s.season === 'A') return true;
  if (additiveOnly && (s.error === 'M' || s.trend === 'M' || s.season === 'M')) return true;
  return s.damped && s.trend === 'N';
}

/** Number of free parameters R counts before deciding a series is too short (`npars` in ets()). */
export function rNpars(trend: string, season: string, damped: boolean | undefined, m: number): number {
  let np = 2;
  if (trend === 'A' || trend === 'M') np += 2;
  if (season === 'A' || season === 'M') np += m;
  if (damped) np += 1;
  return np;
}
