/**
 * Least-squares fitting of a linear autoregression on a chosen set of lags (a "subset AR",
 * Box, Jenkins & Reinsel 2008 §7; fitted by conditional least squares as R's `ar.ols` /
 * `forecast::tslm(y ~ lags)` would, with an optional ridge penalty, Hoerl & Kennard 1970):
 *
 *   x_t = c + Σ_j φ_j x_{t − ℓ_j} + ε_t,
 *
 * rows t = max ℓ .. n−1 whose target is observed. Regressors are centred on the series mean so
 * the penalty never touches the intercept; the penalty is `ridge · rows · var(x)` on every lag
 * coefficient (all regressors are the same series shifted, so one scale fits all of them).
 */
import { solve } from '../arima/linalg';

/** A fitted subset autoregression (on the series it was given, i.e. after any transform). */
export interface ArFit {
  /** The lags, ascending. */
  readonly lags: readonly number[];
  /** Coefficient per lag. */
  readonly phi: Float64Array;
  /** Intercept c. */
  readonly intercept: number;
  /** Residual standard deviation, denominator rows − (lags + 1). */
  readonly sigma: number;
  /** Rows used (observed targets). */
  readonly rows: number;
  /** One-step fitted values, NaN for the first max-lag points and missing targets. */
  readonly fitted: Float64Array;
}

/**
 * Fit `x` (gaps already filled in `x`; `observed[t]` false marks a filled target, which is not
 * used as a row) on `lags` with ridge constant `ridge` (0 = plain OLS). Returns null when the
 * normal equations are singular.
 */
export function fitSubsetAr(x: Float64Array, observed: Uint8Array, lags: readonly number[], ridge: number): ArFit | null {
  const n = x.length;
  const k = lags.length;
  const maxLag = lags[k - 1];
  let mean = 0;
  for (let t = 0; t < n; t++) mean += x[t];
  mean /= n;
  let v = 0;
  for (let t = 0; t < n; t++) v += (x[t] - mean) * (x[t] - mean);
  v /= n;
  const xtx = new Float64Array(k * k);
  const xty = new Float64Array(k);
  const row = new Float64Array(k);
  let rows = 0;
  let sumY = 0;
  for (let t = maxLag; t < n; t++) {
    if (!observed[t]) continue;
    const yt = x[t] - mean;
    for (let j = 0; j < k; j++) row[j] = x[t - lags[j]] - mean;
    for (let a = 0; a < k; a++) {
      const ra = row[a];
      xty[a] += ra * yt;
      for (let b = a; b < k; b++) xtx[a * k + b] += ra * row[b];
    }
    sumY += yt;
    rows++;
  }
  if (rows < k + 2) return null;
  // centre the regressors on their own row means (the unpenalised intercept), by the usual
  // correction X'X − n·m·m', using the column sums
  const colSum = new Float64Array(k);
  for (let t = maxLag; t < n; t++) {
    if (!observed[t]) continue;
    for (let j = 0; j < k; j++) colSum[j] += x[t - lags[j]] - mean;
  }
  for (let a = 0; a < k; a++) {
    xty[a] -= (colSum[a] * sumY) / rows;
    for (let b = a; b < k; b++) {
      xtx[a * k + b] -= (colSum[a] * colSum[b]) / rows;
      xtx[b * k + a] = xtx[a * k + b];
    }
    xtx[a * k + a] += ridge * rows * v;
  }
  const phi = solve(xtx, xty, k, 1);
  if (!phi || !phi.every(Number.isFinite)) return null;
  let c = sumY / rows;
  for (let j = 0; j < k; j++) c -= (phi[j] * colSum[j]) / rows;
  // back to the uncentred series: x_t − m = c + Σ φ_j (x_{t−ℓ} − m)
  let intercept = mean + c;
  for (let j = 0; j < k; j++) intercept -= phi[j] * mean;
  const fitted = new Float64Array(n).fill(NaN);
  let ss = 0;
  for (let t = maxLag; t < n; t++) {
    let f = intercept;
    for (let j = 0; j < k; j++) f += phi[j] * x[t - lags[j]];
    fitted[t] = f;
    if (observed[t]) ss += (x[t] - f) * (x[t] - f);
  }
  const dof = Math.max(1, rows - k - 1);
  return { lags: [...lags], phi, intercept, sigma: Math.sqrt(ss / dof), rows, fitted };
}

/** Recursive (plug-in) forecasts of `fit` from the end of `x`, `h` steps. */
export function forecastSubsetAr(fit: ArFit, x: Float64Array, h: number): Float64Array {
  const n = x.length;
  const ext = new Float64Array(n + h);
  ext.set(x);
  const { lags, phi, intercept } = fit;
  for (let s = 0; s < h; s++) {
    const t = n + s;
    let f = intercept;
    for (let j = 0; j < lags.length; j++) f += phi[j] * ext[t - lags[j]];
    ext[t] = f;
  }
  return ext.slice(n);
}

/**
 * ψ weights of the AR's MA(∞) form, ψ_0 = 1, ψ_s = Σ_j φ_j ψ_{s − ℓ_j}: the h-step forecast
 * error variance is σ² Σ_{s<h} ψ_s² (Box, Jenkins & Reinsel 2008, §5.2).
 */
export function arPsi(fit: Pick<ArFit, 'lags' | 'phi'>, h: number): Float64Array {
  const psi = new Float64Array(h);
  psi[0] = 1;
  for (let s = 1; s < h; s++) {
    let v = 0;
    for (let j = 0; j < fit.lags.length; j++) {
      const l = fit.lags[j];
      if (l <= s) v += fit.phi[j] * psi[s - l];
    }
    psi[s] = v;
  }
  return psi;
}

/**
 * The growth per step of the AR's dominant mode: the spectral radius of its companion matrix,
 * estimated from the envelope of the ψ weights (the impulse response, `arPsi`) far out, where the
 * dominant mode rules: the largest |ψ| per stretch of max-lag steps, compared between the middle
 * and the end of a long run (rescaled as it goes, so neither overflow nor underflow). Above 1 the
 * recursion is explosive (a root of 1 − Σ φ_j z^ℓ_j inside the unit circle); 1 for a unit root;
 * below 1 stationary. Deterministic; O(lags × steps), about 10⁵ operations.
 */
export function dominantGrowth(fit: Pick<ArFit, 'lags' | 'phi'>, steps = Math.max(10_000, 40 * fit.lags[fit.lags.length - 1])): number {
  const { lags, phi } = fit;
  const p = lags[lags.length - 1];
  const size = p + 1;
  const ring = new Float64Array(size);
  ring[0] = 1;
  let logScale = 0;
  let envelope = 1;
  let logAtHalf = NaN;
  const half = Math.floor(steps / 2 / p) * p;
  for (let s = 1; s <= steps; s++) {
    let v = 0;
    for (let j = 0; j < lags.length; j++) if (lags[j] <= s) v += phi[j] * ring[(s - lags[j]) % size];
    ring[s % size] = v;
    envelope = Math.max(envelope, Math.abs(v));
    if (s % p === 0) {
      if (envelope === 0) return 0;
      const logEnvelope = Math.log(envelope) + logScale;
      if (s === half) logAtHalf = logEnvelope;
      if (s + p > steps) return Math.exp((logEnvelope - logAtHalf) / (s - half));
      // rescale the stretch the recursion still reads, and start the next stretch's envelope
      for (let k = 0; k < size; k++) ring[k] /= envelope;
      logScale += Math.log(envelope);
      envelope = 0;
    }
  }
  return 1;
}
