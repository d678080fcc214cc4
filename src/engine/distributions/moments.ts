/**
 * Moments of a step distribution from its quantile function alone, for any law the engine builds
 * (a combination's averaged quantiles, a censored law's atoms, a log model's skew), whose `mean`
 * field is the model's point forecast rather than the law's expected value.
 */
import { runningMean } from '../math/stats';
import type { StepDistribution } from '../types';

/** Points of the quantile grid: the midpoints of `MEAN_GRID` equal slices of (0, 1). */
export const MEAN_GRID = 4000;

/**
 * E[f(Y)] for Y ~ `step` on the midpoint quantile grid: within about 1/`MEAN_GRID` of the spread
 * (the tails beyond the 1/(2·MEAN_GRID) levels are represented by the nearest grid quantile; the
 * service's forecasts are censored to a band, so no tail is unbounded). A running mean, so a sum of
 * huge quantiles cannot overflow.
 */
export function quantileGridMean(step: StepDistribution, f: (q: number) => number = (q) => q): number {
  return runningMean(Float64Array.from({ length: MEAN_GRID }, (_, i) => f(step.quantile((i + 0.5) / MEAN_GRID))));
}
