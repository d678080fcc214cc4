/**
 * A forecast widened by an independent, zero-median error the model's own intervals leave out
 * (`Fitted.addedSd`: the AR's filled-in regressors), added after calibration. Quantile by
 * quantile around the median, the distance d of quantile p becomes sign(z)·√(d² + (z·s)²), z the
 * standard normal quantile of p and s the error's standard deviation: for a normal step this is
 * exactly the sum of the two normal laws; for a skewed one it keeps the median and each side's
 * shape, and it is increasing in p (|d| and |z| both grow away from the median), so still a law.
 */
import { normalQuantile } from '../math/normal';
import { Rng } from '../rng';
import { cdfByBisection } from './invert';
import type { PredictiveDistribution, StepDistribution } from '../types';

/** `base` widened by an error of standard deviation `sd` (see the file comment); same mean. */
export class WidenedStep implements StepDistribution {
  readonly mean: number;
  private readonly median: number;
  constructor(
    private readonly base: StepDistribution,
    private readonly sd: number,
  ) {
    this.mean = base.mean;
    this.median = base.quantile(0.5);
  }
  quantile(p: number): number {
    const z = normalQuantile(p);
    const d = this.base.quantile(p) - this.median;
    return this.median + Math.sign(z) * Math.sqrt(d * d + z * z * this.sd * this.sd);
  }
  /** The inverse of `quantile` (`cdfByBisection`). */
  cdf(x: number): number {
    return cdfByBisection((p) => this.quantile(p), x);
  }
}

/**
 * `pd` with step i widened by `sd[i]` (steps with 0 unchanged). Sample paths: the model's paths
 * plus one normal draw per path times `sd` (the error comes from the same filled values at every
 * step, so it moves the whole path), drawn from a stream of its own derived from `seed`.
 */
export function widenSteps(pd: PredictiveDistribution, sd: Float64Array): PredictiveDistribution {
  const h = pd.steps.length;
  const steps = pd.steps.map((s, i) => (sd[i] > 0 ? new WidenedStep(s, sd[i]) : s));
  return {
    model: pd.model,
    mean: pd.mean,
    steps,
    intervalMethod: pd.intervalMethod,
    samplePaths(n: number, seed: number): Float64Array[] {
      const paths = pd.samplePaths(n, seed);
      const rng = new Rng((seed ^ 0x5f3759df) >>> 0);
      for (const path of paths) {
        const z = rng.normal();
        for (let i = 0; i < h; i++) path[i] += z * sd[i];
      }
      return paths;
    },
  };
}
