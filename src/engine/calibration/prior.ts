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
 * The factor at step k is exp(a + b·ln k) (a log-linear curve: smooth in the horizon, two numbers
 * per class instead of one per step), fitted by least squares to the per-step conformal factors
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
  /** Factor at step k (1-based): exp(a + b·ln k). */
  readonly a: number;
  readonly b: number;
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
    model: 'autoreg+autoreg-raw', period: 1, length: '*', a: 0.0757, b: -0.1513, k0: 3,
    fittedOn: 'm4-weekly weekly 359; cross-fitted coverage 96.9% → 94.3%, MSIS 17.96 → 14.74',
  },
  {
    model: 'autoreg+autoreg-raw', period: 1, length: 'l', a: 0.0757, b: -0.1513, k0: 3,
    fittedOn: 'm4-weekly weekly 359; cross-fitted coverage 96.9% → 94.3%, MSIS 17.96 → 14.74',
  },
  {
    model: 'autoreg', period: 24, length: '*', a: -0.0786, b: 0.0593, k0: 3,
    fittedOn: 'm4-hourly hourly 414; cross-fitted coverage 93.3% → 94.5%, MSIS 5.71 → 5.60',
  },
  {
    model: 'autoreg', period: 24, length: 'l', a: -0.0786, b: 0.0593, k0: 3,
    fittedOn: 'm4-hourly hourly 414; cross-fitted coverage 93.3% → 94.5%, MSIS 5.71 → 5.60',
  },
  {
    model: 'autoreg', period: 7, length: '*', a: 0.0128, b: 0.063, k0: 30,
    fittedOn: 'web-traffic daily 988; cross-fitted coverage 92.7% → 96.4%, MSIS 8.73 → 8.91',
  },
  {
    model: 'autoreg', period: 7, length: 'l', a: 0.0128, b: 0.063, k0: 30,
    fittedOn: 'web-traffic daily 988; cross-fitted coverage 92.7% → 96.4%, MSIS 8.73 → 8.91',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: '*', a: 0.3014, b: -0.0067, k0: 10,
    fittedOn: 'm3 yearly 645, m3 other 174; cross-fitted coverage 86.4% → 93.1%, MSIS 24.35 → 20.71',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 'l', a: -0.0551, b: 0.0466, k0: 10,
    fittedOn: 'm3 other 174; cross-fitted coverage 95.2% → 95.2%, MSIS 13.68 → 13.66',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 'm', a: 0.1972, b: 0.0796, k0: 1,
    fittedOn: 'm3 yearly 186; cross-fitted coverage 89.2% → 96.8%, MSIS 24.65 → 20.06',
  },
  {
    model: 'theta+dotm+ets-fast', period: 1, length: 's', a: 0.0984, b: 0.3815, k0: 30,
    fittedOn: 'm3 yearly 459; cross-fitted coverage 82.0% → 95.1%, MSIS 28.27 → 20.47',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: '*', a: 0.0236, b: 0.0712, k0: 10,
    fittedOn: 'm3 monthly 1428; cross-fitted coverage 91.4% → 95.3%, MSIS 6.26 → 5.88',
  },
  {
    model: 'theta+dotm+ets-fast', period: 12, length: 'l', a: 0.0236, b: 0.0712, k0: 10,
    fittedOn: 'm3 monthly 1426; cross-fitted coverage 91.3% → 95.3%, MSIS 6.26 → 5.89',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: '*', a: 0.1531, b: 0.1228, k0: 30,
    fittedOn: 'm3 quarterly 756, australian-tourism quarterly 403; cross-fitted coverage 88.2% → 95.0%, MSIS 9.31 → 8.39',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'l', a: 0.043, b: 0.1447, k0: 30,
    fittedOn: 'm3 quarterly 107, australian-tourism quarterly 403; cross-fitted coverage 89.4% → 95.4%, MSIS 7.33 → 6.70',
  },
  {
    model: 'theta+dotm+ets-fast', period: 4, length: 'm', a: 0.2818, b: 0.1087, k0: 30,
    fittedOn: 'm3 quarterly 595; cross-fitted coverage 87.0% → 95.3%, MSIS 11.15 → 9.89',
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

/** The prior's factor at each of `h` steps. */
export function priorFactors(prior: Pick<CalibrationPrior, 'a' | 'b'>, h: number): Float64Array {
  return Float64Array.from({ length: h }, (_, k) => Math.exp(prior.a + prior.b * Math.log(k + 1)));
}
