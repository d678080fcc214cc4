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
import { quantileGridMean } from './moments';
import { Rng } from '../rng';
import type { PredictiveDistribution, StepDistribution } from '../types';

/** Below this P(Y < ½) the discretised mean is taken as the continuous law's (rounding is mean-neutral). */
const NEGLIGIBLE = 1e-10;
/** Most terms summed for the exact mean before falling back to a quantile grid. */
const MAX_TERMS = 5000;
/** Widest law (its 1 − 1e-13 quantile) whose mean is summed exactly; wider ones use the quantile grid. */
const EXACT_SPAN = 100;

/** A count step obtained from a continuous one (see file doc). Idempotent: wrapping a CountStep returns the same law. */
export class CountStep implements StepDistribution {
  private known?: number;

  constructor(readonly base: StepDistribution) {}

  /**
   * The law's mean, computed when first read. Why lazily: a wide law's mean costs a 4,000-point
   * quantile grid, and an answer reads one step's (found by QA: a 1,000-step count forecast spent
   * 2 of its 2.3 s on the means of steps nobody read).
   */
  get mean(): number {
    if (this.known === undefined) this.known = countMean(this.base);
    return this.known;
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

/**
 * E[max(0, round(Y))] for Y ~ base. With no mass below ½ rounding is mean-neutral, so the
 * continuous law's own mean — on the quantile grid, not `base.mean`, which for a model fitted in
 * logs is its median (found by QA: a count axis's mean 3.4% under its law's, and reconciled count
 * draws re-centred on it, a leaf's reconciled mean a whole count low).
 */
function countMean(base: StepDistribution): number {
  if (base.cdf(0.5) < NEGLIGIBLE) return quantileGridMean(base);
  // A wide law: straight to the quantile grid (below). Why: a cdf call can cost 40 quantile
  // calls (a combination's cdf is found by bisection), and the sum takes one per integer up to
  // the far tail; a 1,000-step count forecast whose laws reached thousands took 50 s (found by QA).
  if (!(base.quantile(1 - 1e-13) <= EXACT_SPAN)) return gridMean(base);
  // E[Y*] = Σ_{k≥1} P(Y* ≥ k) = Σ_{k≥1} (1 − F(k − ½)).
  let s = 0;
  for (let k = 1; k <= MAX_TERMS; k++) {
    const tail = 1 - base.cdf(k - 0.5);
    if (tail < 1e-13) return s;
    s += tail;
  }
  return gridMean(base);
}

/**
 * E[max(0, round(Y))] on the quantile grid (`quantileGridMean`): accurate to ~1/`MEAN_GRID` of
 * the spread, for very wide forecasts with real mass near zero (a running mean: a sum of huge
 * quantiles would overflow).
 */
function gridMean(base: StepDistribution): number {
  return quantileGridMean(base, (q) => Math.max(0, Math.round(q)));
}

/**
 * A law's own mean: a count law's (exact where it can be), else on the quantile grid — not a
 * step's `mean`, which for a model fitted in logs is its median.
 */
export function lawMean(law: StepDistribution): number {
  return law instanceof CountStep ? law.mean : quantileGridMean(law);
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
  let mean: Float64Array | undefined;
  return {
    model: pd.model,
    // every step's mean, computed when first read (see `CountStep.mean`)
    get mean(): Float64Array {
      if (!mean) mean = Float64Array.from(steps, (s) => s.mean);
      return mean;
    },
    steps,
    intervalMethod: pd.intervalMethod,
    samplePaths(n: number, seed: number): Float64Array[] {
      return pd.samplePaths(n, seed).map((p) => p.map((v) => (Number.isNaN(v) ? v : Math.max(0, Math.round(v)))));
    },
  };
}

/**
 * A count law with at least `chance` probability of a positive value: what the base law lacks of
 * it is moved from 0 to 1, so P(Y = 0) = min(F(0), 1 − chance) and P(Y ≤ x) = F(x) for x ≥ 1
 * (the mean rises by the mass moved, the least any law reaching that chance can add). Why
 * (`registry.ts`, `COUNT_DEMAND_FLOOR`): a count law's chance of a positive value is at most its
 * mean, so a forecast whose mean is under 2.5% puts the upper end of its 95% interval at 0 and
 * misses every demand that comes.
 */
export class DemandFloorStep implements StepDistribution {
  readonly mean: number;
  /** P(Y = 0) after the floor. */
  readonly zero: number;
  /** The mass moved from 0 to 1 (0 when the base law already reaches the chance). */
  readonly moved: number;

  constructor(
    readonly base: StepDistribution,
    chance: number,
  ) {
    const f0 = base.cdf(0);
    this.zero = Math.min(f0, 1 - chance);
    this.moved = f0 - this.zero;
    this.mean = base.mean + this.moved;
  }

  cdf(x: number): number {
    if (!(x >= 0)) return 0;
    return x < 1 ? this.zero : this.base.cdf(x);
  }

  quantile(p: number): number {
    return p <= this.zero ? 0 : Math.max(1, this.base.quantile(p));
  }
}

/**
 * `pd` (a count forecast) with every step's chance of a positive value at least `chance`
 * (`DemandFloorStep`). Sample paths: the base paths, each 0 turned into 1 with probability
 * moved / P(Y = 0) at its step (drawn from a stream seeded by `seed`), so their marginals are the
 * floored laws and their dependence across steps stays the base model's.
 */
export function withDemandFloor(pd: PredictiveDistribution, chance: number): PredictiveDistribution {
  const steps = pd.steps.map((s) => new DemandFloorStep(s, chance));
  if (steps.every((s) => s.moved === 0)) return pd;
  return {
    model: pd.model,
    mean: Float64Array.from(steps, (s) => s.mean),
    steps,
    intervalMethod: pd.intervalMethod,
    samplePaths(n: number, seed: number): Float64Array[] {
      const paths = pd.samplePaths(n, seed);
      const rng = new Rng((seed ^ 0x5f3759df) >>> 0);
      const flip = steps.map((s) => s.moved / (s.zero + s.moved));
      for (const path of paths) {
        for (let i = 0; i < path.length && i < steps.length; i++) {
          if (rng.uniform() < flip[i] && path[i] === 0) path[i] = 1;
        }
      }
      return paths;
    },
  };
}
