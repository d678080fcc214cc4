/** A Gaussian forecast step: the analytic case for ETS(A,·,·), ARIMA and most baselines. */
import { normalCdf, normalQuantile } from '../math/normal';
import type { StepDistribution } from '../types';

/** N(mean, sd²) as a `StepDistribution`; sd = 0 gives a point mass. */
export class NormalStep implements StepDistribution {
  constructor(
    readonly mean: number,
    readonly sd: number,
  ) {}

  quantile(p: number): number {
    return this.sd > 0 ? this.mean + this.sd * normalQuantile(p) : this.mean;
  }

  cdf(x: number): number {
    if (this.sd > 0) return normalCdf((x - this.mean) / this.sd);
    return x >= this.mean ? 1 : 0;
  }
}
