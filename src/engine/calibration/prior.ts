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
 * q̂₀.₉₅(|y − ŷ| / reach) of the pooled errors (reach = the distance from the mean to the
 * model's own 95% interval's end on the error's side: the factor that interval needs to cover),
 * on the validation windows of the training data only (the last `horizon` values of each
 * series' training part, forecast from the values before them: the test windows scored by
 * `forecast evaluate` are never seen); `k0` is the shrinkage of the series' own evidence,
 * weight o / (o + k0) for o backtest origins, chosen per class by two-fold cross-fitting on the
 * same validation windows.
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
 * i.e. the training parts of every continuous series of the shared data (the intermittent car
 * parts use the Croston route, which has none); the validation window is each training part's
 * last `horizon` values. `fittedOn`: the series per file and group, and the class's cross-fitted
 * coverage / MSIS of 95% intervals on those validation windows, model intervals → with the prior.
 */
export const CALIBRATION_PRIORS: readonly CalibrationPrior[] = [
  {
    model: 'autoreg+autoreg-raw', period: 1, length: '*', a: 0.1261, b: -0.3934, c: 0.1069, k0: 10,
    fittedOn: 'm4-weekly weekly 359; cross-fitted coverage 97.0% → 95.1%, MSIS 21.35 → 19.89',
  },
  {
    model: 'autoreg+autoreg-raw', period: 1, length: 'l', a: 0.1261, b: -0.3934, c: 0.1069, k0: 10,
    fittedOn: 'm4-weekly weekly 359; cross-fitted coverage 97.0% → 95.1%, MSIS 21.35 → 19.89',
  },
  {
    model: 'autoreg', period: 24, length: '*', a: 0.1934, b: -0.2505, c: 0.0723, k0: 10,
    fittedOn: 'm4-hourly hourly 414; cross-fitted coverage 92.6% → 95.1%, MSIS 6.51 → 6.21',
  },
  {
    model: 'autoreg', period: 24, length: 'l', a: 0.1934, b: -0.2505, c: 0.0723, k0: 10,
    fittedOn: 'm4-hourly hourly 414; cross-fitted coverage 92.6% → 95.1%, MSIS 6.51 → 6.21',
  },
  {
    model: 'autoreg', period: 7, length: '*', a: 0.0652, b: -0.0432, c: 0.012, k0: 30,
    fittedOn: 'web-traffic daily 987; cross-fitted coverage 93.8% → 95.3%, MSIS 9.07 → 9.07',
  },
  {
    model: 'autoreg', period: 7, length: 'l', a: 0.0652, b: -0.0432, c: 0.012, k0: 30,
    fittedOn: 'web-traffic daily 987; cross-fitted coverage 93.8% → 95.3%, MSIS 9.07 → 9.07',
  },
  {
    model: 'dotm+ets-fast', period: 1, length: '*', a: -0.0846, b: 0.1446, c: 0, k0: 30,
    fittedOn: 'm3 other 174; cross-fitted coverage 93.2% → 96.0%, MSIS 13.03 → 12.64',
  },
  {
    model: 'dotm+ets-fast', period: 1, length: 'l', a: -0.0846, b: 0.1446, c: 0, k0: 30,
    fittedOn: 'm3 other 174; cross-fitted coverage 93.2% → 96.0%, MSIS 13.03 → 12.64',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: '*', a: 0.2925, b: 0.3929, c: 0, k0: 30,
    fittedOn: 'm3 yearly 645; cross-fitted coverage 77.1% → 94.8%, MSIS 44.14 → 28.71',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 'm', a: 0.5278, b: 0.3524, c: 0, k0: 30,
    fittedOn: 'm3 yearly 150; cross-fitted coverage 69.1% → 95.6%, MSIS 69.53 → 36.19',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 's', a: 0.1625, b: 0.4464, c: 0, k0: 10,
    fittedOn: 'm3 yearly 495; cross-fitted coverage 79.5% → 94.8%, MSIS 36.44 → 25.91',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: '*', a: 0.2161, b: -0.0152, c: 0.0122, k0: 3,
    fittedOn: 'm3 monthly 1428; cross-fitted coverage 90.0% → 94.2%, MSIS 6.83 → 6.44',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 'l', a: 0.2158, b: -0.0265, c: 0.0177, k0: 10,
    fittedOn: 'm3 monthly 1079; cross-fitted coverage 89.6% → 94.7%, MSIS 6.91 → 6.52',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 'm', a: 0.273, b: -0.0313, c: 0.0075, k0: 10,
    fittedOn: 'm3 monthly 349; cross-fitted coverage 91.5% → 96.0%, MSIS 6.59 → 6.28',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: '*', a: 0.2789, b: 0.0597, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 756, australian-tourism quarterly 401; cross-fitted coverage 86.3% → 94.7%, MSIS 9.84 → 8.57',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'l', a: 0.4845, b: 0.007, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 69, australian-tourism quarterly 401; cross-fitted coverage 82.9% → 94.7%, MSIS 11.84 → 8.98',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'm', a: 0.127, b: 0.1029, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 594; cross-fitted coverage 88.0% → 95.0%, MSIS 8.39 → 7.64',
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
