/**
 * A step distribution from samples (simulated paths, bootstrapped residuals):
 * quantiles by linear interpolation of order statistics (Hyndman & Fan type 7,
 * R's default), CDF as the matching piecewise-linear inverse.
 */
import type { StepDistribution } from '../types';

export class EmpiricalStep implements StepDistribution {
  private readonly sorted: Float64Array;
  readonly mean: number;

  /** `samples` need not be sorted; `mean` defaults to the sample mean. */
  constructor(samples: ArrayLike<number>, mean?: number) {
    if (samples.length === 0) throw new RangeError('EmpiricalStep needs at least one sample');
    this.sorted = Float64Array.from(samples).sort();
    let sum = 0;
    for (const v of this.sorted) sum += v;
    this.mean = mean ?? sum / this.sorted.length;
  }

  quantile(p: number): number {
    const s = this.sorted;
    const h = (s.length - 1) * Math.min(1, Math.max(0, p));
    const lo = Math.floor(h);
    const hi = Math.min(s.length - 1, lo + 1);
    return s[lo] + (h - lo) * (s[hi] - s[lo]);
  }

  cdf(x: number): number {
    const s = this.sorted;
    const n = s.length;
    if (x < s[0]) return 0;
    if (x >= s[n - 1]) return 1;
    // binary search for the last index with s[i] <= x
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (s[mid] <= x) lo = mid;
      else hi = mid;
    }
    const span = s[hi] - s[lo];
    const frac = span > 0 ? (x - s[lo]) / span : 1;
    return (lo + frac) / (n - 1);
  }

  /**
   * P(Y < x): `cdf`'s limit from the left, which differs from it where samples tie at x (a point
   * mass: reconciled draws censored at 0 put the atom there, and it belongs to the bin that
   * starts at 0, as for a depth-0 forecast's censored law).
   */
  cdfBelow(x: number): number {
    const s = this.sorted;
    const n = s.length;
    if (!(x > s[0])) return 0;
    if (x > s[n - 1]) return 1;
    // binary search for the first index with s[i] >= x (≥ 1, since s[0] < x)
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (s[mid] < x) lo = mid;
      else hi = mid;
    }
    return (lo + (x - s[lo]) / (s[hi] - s[lo])) / (n - 1);
  }
}
