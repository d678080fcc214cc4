/**
 * The one-step model drift is judged against: the engine's local seasonal autoregression
 * (`models/autoreg`, lags 1–3 and p−1, p, p+1 per seasonal period, least squares, in logs when
 * every value is positive), fitted once and then stepped forward observation by observation with
 * its coefficients fixed. Why this model: it is the service's automatic choice for hourly and
 * weekly data, it forecasts well on both (M4 Hourly OWA 0.410), and its one-step forecast given
 * new data is a dot product over the lags, so scoring an observation costs microseconds where
 * refitting any model per observation would cost milliseconds (414 × 48 observations in the
 * bench). The fitted coefficients are plain numbers, so the model is stored as JSON between
 * observations.
 */
import { clamp } from '../guard';
import { normalCdf, normalQuantile } from '../math/normal';
import { countFinite } from '../math/stats';
import { autoreg } from '../models/autoreg/index';
import { MAX_MAGNITUDE, MIN_MAGNITUDE } from '../index';
import type { SeriesInfo } from '../types';

/** A fitted one-step model, JSON-serialisable. */
export interface DriftModel {
  /** Model name, e.g. `AR(1,2,3,23,24,25,167,168,169)[log]`. */
  readonly name: string;
  readonly lags: readonly number[];
  readonly phi: readonly number[];
  readonly intercept: number;
  /** One-step innovation standard deviation on the model's scale (floored, never 0). */
  readonly sigma: number;
  /** Whether the model works on log values. */
  readonly log: boolean;
}

/** Values on a regular grid: `values[i]` is grid step `firstIndex + i`, NaN where missing. */
export interface GridSeries {
  readonly values: ArrayLike<number>;
  readonly firstIndex: number;
}

/** Fewest observations before the first scored one (why: fewer leave the lag coefficients unidentified). */
export const MIN_DRIFT_OBSERVATIONS = 30;

/** Longest stretch of history the model is fitted on, in steps (10 cycles of 168 hours fit inside). */
export const MAX_FIT_WINDOW = 2000;

/** Longest seasonal period the series info declares (1 when none). */
function longestPeriod(info: SeriesInfo): number {
  return Math.max(1, info.period, ...(info.periods ?? []));
}

/**
 * How many steps of history a caller must supply before the newest scored observation: the fit
 * window plus the longest lag (why: a refit and the next forecasts both need them).
 */
export function driftHistoryLength(info: SeriesInfo): number {
  return MAX_FIT_WINDOW + longestPeriod(info) + 2;
}

/**
 * Fit the model on the grid values up to and including grid index `upTo`. Null when fewer than
 * `MIN_DRIFT_OBSERVATIONS` observations are there (or the data cannot be fitted). `outliers`:
 * grid indices of observations scoring held out of the history (`DriftState.outliers`), fitted
 * as gaps.
 */
export function fitDriftModel(series: GridSeries, info: SeriesInfo, upTo: number, outliers: ReadonlySet<number> = new Set()): DriftModel | null {
  const end = Math.min(series.values.length, upTo - series.firstIndex + 1);
  if (end <= 0) return null;
  const value = (k: number) => (outliers.has(series.firstIndex + k) ? NaN : series.values[k]);
  let start = Math.max(0, end - MAX_FIT_WINDOW);
  // leading gaps are not data: the fit starts at the first observation (as the facade does)
  while (start < end && Number.isNaN(value(start))) start++;
  const y = Float64Array.from({ length: end - start }, (_, i) => value(start + i));
  if (countFinite(y) < MIN_DRIFT_OBSERVATIONS) return null;
  // Data the engine refuses to forecast (largest |value| outside MIN_MAGNITUDE..MAX_MAGNITUDE, as
  // the oracle answers 422) are not fitted either (found by QA: a held-out 1e308 taken into the
  // refit after a detection gave an interval [8.7e-33, 1.4e38] and a false drift.resolved; data
  // at 1e160 a flat model that called every observation a miss). Null: a refit keeps the model it
  // has, a start waits until such values have left the window. Data within them fit as before.
  let largest = 0;
  for (const v of y) if (Math.abs(v) > largest) largest = Math.abs(v);
  if (largest > MAX_MAGNITUDE || (largest > 0 && largest < MIN_MAGNITUDE)) return null;
  let fitted;
  try {
    fitted = autoreg.fit(y, info, { window: MAX_FIT_WINDOW });
  } catch {
    return null;
  }
  const p = fitted.params as { lags: number[]; phi: number[]; intercept: number; sigma: number; log: boolean };
  // A constant or unfittable series gets a flat model: its sigma floor makes any change a miss.
  // The floor is relative to the data's own scale: in logs 1 (a relative change of 1e-6); on the
  // raw scale the fitted values' mean magnitude (found by QA: with 1 there, a series of values near
  // 1e-7 had σ ≥ 1e-6 and no shift of it, however large in its own terms, was ever a miss), at
  // most 1 as before: a floor of 1e-6 of a level near -1e9 was 1000 for noise of sd 1, and a shift of
  // 50 sd was never a miss (found in review).
  const scale = Math.abs(p.intercept) + (p.log ? 1 : Math.min(1, meanMagnitude(y) || 1));
  return { name: fitted.model, lags: [...p.lags], phi: [...p.phi], intercept: p.intercept, sigma: Math.max(p.sigma, 1e-6 * scale), log: p.log };
}

/** Mean absolute value of the finite values of `y` (0 when none). */
function meanMagnitude(y: Float64Array): number {
  let sum = 0;
  let n = 0;
  for (const v of y) if (Number.isFinite(v)) (sum += Math.abs(v)), n++;
  return n > 0 ? sum / n : 0;
}

/** A value on the model's scale (log when the model is in logs; NaN for a non-positive value there). */
export function toModelScale(model: DriftModel, value: number): number {
  if (!model.log) return value;
  return value > 0 ? Math.log(value) : NaN;
}

/** A value on the data's scale. */
export function fromModelScale(model: DriftModel, value: number): number {
  return model.log ? Math.exp(value) : value;
}

/** The one-step forecast's location on the model's scale, given the history `x(index)`. */
export function oneStepMean(model: DriftModel, x: (index: number) => number, index: number): number {
  let m = model.intercept;
  for (let j = 0; j < model.lags.length; j++) m += model.phi[j] * x(index - model.lags[j]);
  return m;
}

/** How one observation compares with its one-step forecast. */
export interface OneStepScore {
  /** Median of the forecast, on the data's scale (censored to the series' bounds). */
  readonly expected: number;
  /** Central interval of the forecast at the requested level, on the data's scale (censored to the series' bounds). */
  readonly lower: number;
  readonly upper: number;
  /** Predictive CDF at the observation. */
  readonly pit: number;
  /** Φ⁻¹(pit), ±∞ when the observation lies where the forecast puts no mass. */
  readonly z: number;
  /** Outside the central interval. */
  readonly miss: boolean;
}

/**
 * Score `value` against a Gaussian forecast N(mean, σ²) on the model's scale, at interval level
 * `level`. With `bounds` (the series' own: no observation lies beyond them) the reported median and
 * interval are the censored law's, as a forecast's quantiles are (`censorToBounds`: a utilisation's
 * interval no longer reaches above 100). An observation strictly inside the bounds is scored as
 * without them (censoring moves no quantile that lies within them). One at a bound says only that
 * the value would have been there or beyond: it counts as evidence towards the bound (z of that
 * sign, as without bounds) but never against it — a forecast whose median lies beyond the bound
 * sees it at z = 0, so a series pinned at 100 while the model expects 104 is no miss, as the
 * reported interval [100, 100] says.
 */
export function scoreOneStep(model: DriftModel, mean: number, value: number, level: number, bounds?: SeriesInfo['bounds']): OneStepScore {
  const q = normalQuantile(0.5 + level / 2);
  const x = toModelScale(model, value);
  let z = Number.isNaN(x) ? -Infinity : (x - mean) / model.sigma;
  if (bounds && ((value >= (bounds.upper ?? Infinity) && z < 0) || (value <= (bounds.lower ?? -Infinity) && z > 0))) z = 0;
  const pit = Number.isFinite(z) ? normalCdf(z) : z > 0 ? 1 : 0;
  const censor = (v: number) => (bounds ? clamp(v, bounds.lower ?? -Infinity, bounds.upper ?? Infinity) : v);
  return {
    expected: censor(fromModelScale(model, mean)),
    lower: censor(fromModelScale(model, mean - q * model.sigma)),
    upper: censor(fromModelScale(model, mean + q * model.sigma)),
    pit,
    z,
    miss: Math.abs(z) > q,
  };
}
