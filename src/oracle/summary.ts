/**
 * Turn an engine distribution at one step into what a query reports: mean, quantiles at the
 * requested levels, and probabilities of the outcome bins defined by thresholds. Pure.
 */
import { quantileGridMean } from '../engine/distributions/moments';
import type { PredictiveDistribution, SeriesInfo, StepDistribution } from '../engine/types';

/** Default quantile levels reported for the first axis. */
export const DEFAULT_QUANTILE_LEVELS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95];
/** Number of default thresholds (K = 10 bins). */
export const DEFAULT_THRESHOLD_COUNT = 9;

export interface StepSummary {
  readonly mean: number;
  readonly quantiles: number[];
  readonly thresholds: number[];
  /** Probabilities of the len(thresholds) + 1 bins; sums to 1. */
  readonly distribution: number[];
}

/**
 * Summarise step `h` (1-based). Bin i is [t(i), t(i+1)): its probability is P(Y < t(i+1)) −
 * P(Y < t(i)). For count data P(Y < t) counts the integers below t, so bins below zero get 0.
 * `mean` is the expected value of the law the quantiles and bins describe (the API's "mean
 * forecast"): a count law's own mean (that step's only: the path's other means are never
 * computed), else its quantile-grid mean (`quantileGridMean`). Why not the model's point
 * forecast (`dist.mean`): for a model fitted in logs that is the back-transformed median (R's
 * default; the benchmarks score it), 18% under the mean of a wide forecast, and where the band
 * censors a forecast it is the point clamped to the band (found by QA: "mean" 0 with a 75%
 * quantile of 12,563).
 */
export function summarise(
  dist: PredictiveDistribution,
  h: number,
  thresholds: readonly number[] | undefined,
  levels: readonly number[],
  kind: 'continuous' | 'count',
  bounds?: SeriesInfo['bounds'],
): StepSummary {
  const step = dist.steps[h - 1];
  return summariseStep(step, kind === 'count' ? step.mean : quantileGridMean(step), thresholds, levels, kind, bounds);
}

/**
 * `summarise` for one step distribution with its mean (a reconciled node's, for instance).
 * `bounds`: those the law was censored to, which the default thresholds stay within.
 */
export function summariseStep(
  step: StepDistribution,
  mean: number,
  thresholds: readonly number[] | undefined,
  levels: readonly number[],
  kind: 'continuous' | 'count',
  bounds?: SeriesInfo['bounds'],
): StepSummary {
  const quantiles = levels.map((p) => step.quantile(p));
  const t = thresholds && thresholds.length > 0 ? [...thresholds] : defaultThresholds(step.quantile(0.05), step.quantile(0.95), kind, bounds);
  const below = (x: number): number => {
    if (kind === 'count') return Number.isInteger(x) ? (x - 1 < 0 ? 0 : step.cdf(x - 1)) : x < 0 ? 0 : step.cdf(Math.floor(x));
    return step.cdfBelow ? step.cdfBelow(x) : step.cdf(x);
  };
  const distribution: number[] = [];
  let previous = 0;
  for (const x of t) {
    // Running max and clamp absorb floating-point noise, so every probability is ≥ 0.
    const c = Math.min(1, Math.max(previous, below(x)));
    distribution.push(c - previous);
    previous = c;
  }
  distribution.push(1 - previous);
  return { mean, quantiles, thresholds: t, distribution };
}

/**
 * 9 thresholds evenly spaced between the 5% and 95% quantiles (widened by 5% when they coincide,
 * relative to their scale, so a series of 1e-12s gets bins of its own size; a certain 0 gets
 * thresholds from 0 to 0.1).
 * Why a certain 0 is widened upwards only: it comes from a position the series is closed at, a
 * history of zeros or the floor of a non-negative series (`engine/closed.ts`, `guard.ts`), whose
 * axis has nothing below 0; thresholds around it (−0.05 to 0.05, before) named negative outcomes
 * on a count axis (found by QA). The bin below the first threshold still exists (t0 = −∞).
 * Within `bounds` (the axis's, which the law was censored to): a widened range reaching past one
 * slides inside, keeping its width where the bounds leave room (a series flat at an upper bound of
 * 100 gets 90–100, its last bin [100, ∞) the bound's atom; it got 95–105 before, the bins above 100
 * always empty). The quantiles themselves never reach past a bound, so nothing else moves.
 */
export function defaultThresholds(lo: number, hi: number, kind: 'continuous' | 'count' = 'continuous', bounds?: SeriesInfo['bounds']): number[] {
  if (kind === 'count') return countThresholds(lo, hi, bounds);
  if (lo === 0 && hi === 0) hi = 0.1;
  else if (!(hi - lo > 1e-9 * Math.max(Math.abs(lo), Math.abs(hi)))) {
    const w = (Math.abs(lo) > 0 ? Math.abs(lo) : 1) * 0.05;
    lo -= w;
    hi += w;
  }
  const upper = bounds?.upper ?? Infinity;
  const lower = bounds?.lower ?? -Infinity;
  if (hi > upper) [lo, hi] = [lo - (hi - upper), upper];
  if (lo < lower) [lo, hi] = [lower, Math.min(upper, hi + (lower - lo))];
  return Array.from({ length: DEFAULT_THRESHOLD_COUNT }, (_, i) => lo + ((hi - lo) * i) / (DEFAULT_THRESHOLD_COUNT - 1));
}

/**
 * Default thresholds of a count axis: whole numbers, so every bin [t, t′) holds whole outcomes.
 * Between the 5% and 95% quantiles q5 and q95, evenly spaced and rounded where they span more
 * than 8; else the 9 consecutive whole numbers from q5, so each bin is the chance of one count.
 * Never 0 or below: the first bin (below the first threshold) is then the chance of 0 rather than
 * an always empty bin below 0. Why: thresholds spaced between non-integers made bins no count can
 * fall in (found by QA: an intermittent series got [0, 0.125, …, 1], eight of ten bins always 0;
 * hourly counts got every half-integer bin empty).
 * Within `bounds` alike: never at or below the lower bound (the first bin is the chance of the
 * bound) and never above the upper one, the consecutive run sliding down to end on it; where the
 * bounds hold fewer than 10 counts, one threshold per count above the lower bound, so fewer than
 * 9 (an axis bounded to [0, 4] gets 1–4: the chances of 0, 1, 2, 3 and 4; it got 1–9 before,
 * five bins always empty).
 */
function countThresholds(q5: number, q95: number, bounds?: SeriesInfo['bounds']): number[] {
  const floor = Math.max(0, bounds?.lower ?? 0) + 1;
  const top = bounds?.upper ?? Infinity;
  const n = DEFAULT_THRESHOLD_COUNT;
  const lo = Math.max(floor, Math.min(Math.floor(q5), top - (n - 1)));
  const hi = Math.min(top, Math.max(lo, Math.ceil(q95)));
  if (hi - lo <= n - 1) return Array.from({ length: Math.max(1, Math.min(n, top - lo + 1)) }, (_, i) => lo + i);
  return Array.from({ length: n }, (_, i) => Math.round(lo + ((hi - lo) * i) / (n - 1)));
}
