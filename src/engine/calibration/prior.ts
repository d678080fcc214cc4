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
 * on the validation windows of the training data only (the last two stretches of `horizon` values
 * of each series' training part, each forecast from the values before it: the test windows scored by
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
 * parts use the Croston route, which has none); the validation windows are each training part's
 * last `horizon` values and the `horizon` values before them (`VALIDATION_WINDOWS` in
 * evaluate-prior.ts). `fittedOn`: the validation windows per file and group (two per series
 * where the history allows), and the class's cross-fitted coverage / MSIS of 95% intervals on
 * those windows, model intervals → with the prior.
 */
export const CALIBRATION_PRIORS: readonly CalibrationPrior[] = [
  {
    model: 'autoreg+autoreg-raw', period: 1, length: '*', a: 0.0734, b: -0.3875, c: 0.126, k0: 3,
    fittedOn: 'm4-weekly weekly 718; cross-fitted coverage 96.8% → 95.1%, MSIS 22.92 → 21.04',
  },
  {
    model: 'autoreg+autoreg-raw', period: 1, length: 'l', a: 0.0734, b: -0.3875, c: 0.126, k0: 3,
    fittedOn: 'm4-weekly weekly 718; cross-fitted coverage 96.8% → 95.1%, MSIS 22.92 → 21.04',
  },
  {
    model: 'autoreg', period: 24, length: '*', a: 0.2175, b: -0.2518, c: 0.0667, k0: 3,
    fittedOn: 'm4-hourly hourly 828; cross-fitted coverage 93.0% → 94.3%, MSIS 6.37 → 6.10',
  },
  {
    model: 'autoreg', period: 24, length: 'l', a: 0.2175, b: -0.2518, c: 0.0667, k0: 3,
    fittedOn: 'm4-hourly hourly 828; cross-fitted coverage 93.0% → 94.3%, MSIS 6.37 → 6.10',
  },
  {
    model: 'autoreg', period: 7, length: '*', a: 0.1546, b: -0.0999, c: 0.0203, k0: 30,
    fittedOn: 'web-traffic daily 1973; cross-fitted coverage 93.8% → 95.2%, MSIS 10.17 → 10.17',
  },
  {
    model: 'autoreg', period: 7, length: 'l', a: 0.1546, b: -0.0999, c: 0.0203, k0: 30,
    fittedOn: 'web-traffic daily 1973; cross-fitted coverage 93.8% → 95.2%, MSIS 10.17 → 10.17',
  },
  {
    model: 'dotm+ets-fast', period: 1, length: '*', a: -0.0015, b: 0.0877, c: 0, k0: 10,
    fittedOn: 'm3 other 227; cross-fitted coverage 93.1% → 95.3%, MSIS 13.21 → 12.77',
  },
  {
    model: 'dotm+ets-fast', period: 1, length: 'l', a: -0.0015, b: 0.0877, c: 0, k0: 10,
    fittedOn: 'm3 other 227; cross-fitted coverage 93.1% → 95.3%, MSIS 13.21 → 12.77',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: '*', a: 0.4049, b: 0.1866, c: 0, k0: 30,
    fittedOn: 'm3 yearly 843, m3 other 121; cross-fitted coverage 77.9% → 93.9%, MSIS 44.15 → 29.77',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 'm', a: 0.4895, b: 0.1191, c: 0, k0: 10,
    fittedOn: 'm3 yearly 281, m3 other 121; cross-fitted coverage 77.3% → 94.4%, MSIS 50.65 → 32.56',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 's', a: 0.2049, b: 0.4649, c: 0, k0: 30,
    fittedOn: 'm3 yearly 562; cross-fitted coverage 78.4% → 95.1%, MSIS 39.51 → 26.49',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: '*', a: 0.1997, b: -0.0875, c: 0.0428, k0: 10,
    fittedOn: 'm3 monthly 2856; cross-fitted coverage 90.8% → 94.8%, MSIS 7.81 → 7.50',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 'l', a: 0.204, b: -0.1309, c: 0.0517, k0: 10,
    fittedOn: 'm3 monthly 2122; cross-fitted coverage 91.3% → 94.8%, MSIS 6.36 → 6.11',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 'm', a: 0.285, b: 0.0023, c: -0.0069, k0: 3,
    fittedOn: 'm3 monthly 393; cross-fitted coverage 91.2% → 95.5%, MSIS 7.05 → 6.83',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 's', a: 0.1563, b: 0.0211, c: 0.0657, k0: 30,
    fittedOn: 'm3 monthly 341; cross-fitted coverage 87.7% → 95.4%, MSIS 17.70 → 16.46',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: '*', a: 0.1718, b: 0.1389, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 1460, australian-tourism quarterly 801; cross-fitted coverage 86.2% → 94.9%, MSIS 9.87 → 8.35',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'l', a: 0.267, b: 0.0401, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 69, australian-tourism quarterly 801; cross-fitted coverage 88.3% → 94.9%, MSIS 8.67 → 7.55',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'm', a: 0.1361, b: 0.1667, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 1014; cross-fitted coverage 84.9% → 95.0%, MSIS 9.92 → 8.15',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 's', a: 0.0864, b: 0.2774, c: 0, k0: 30,
    fittedOn: 'm3 quarterly 377; cross-fitted coverage 84.9% → 95.3%, MSIS 12.49 → 10.77',
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
