/**
 * A finite mixture of step distributions: cdf as the weighted sum of the component cdfs,
 * mean as the weighted mean, quantile by bisection on the mixture cdf. Used to combine
 * models' forecasts (ensembles, model averaging) without assuming a parametric shape.
 * The mixture quantile always lies between the smallest and largest component quantile at
 * the same p, which brackets the bisection.
 */
import type { StepDistribution } from '../types';

/** Bisection iterations cap (each halves the bracket; 200 is far past double precision). */
const MAX_ITER = 200;

export class MixtureStep implements StepDistribution {
  readonly mean: number;
  private readonly components: readonly StepDistribution[];
  private readonly weights: Float64Array;

  /**
   * `weights` default to equal; they must be non-negative with a positive sum and are
   * normalised here. Throws `RangeError` on an empty or mismatched input.
   */
  constructor(components: readonly StepDistribution[], weights?: ArrayLike<number>) {
    const k = components.length;
    if (k === 0) throw new RangeError('MixtureStep needs at least one component');
    if (weights && weights.length !== k) throw new RangeError(`MixtureStep: ${k} components but ${weights.length} weights`);
    const w = new Float64Array(k);
    let total = 0;
    for (let i = 0; i < k; i++) {
      const v = weights ? weights[i] : 1;
      if (!(v >= 0) || !Number.isFinite(v)) throw new RangeError(`MixtureStep: weight ${i} is ${v}`);
      w[i] = v;
      total += v;
    }
    if (!(total > 0)) throw new RangeError('MixtureStep: weights sum to 0');
    let mean = 0;
    for (let i = 0; i < k; i++) {
      w[i] /= total;
      mean += w[i] * components[i].mean;
    }
    this.components = components;
    this.weights = w;
    this.mean = mean;
  }

  cdf(x: number): number {
    let s = 0;
    for (let i = 0; i < this.components.length; i++) if (this.weights[i] > 0) s += this.weights[i] * this.components[i].cdf(x);
    return Math.min(1, Math.max(0, s));
  }

  /** Smallest x with cdf(x) ≥ p (to double precision), by bisection. */
  quantile(p: number): number {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < this.components.length; i++) {
      if (this.weights[i] === 0) continue;
      const q = this.components[i].quantile(p);
      if (q < lo) lo = q;
      if (q > hi) hi = q;
    }
    if (lo === hi || !Number.isFinite(lo) || !Number.isFinite(hi)) {
      // ±Infinity (p at 0 or 1 with unbounded components) or a single point: nothing to search.
      return p <= 0.5 ? lo : hi;
    }
    if (this.cdf(lo) >= p) return lo;
    for (let it = 0; it < MAX_ITER; it++) {
      const mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      if (this.cdf(mid) >= p) hi = mid;
      else lo = mid;
    }
    return hi;
  }
}
