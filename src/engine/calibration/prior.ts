/**
 * Calibration priors: how much a route's own intervals must be scaled, per horizon step, to
 * cover 95% out of sample — pooled over the benchmark series of the same model, seasonal period
 * and length class, learned from `shared/data` with `src/cli/evaluate-prior.ts` and shipped here
 * as constants with the figures they were fitted on.
 *
 * Why a prior: the per-series backtest that calibrates each forecast (`conformal.ts`) has three
 * origins, so on short series it rests on a dozen correlated errors; shrinking its factor towards
 * 1 (the model's own intervals) left exactly the short yearly and quarterly series, whose model
 * intervals are worst, too narrow (M3 yearly 87.6% coverage). Shrinking towards the pooled
 * factor of similar series instead is the empirical-Bayes form of the same estimate (Efron &
 * Morris 1975): the class says how far off such models usually are at step k, the series' own
 * backtest how far this one is from that.
 *
 * The factor at step k is exp(a + b·ln k + c·ln²k) (smooth in the horizon, three numbers per
 * class instead of one per step; c = 0 for horizons under `QUADRATIC_MIN_STEPS`), fitted by
 * least squares to the per-step conformal factors
 * q̂₀.₉₅(|y − ŷ| / s) / z₀.₉₇₅ of the pooled test errors (s = the step's own spread,
 * (q₀.₈₄ − q₀.₁₆)/2); `k0` is the shrinkage of the series' own evidence, weight o / (o + k0) for
 * o backtest origins, chosen per class by two-fold cross-fitting.
 */
import type { SeriesInfo } from '../types';

/** Length classes of the history: short (< 25 observations), medium (< 50), long. */
export type LengthClass = 's' | 'm' | 'l';

/** One class's prior. */
export interface CalibrationPrior {
  /** Registry name of the model (an `auto` route) the factors were measured on. */
  readonly model: string;
  readonly period: number;
  /** Length class, or `*` for the pool of every length (used when the length class has no entry). */
  readonly length: LengthClass | '*';
  /** Factor at step k (1-based): exp(a + b·ln k + c·ln²k). */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  /** Shrinkage of the series' own backtest evidence: weight o / (o + k0) for o origins. */
  readonly k0: number;
  /** What it was fitted on: the series, and the cross-fitted coverage / MSIS (before → after). */
  readonly fittedOn: string;
}

/** The length class of a history of `n` observations (see `LengthClass`; why these cuts: M3 yearly series run 14–41, the "other" series 63–96). */
export function lengthClass(n: number): LengthClass {
  return n < 25 ? 's' : n < 50 ? 'm' : 'l';
}

/**
 * The fitted priors, printed by
 *   node dist/src/cli/evaluate-prior.js --data m3/m3.jsonl,m4/m4-weekly.jsonl,m4/m4-hourly.jsonl,\
 *     daily/web-traffic.jsonl,hierarchy/australian-tourism.json      (files under shared/data)
 * i.e. every continuous series of the shared data (the intermittent car parts use the Croston
 * route, which has none). `fittedOn`: the series per file and group, and the class's cross-fitted
 * coverage / MSIS of 95% intervals, model intervals → with the prior.
 */
export const CALIBRATION_PRIORS: readonly CalibrationPrior[] = [
  {
    model: 'autoreg+autoreg-raw', period: 1, length: '*', a: 0.056, b: -0.1071, c: -0.0161, k0: 3,
    fittedOn: 'm4-weekly weekly 359; cross-fitted coverage 97.0% → 94.5%, MSIS 18.10 → 14.69',
  },
  {
    model: 'autoreg+autoreg-raw', period: 1, length: 'l', a: 0.056, b: -0.1071, c: -0.0161, k0: 3,
    fittedOn: 'm4-weekly weekly 359; cross-fitted coverage 97.0% → 94.5%, MSIS 18.10 → 14.69',
  },
  {
    model: 'autoreg', period: 24, length: '*', a: 0.0901, b: -0.1233, c: 0.0392, k0: 3,
    fittedOn: 'm4-hourly hourly 414; cross-fitted coverage 93.3% → 94.5%, MSIS 5.71 → 5.59',
  },
  {
    model: 'autoreg', period: 24, length: 'l', a: 0.0901, b: -0.1233, c: 0.0392, k0: 3,
    fittedOn: 'm4-hourly hourly 414; cross-fitted coverage 93.3% → 94.5%, MSIS 5.71 → 5.59',
  },
  {
    model: 'autoreg', period: 7, length: '*', a: 0.3053, b: -0.2271, c: 0.0581, k0: 10,
    fittedOn: 'web-traffic daily 988; cross-fitted coverage 92.7% → 95.9%, MSIS 8.73 → 9.03',
  },
  {
    model: 'autoreg', period: 7, length: 'l', a: 0.3053, b: -0.2271, c: 0.0581, k0: 10,
    fittedOn: 'web-traffic daily 988; cross-fitted coverage 92.7% → 95.9%, MSIS 8.73 → 9.03',
  },
  {
    model: 'dotm+ets-fast', period: 1, length: '*', a: 0.0249, b: 0.02, c: 0, k0: 30,
    fittedOn: 'm3 other 174; cross-fitted coverage 95.2% → 95.9%, MSIS 13.25 → 13.42',
  },
  {
    model: 'dotm+ets-fast', period: 1, length: 'l', a: 0.0249, b: 0.02, c: 0, k0: 30,
    fittedOn: 'm3 other 174; cross-fitted coverage 95.2% → 95.9%, MSIS 13.25 → 13.42',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: '*', a: 0.1112, b: 0.329, c: 0, k0: 30,
    fittedOn: 'm3 yearly 645; cross-fitted coverage 84.4% → 94.5%, MSIS 27.15 → 21.19',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 'm', a: 0.1333, b: 0.1175, c: 0, k0: 1,
    fittedOn: 'm3 yearly 186; cross-fitted coverage 90.4% → 97.0%, MSIS 24.38 → 21.08',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 's', a: 0.0984, b: 0.3815, c: 0, k0: 30,
    fittedOn: 'm3 yearly 459; cross-fitted coverage 82.0% → 95.1%, MSIS 28.27 → 20.47',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: '*', a: 0.0737, b: -0.0191, c: 0.0282, k0: 10,
    fittedOn: 'm3 monthly 1428; cross-fitted coverage 91.4% → 95.4%, MSIS 6.26 → 5.88',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 'l', a: 0.0737, b: -0.0191, c: 0.0282, k0: 10,
    fittedOn: 'm3 monthly 1426; cross-fitted coverage 91.3% → 95.4%, MSIS 6.26 → 5.89',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: '*', a: 0.1503, b: 0.1225, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 756, australian-tourism quarterly 403; cross-fitted coverage 88.2% → 95.0%, MSIS 9.18 → 8.28',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'l', a: 0.043, b: 0.1447, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 107, australian-tourism quarterly 403; cross-fitted coverage 89.4% → 95.4%, MSIS 7.33 → 6.70',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'm', a: 0.2743, b: 0.0965, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 595; cross-fitted coverage 87.1% → 95.3%, MSIS 10.91 → 9.69',
  },
];

/**
 * The prior for `model` (a registry name) on a series of `n` observations: the entry of its
 * period and length class, else the pooled one of its period, else undefined (no prior: the
 * series' own backtest alone decides, shrunk towards the model's intervals).
 */
export function calibrationPrior(
  model: string,
  info: SeriesInfo,
  n: number,
  priors: readonly CalibrationPrior[] = CALIBRATION_PRIORS,
): CalibrationPrior | undefined {
  const len = lengthClass(n);
  const mine = priors.filter((p) => p.model === model && p.period === info.period);
  return mine.find((p) => p.length === len) ?? mine.find((p) => p.length === '*');
}

/**
 * Fewest horizon steps for the curvature term c. Why: the one-step factor of the seasonal AR on
 * hourly and daily data is above those of the next few steps (M4 hourly 1.11 then 0.93–1.02;
 * web traffic 1.40 then 1.0–1.3), which a log-linear curve misses (hourly step 1 covered 87.9%);
 * six yearly steps are too few to estimate a bend.
 */
export const QUADRATIC_MIN_STEPS = 12;

/** The prior's factor at each of `h` steps (c absent = 0: the log-linear curve). */
export function priorFactors(prior: Pick<CalibrationPrior, 'a' | 'b'> & { readonly c?: number }, h: number): Float64Array {
  const c = prior.c ?? 0;
  return Float64Array.from({ length: h }, (_, k) => {
    const x = Math.log(k + 1);
    return Math.exp(prior.a + prior.b * x + c * x * x);
  });
}
