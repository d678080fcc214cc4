/**
 * Forecast accuracy metrics as the M3/M4 competitions define them (Makridakis, Spiliotis &
 * Assimakopoulos 2020, "The M4 Competition", IJF 36(1); the M4 Competition Guide), plus the
 * proper scoring rules used for probabilistic forecasts (Gneiting & Raftery 2007).
 *
 * Per-series functions return one number; aggregation over a data set (means over series, OWA as
 * ratios of totals) lives in `aggregateScores`. Missing values (NaN) in the training data are
 * skipped when computing scales; a NaN actual is skipped in the horizon means.
 */
import { normalCdf, normalPdf } from './math/normal';
import { NormalStep } from './distributions/normal-step';
import type { StepDistribution } from './types';

/** sMAPE of one series: mean over the horizon of 200·|y − ŷ| / (|y| + |ŷ|) (0 when both are 0). */
export function smape(actual: ArrayLike<number>, forecast: ArrayLike<number>): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < actual.length; i++) {
    const y = actual[i];
    const f = forecast[i];
    if (Number.isNaN(y)) continue;
    const d = Math.abs(y) + Math.abs(f);
    sum += d > 0 ? (200 * Math.abs(y - f)) / d : 0;
    n++;
  }
  return n > 0 ? sum / n : NaN;
}

/**
 * The MASE/MSIS scale: mean |x_t − x_{t−m}| over the training data (m = period, 1 if the
 * series is shorter than m + 1). Pairs with a missing value are skipped. Why the lag-1 fallback:
 * the competitions never meet it, but a user file may, and a scale must exist.
 */
export function maseScale(train: ArrayLike<number>, period: number): number {
  let m = Math.max(1, Math.floor(period));
  if (train.length <= m) m = 1;
  let sum = 0;
  let n = 0;
  for (let t = m; t < train.length; t++) {
    const d = train[t] - train[t - m];
    if (Number.isNaN(d)) continue;
    sum += Math.abs(d);
    n++;
  }
  return n > 0 ? sum / n : NaN;
}

/** MASE of one series: mean |y − ŷ| / `scale` (see `maseScale`). */
export function mase(actual: ArrayLike<number>, forecast: ArrayLike<number>, scale: number): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < actual.length; i++) {
    if (Number.isNaN(actual[i])) continue;
    sum += Math.abs(actual[i] - forecast[i]);
    n++;
  }
  return n > 0 ? sum / n / scale : NaN;
}

/**
 * MSIS of one series at level 1 − alpha (M4: alpha = 0.05): mean over the horizon of
 * (U − L) + (2/α)(L − y)[y < L] + (2/α)(y − U)[y > U], divided by `scale`.
 */
export function msis(
  actual: ArrayLike<number>,
  lower: ArrayLike<number>,
  upper: ArrayLike<number>,
  scale: number,
  alpha = 0.05,
): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < actual.length; i++) {
    const y = actual[i];
    if (Number.isNaN(y)) continue;
    const l = lower[i];
    const u = upper[i];
    sum += u - l + (y < l ? (2 / alpha) * (l - y) : 0) + (y > u ? (2 / alpha) * (y - u) : 0);
    n++;
  }
  return n > 0 ? sum / n / scale : NaN;
}

/** Share of actuals inside [lower, upper] (inclusive), over non-missing actuals. */
export function coverage(actual: ArrayLike<number>, lower: ArrayLike<number>, upper: ArrayLike<number>): number {
  let inside = 0;
  let n = 0;
  for (let i = 0; i < actual.length; i++) {
    const y = actual[i];
    if (Number.isNaN(y)) continue;
    if (y >= lower[i] && y <= upper[i]) inside++;
    n++;
  }
  return n > 0 ? inside / n : NaN;
}

/** Pinball (quantile) loss of quantile forecast `q` at probability `p` for actual `y`. */
export function pinball(y: number, q: number, p: number): number {
  return y >= q ? p * (y - q) : (1 - p) * (q - y);
}

/**
 * Scaled pinball loss of quantile forecasts (the M5 uncertainty metric, scaled as MASE): the mean
 * over the horizon and over `probs` of pinball(y, q_p, p), divided by `scale` (`maseScale`).
 * `quantiles[j][i]` is the forecast of quantile `probs[j]` at step i. Missing actuals are skipped.
 */
export function scaledPinball(
  actual: ArrayLike<number>,
  quantiles: readonly ArrayLike<number>[],
  probs: readonly number[],
  scale: number,
): number {
  let sum = 0;
  let n = 0;
  for (let j = 0; j < probs.length; j++) {
    for (let i = 0; i < actual.length; i++) {
      if (Number.isNaN(actual[i])) continue;
      sum += pinball(actual[i], quantiles[j][i], probs[j]);
      n++;
    }
  }
  return n > 0 ? sum / n / scale : NaN;
}

/** Number of quantile levels on the CRPS grid (midpoints (i − ½)/K). */
export const CRPS_GRID = 99;
const SQRT_PI_INV = 1 / Math.sqrt(Math.PI);

/**
 * CRPS of one forecast step against actual `y`. Exact for `NormalStep`
 * (Gneiting et al. 2005: σ[z(2Φ(z) − 1) + 2φ(z) − 1/√π]); otherwise through the identity
 * CRPS = 2∫₀¹ pinball_p(y, F⁻¹(p)) dp, integrated by the midpoint rule on `CRPS_GRID` levels
 * (relative error well under 1% for smooth distributions; why not the CDF form: every
 * `StepDistribution` has an exact quantile, while its CDF may be a numerical inverse).
 */
export function crps(step: StepDistribution, y: number): number {
  if (step instanceof NormalStep) {
    if (!(step.sd > 0)) return Math.abs(y - step.mean);
    const z = (y - step.mean) / step.sd;
    return step.sd * (z * (2 * normalCdf(z) - 1) + 2 * normalPdf(z) - SQRT_PI_INV);
  }
  let sum = 0;
  for (let i = 0; i < CRPS_GRID; i++) {
    const p = (i + 0.5) / CRPS_GRID;
    sum += pinball(y, step.quantile(p), p);
  }
  return (2 * sum) / CRPS_GRID;
}

/** Mean CRPS over a horizon (NaN actuals skipped). */
export function meanCrps(steps: readonly StepDistribution[], actual: ArrayLike<number>): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < actual.length && i < steps.length; i++) {
    if (Number.isNaN(actual[i])) continue;
    sum += crps(steps[i], actual[i]);
    n++;
  }
  return n > 0 ? sum / n : NaN;
}

/**
 * OWA (M4): ½ (sMAPE / sMAPE_Naive2 + MASE / MASE_Naive2), where each argument is the mean
 * over the whole set (ratios of totals, not a mean of per-series ratios).
 */
export function owa(smapeMean: number, maseMean: number, smapeNaive2: number, maseNaive2: number): number {
  return 0.5 * (smapeMean / smapeNaive2 + maseMean / maseNaive2);
}

/** One series' scores, as the evaluation collects them. */
export interface SeriesScore {
  readonly smape: number;
  readonly mase: number;
  readonly msis: number;
  readonly coverage: number;
  /** Scaled pinball loss (`scaledPinball`), where computed. */
  readonly spl?: number;
  /** The same series' Naive2 sMAPE and MASE, for OWA. */
  readonly smapeNaive2: number;
  readonly maseNaive2: number;
}

/** Set-level figures: means over series, OWA from the totals. */
export interface AggregateScore {
  readonly smape: number;
  readonly mase: number;
  readonly owa: number;
  readonly msis: number;
  readonly coverage: number;
  /** Mean scaled pinball loss (NaN when no series has one). */
  readonly spl: number;
  readonly series: number;
}

/**
 * Aggregate per-series scores the M4 way. Series with a non-finite score (a zero MASE scale on a
 * constant training set) are left out of that metric's mean only, so one odd series cannot turn
 * a whole set's figure into Infinity.
 */
export function aggregateScores(scores: readonly SeriesScore[]): AggregateScore {
  const mean = (key: keyof SeriesScore, alongside?: keyof SeriesScore): number => {
    let sum = 0;
    let n = 0;
    for (const s of scores) {
      const v = s[key] ?? NaN;
      if (!Number.isFinite(v) || (alongside !== undefined && !Number.isFinite(s[alongside]))) continue;
      sum += v;
      n++;
    }
    return n > 0 ? sum / n : NaN;
  };
  const sm = mean('smape', 'smapeNaive2');
  const ma = mean('mase', 'maseNaive2');
  return {
    smape: mean('smape'),
    mase: mean('mase'),
    owa: owa(sm, ma, mean('smapeNaive2', 'smape'), mean('maseNaive2', 'mase')),
    msis: mean('msis'),
    coverage: mean('coverage'),
    spl: mean('spl'),
    series: scores.length,
  };
}
