/**
 * Count (non-negative integer) versions of continuous forecasts, for `kind: 'count'` series.
 *
 * A continuous step distribution F is discretised by rounding and censoring at zero:
 * Y* = max(0, round(Y)), so P(Y* = 0) = F(0.5), P(Y* = k) = F(k + ½) − F(k − ½) for k ≥ 1.
 * Hence cdf*(x) = F(⌊x⌋ + ½) for x ≥ 0 (0 below), a step function, and the quantile is the
 * smallest integer k ≥ 0 with F(k + ½) ≥ p, i.e. max(0, ⌈Q(p) − ½⌉). All mass the continuous
 * model put below zero lands on 0. Why rounding rather than flooring: it keeps the median and
 * (for mass away from zero) the mean of the continuous forecast unchanged.
 */
import { runningMean } from '../math/stats';
import type { PredictiveDistribution, StepDistribution } from '../types';

/** Below this P(Y < ½) the discretised mean is taken as the continuous one (rounding is mean-neutral). */
const NEGLIGIBLE = 1e-10;
/** Most terms summed for the exact mean before falling back to a quantile grid. */
const MAX_TERMS = 5000;
/** Quantile grid size of the mean fallback. */
const GRID = 4000;

/** A count step obtained from a continuous one (see file doc). Idempotent: wrapping a CountStep returns the same law. */
export class CountStep implements StepDistribution {
  readonly mean: number;

  constructor(readonly base: StepDistribution) {
    this.mean = countMean(base);
  }

  cdf(x: number): number {
    if (!(x >= 0)) return 0;
    if (x === Infinity) return 1;
    return this.base.cdf(Math.floor(x) + 0.5);
  }

  quantile(p: number): number {
    const q = this.base.quantile(p);
    if (Number.isNaN(q)) return NaN;
    if (q === Infinity) return Infinity;
    return Math.max(0, Math.ceil(q - 0.5));
  }
}

/** E[max(0, round(Y))] for Y ~ base. */
function countMean(base: StepDistribution): number {
  if (base.cdf(0.5) < NEGLIGIBLE) return base.mean;
  // E[Y*] = Σ_{k≥1} P(Y* ≥ k) = Σ_{k≥1} (1 − F(k − ½)).
  let s = 0;
  for (let k = 1; k <= MAX_TERMS; k++) {
    const tail = 1 - base.cdf(k - 0.5);
    if (tail < 1e-13) return s;
    s += tail;
  }
  // Why: a very wide forecast with real mass near zero; a quantile-grid mean is accurate to ~1/GRID of the spread.
  // (a running mean: a sum of huge quantiles would overflow)
  return runningMean(Float64Array.from({ length: GRID }, (_, i) => Math.max(0, Math.round(base.quantile((i + 0.5) / GRID)))));
}

/** Discretise one step unless it already is a count step. */
export function toCountStep(step: StepDistribution): StepDistribution {
  return step instanceof CountStep ? step : new CountStep(step);
}

/**
 * The count version of a forecast: every step discretised as above, the mean replaced by the
 * discretised mean, and sample paths rounded and censored at zero (so they stay joint draws of
 * the same model). Same `model` and `intervalMethod` as the input.
 */
export function toCountDistribution(pd: PredictiveDistribution): PredictiveDistribution {
  const steps = pd.steps.map(toCountStep);
  const mean = Float64Array.from(steps, (s) => s.mean);
  return {
    model: pd.model,
    mean,
    steps,
    intervalMethod: pd.intervalMethod,
    samplePaths(n: number, seed: number): Float64Array[] {
      return pd.samplePaths(n, seed).map((p) => p.map((v) => (Number.isNaN(v) ? v : Math.max(0, Math.round(v)))));
    },
  };
}
