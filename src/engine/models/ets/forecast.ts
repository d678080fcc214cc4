/**
 * Predictive distributions of a fitted ETS model, as R `forecast.ets` (8.x): point forecasts from
 * the state recursion; Gaussian intervals with the analytic variances of classes 1 and 2
 * (Hyndman et al. 2008, ch. 6); simulated sample paths otherwise.
 *
 * Deviations, each deliberate: (1) R also has analytic variances for class 3 (M,·,M); we simulate
 * those, as for every other model, because the class 3 formula costs O(h·(2m)³) while 5,000
 * paths are cheaper and exact in the limit. (2) Simulated quantiles use type 7 (`EmpiricalStep`)
 * where R uses type 8: a difference of a fraction of one order statistic.
 */
import { EmpiricalStep } from '../../distributions/empirical-step';
import { NormalStep } from '../../distributions/normal-step';
import type { PredictiveDistribution, StepDistribution } from '../../types';
import { pointForecast } from './recursion';
import { simulatePaths, type SimModel } from './simulate';
import { ADD, MULT, NONE } from './spec';
import { cCoefficients, class1Variance, class2Variance } from './variance';

/** Forecast settings. */
export interface ForecastSettings {
  /** Paths for simulated intervals (R's `npaths`, default 5000). */
  npaths: number;
  /** Seed of the interval simulation (recorded in the params). */
  seed: number;
}

/** `analytic` for classes 1–2, else `simulated`. */
export function intervalMethodFor(error: number, trend: number, season: number): 'analytic' | 'simulated' {
  return trend !== MULT && season !== MULT && (error === ADD || error === MULT) ? 'analytic' : 'simulated';
}

/** Build the predictive distribution of `model` (named `name`) over `h` steps. */
export function etsForecast(name: string, model: SimModel, h: number, settings: ForecastSettings): PredictiveDistribution {
  if (!Number.isInteger(h) || h < 1) throw new RangeError(`forecast horizon must be an integer >= 1, got ${h}`);
  const { m, error, trend, season, alpha, beta, gamma, phi, sigma2 } = model;
  let mean = pointForecast(model.lastState, m, trend, season, phi, h);
  const method = intervalMethodFor(error, trend, season);
  const steps: StepDistribution[] = [];
  if (method === 'analytic') {
    const c = cCoefficients(h, trend !== NONE, m, season !== NONE, alpha, beta, gamma, phi);
    const v = error === ADD ? class1Variance(c, h, sigma2) : class2Variance(c, mean, h, sigma2);
    for (let i = 0; i < h; i++) steps.push(new NormalStep(mean[i], Math.sqrt(v[i])));
  } else {
    const n = settings.npaths;
    const paths = simulatePaths(model, h, n, settings.seed);
    const col = new Float64Array(n);
    const fixedMean = new Float64Array(h);
    for (let i = 0; i < h; i++) {
      for (let p = 0; p < n; p++) col[p] = paths[p * h + i];
      // a multiplicative trend that turns negative has no point forecast in R (NA): use the path mean
      fixedMean[i] = Number.isFinite(mean[i]) ? mean[i] : meanOf(col);
      steps.push(new EmpiricalStep(col, fixedMean[i]));
    }
    mean = fixedMean;
  }
  return {
    model: name,
    mean,
    steps,
    intervalMethod: method,
    samplePaths(n: number, seed: number): Float64Array[] {
      const flat = simulatePaths(model, h, n, seed);
      const out: Float64Array[] = [];
      for (let p = 0; p < n; p++) out.push(flat.slice(p * h, (p + 1) * h));
      return out;
    },
  };
}

function meanOf(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return s / a.length;
}
