/**
 * Gaussian predictive distributions of linear innovations models, shared by the baseline,
 * Theta and MSTL families.
 *
 * A model whose future is `y[n+k] = mean[k] + σ·scale[k]·Σ_{j=0}^{k-1} ψ_j ε_{k−j} + extra[k]·z`
 * (ε, z iid N(0,1); ψ_0 = 1) covers the random walk (ψ_j = 1), the seasonal random walk
 * (ψ_j = 1 when m divides j), SES and Theta (ψ_j = α), and the drift-uncertainty term of R's
 * `rwf(drift = TRUE)` (`extra[k] = k·se(b)`). Marginals are exact normals; sample paths are
 * drawn from the same recursion, so they are jointly consistent with the marginals.
 */
import { NormalStep } from '../distributions/normal-step';
import { Rng } from '../rng';
import type { PredictiveDistribution, StepDistribution } from '../types';

/** Inputs of `linearGaussianForecast`. */
export interface LinearGaussianSpec {
  /** Model name recorded on the distribution. */
  readonly model: string;
  /** Point forecasts, length h. */
  readonly mean: Float64Array;
  /** One-step innovation standard deviation (≥ 0). */
  readonly sigma: number;
  /** ψ weights; `psi(0)` is taken as 1 whatever it returns. */
  readonly psi: (j: number) => number;
  /** Per-step multiplier of the innovation part (reseasonalising factors); default 1. */
  readonly scale?: ArrayLike<number>;
  /** Per-step sd of a shared N(0,1) term (parameter uncertainty); default none. */
  readonly extra?: ArrayLike<number>;
  /** Recorded interval method; default `analytic`. */
  readonly intervalMethod?: string;
}

/** Build the predictive distribution of a linear Gaussian innovations model (see file doc). */
export function linearGaussianForecast(spec: LinearGaussianSpec): PredictiveDistribution {
  const h = spec.mean.length;
  const psi = new Float64Array(h);
  for (let j = 0; j < h; j++) psi[j] = j === 0 ? 1 : spec.psi(j);
  const sigma = Number.isFinite(spec.sigma) && spec.sigma > 0 ? spec.sigma : 0;
  const scale = new Float64Array(h);
  const extra = new Float64Array(h);
  const sd = new Float64Array(h);
  let cum = 0;
  for (let k = 0; k < h; k++) {
    cum += psi[k] * psi[k];
    scale[k] = spec.scale ? Math.abs(spec.scale[k]) : 1;
    extra[k] = spec.extra ? Math.abs(spec.extra[k]) : 0;
    sd[k] = Math.sqrt(sigma * sigma * scale[k] * scale[k] * cum + extra[k] * extra[k]);
  }
  const steps: StepDistribution[] = [];
  for (let k = 0; k < h; k++) steps.push(new NormalStep(spec.mean[k], sd[k]));
  const mean = Float64Array.from(spec.mean);
  return {
    model: spec.model,
    mean,
    steps,
    intervalMethod: spec.intervalMethod ?? 'analytic',
    samplePaths(n: number, seed: number): Float64Array[] {
      const rng = new Rng(seed);
      const eps = new Float64Array(h);
      const paths: Float64Array[] = [];
      for (let p = 0; p < n; p++) {
        const z = rng.normal();
        for (let k = 0; k < h; k++) eps[k] = rng.normal();
        const path = new Float64Array(h);
        for (let k = 0; k < h; k++) {
          let s = 0;
          for (let j = 0; j <= k; j++) if (psi[j] !== 0) s += psi[j] * eps[k - j];
          path[k] = mean[k] + sigma * scale[k] * s + extra[k] * z;
        }
        paths.push(path);
      }
      return paths;
    },
  };
}

/**
 * The same forecast without its first `k` steps (k = 0 returns `pd` itself). Used when the
 * series ends in missing values: the model forecasts from its last observation and the steps
 * that fall inside the series' own span are dropped.
 */
export function dropLeading(pd: PredictiveDistribution, k: number): PredictiveDistribution {
  if (k <= 0) return pd;
  return {
    model: pd.model,
    mean: pd.mean.slice(k),
    steps: pd.steps.slice(k),
    intervalMethod: pd.intervalMethod,
    samplePaths: (n: number, seed: number) => pd.samplePaths(n, seed).map((p) => p.slice(k)),
  };
}
