/**
 * A step distribution on the log scale mapped back by exp: quantiles and CDF exactly, and as
 * `mean` the back-transformed point forecast exp(mean) — for a symmetric base the median, R forecast's default for transformed models
 * (`biasadj = FALSE`, Hyndman & Athanasopoulos, FPP3 §5.6). Why not the mean: point forecasts are
 * judged by absolute errors (MASE, sMAPE), for which the median is the optimal point.
 */
import type { PredictiveDistribution, StepDistribution } from '../../types';

/** exp(X) for a step X given on the log scale. */
export class ExpStep implements StepDistribution {
  readonly mean: number;
  constructor(private readonly base: StepDistribution) {
    this.mean = Math.exp(base.mean);
  }
  quantile(p: number): number {
    return Math.exp(this.base.quantile(p));
  }
  cdf(x: number): number {
    return x <= 0 ? 0 : this.base.cdf(Math.log(x));
  }
}

/** A forecast on the log scale mapped back by exp (quantiles and paths exactly; `mean` = median). */
export function expForecast(pd: PredictiveDistribution): PredictiveDistribution {
  const steps: StepDistribution[] = pd.steps.map((s) => new ExpStep(s));
  return {
    model: pd.model,
    mean: Float64Array.from(steps, (s) => s.mean),
    steps,
    intervalMethod: pd.intervalMethod,
    samplePaths: (n: number, seed: number) => pd.samplePaths(n, seed).map((p) => p.map(Math.exp)),
  };
}
