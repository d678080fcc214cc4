/**
 * Forecast distributions as draws: stratified draws of a base marginal, the step distribution of
 * reconciled draws, and the CRPS of a set of draws. Pure.
 */
import { EmpiricalStep } from '../distributions/empirical-step';
import { CensoredStep, ClampedStep } from '../guard';
import { lawMean } from '../distributions/count';
import type { StepDistribution } from '../types';

/** K stratified draws of `step`: its quantiles at (j + ½)/K, ascending. */
export function quantileGrid(step: StepDistribution, K: number): Float64Array {
  return Float64Array.from({ length: K }, (_, j) => step.quantile((j + 0.5) / K));
}

/**
 * A node's base forecast of one step as reconciliation takes it: K stratified draws
 * (`quantileGrid`) and their law's mean (the quantile grid's, as a depth-0 answer's
 * `axes_resolved`; a count law's own). Not the step's `mean`: for a model fitted in logs that is
 * its median, and the draws re-centred on it moved 3% down (found by review: a log-model leaf's
 * reconciled quantiles under its depth-0 ones, and sums of medians reconciled as means). A
 * forecast the plausibility band censors at a non-negative history's 0 (`guard.ts`) is taken
 * without that floor, and the floor is set on the reconciled draws instead, where every node can
 * keep it coherently (`probabilistic.ts`). Why: re-centring the floored law on another mean moved
 * its atom at 0 below 0 by the whole gap — a leaf's reconciled median −31 where its depth-0 one is
 * 139, at 1,000 steps. A series' bounds likewise (`CensoredStep.uncensored`).
 */
export function baseDraws(step: StepDistribution, K: number): { readonly mean: number; readonly grid: Float64Array } {
  const law = step instanceof CensoredStep ? step.uncensored() : step instanceof ClampedStep ? step.unfloored() : step;
  return { mean: lawMean(law), grid: quantileGrid(law, K) };
}

/**
 * A discrete distribution on the values of integer draws: cdf(x) = share of draws ≤ x,
 * quantile(p) = the smallest draw value v with cdf(v) ≥ p (so quantiles are draw values: integers).
 */
export class CountDrawsStep implements StepDistribution {
  private readonly sorted: Float64Array;
  readonly mean: number;

  constructor(draws: ArrayLike<number>, mean?: number) {
    if (draws.length === 0) throw new RangeError('CountDrawsStep needs at least one draw');
    this.sorted = Float64Array.from(draws).sort();
    this.mean = mean ?? this.sorted.reduce((s, v) => s + v, 0) / this.sorted.length;
  }

  quantile(p: number): number {
    const K = this.sorted.length;
    return this.sorted[Math.min(K - 1, Math.max(0, Math.ceil(p * K) - 1))];
  }

  cdf(x: number): number {
    const s = this.sorted;
    let lo = 0;
    let hi = s.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (s[mid] <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo / s.length;
  }
}

/** The step distribution of reconciled draws with the given mean: interpolated for continuous data, discrete for counts. */
export function drawsStep(draws: ArrayLike<number>, mean: number, kind: 'continuous' | 'count'): StepDistribution {
  return kind === 'count' ? new CountDrawsStep(draws, mean) : new EmpiricalStep(draws, mean);
}

/**
 * CRPS of the empirical distribution of `draws` at `y`, exactly: (1/K) Σ|x_j − y| −
 * (1/2K²) Σ_j Σ_k |x_j − x_k| (Gneiting & Raftery 2007, eq. 21), the second sum from the sorted
 * draws in O(K log K).
 */
export function sampleCrps(draws: ArrayLike<number>, y: number): number {
  const x = Float64Array.from(draws).sort();
  const K = x.length;
  let abs = 0;
  let spread = 0;
  for (let j = 0; j < K; j++) {
    abs += Math.abs(x[j] - y);
    spread += x[j] * (2 * j - K + 1);
  }
  return abs / K - spread / (K * K);
}
