/**
 * Forecasts of a fitted ARIMA (R's `predict.Arima` / `forecast.Arima`): means and
 * variances from the state-space form (Kalman prediction, equivalent to the ψ-weight
 * formulas), Gaussian marginals, and joint sample paths simulated from the same
 * state-space model with the engine's seeded `Rng`.
 */
import { NormalStep } from '../../distributions/normal-step';
import { Rng } from '../../rng';
import type { PredictiveDistribution, StepDistribution } from '../../types';
import type { ArimaFit } from './fit';
import { kalmanForecast } from './kalman-forecast';

/** Regression contribution (intercept/drift) at future step k (1-based). */
function xregAt(fit: ArimaFit, k: number): number {
  const narma = fit.coef.length - fit.xregNames.length;
  let v = 0;
  fit.xregNames.forEach((nm, j) => {
    v += fit.coef[narma + j] * (nm === 'drift' ? fit.n + k : 1);
  });
  return v;
}

/** Lower-triangular L with L Lᵀ ≈ S (S column-major, positive semi-definite; tiny/negative pivots zeroed). */
function psdCholesky(S: Float64Array, n: number): Float64Array {
  const L = new Float64Array(n * n);
  let scale = 0;
  for (let i = 0; i < n; i++) scale = Math.max(scale, Math.abs(S[i + n * i]));
  const tol = 1e-12 * scale;
  for (let j = 0; j < n; j++) {
    let s = S[j + n * j];
    for (let k = 0; k < j; k++) s -= L[j + n * k] ** 2;
    if (s <= tol) continue; // column stays zero
    const ljj = Math.sqrt(s);
    L[j + n * j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let t = S[i + n * j];
      for (let k = 0; k < j; k++) t -= L[i + n * k] * L[j + n * k];
      L[i + n * j] = t / ljj;
    }
  }
  return L;
}

/** Forecast `h` steps from a fitted ARIMA. `model` is the display name; `scale` undoes an input rescaling. */
export function arimaForecast(fit: ArimaFit, h: number, model: string, scale = 1): PredictiveDistribution {
  const mean = new Float64Array(h);
  const variance = new Float64Array(h);
  kalmanForecast(fit.ss, h, mean, variance);
  const sd = new Float64Array(h);
  for (let k = 0; k < h; k++) {
    mean[k] = (mean[k] + xregAt(fit, k + 1)) * scale;
    sd[k] = Math.sqrt(Math.max(0, variance[k] * fit.sigma2)) * scale;
  }
  const steps: StepDistribution[] = Array.from({ length: h }, (_, k) => new NormalStep(mean[k], sd[k]));
  return {
    model,
    mean,
    steps,
    intervalMethod: 'analytic',
    samplePaths: (n: number, seed: number) => simulatePaths(fit, h, n, seed, scale),
  };
}

/**
 * Joint paths: initial state drawn from N(a, σ²P) (the filter's end-of-sample
 * uncertainty), then x_{t+1} = T x_t + R e_{t+1}, e ~ N(0, σ²), y = Z x + xreg.
 * Their marginals match the analytic N(mean, sd²) exactly in distribution.
 */
function simulatePaths(fit: ArimaFit, h: number, npaths: number, seed: number, scale: number): Float64Array[] {
  const ss = fit.ss;
  const { r, rd, nd, p } = ss;
  const sigma = Math.sqrt(Math.max(0, fit.sigma2));
  const L = psdCholesky(ss.P, rd);
  const rng = new Rng(seed);
  const xr = Float64Array.from({ length: h }, (_, k) => xregAt(fit, k + 1));
  const x = new Float64Array(rd);
  const xn = new Float64Array(rd);
  const z = new Float64Array(rd);
  const paths: Float64Array[] = [];
  for (let s = 0; s < npaths; s++) {
    for (let i = 0; i < rd; i++) z[i] = rng.normal();
    for (let i = 0; i < rd; i++) {
      let v = ss.a[i];
      for (let k = 0; k <= i; k++) v += L[i + rd * k] * z[k] * sigma;
      x[i] = v;
    }
    const path = new Float64Array(h);
    for (let t = 0; t < h; t++) {
      const e = sigma * rng.normal();
      for (let i = 0; i < r; i++) {
        let v = i < r - 1 ? x[i + 1] : 0;
        if (i < p) v += ss.phi[i] * x[0];
        v += (i === 0 ? 1 : ss.theta[i - 1]) * e;
        xn[i] = v;
      }
      if (nd > 0) {
        let v = x[0];
        for (let k = 0; k < nd; k++) v += ss.delta[k] * x[r + k];
        xn[r] = v;
        for (let i = r + 1; i < rd; i++) xn[i] = x[i - 1];
      }
      x.set(xn);
      let y = x[0];
      for (let k = 0; k < nd; k++) y += ss.delta[k] * x[r + k];
      path[t] = (y + xr[t]) * scale;
    }
    paths.push(path);
  }
  return paths;
}
