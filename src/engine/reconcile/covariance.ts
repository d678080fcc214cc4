/**
 * The covariance MinT needs: of the base forecasts' in-sample one-step errors, shrunk towards
 * its diagonal with the Schäfer–Strimmer intensity (Schäfer & Strimmer 2005, "A shrinkage
 * approach to large-scale covariance matrix estimation", target D of their Table 2), as
 * Wickramasuriya, Athanasopoulos & Hyndman (2019, JASA 114(526), "Optimal forecast reconciliation
 * for hierarchical and grouped time series through trace minimization") use it and R's
 * hts::MinT (`shrink.estim`) computes it: Ŵ = Σ e_t e_tᵀ / T (uncentred), λ̂ = Σ_{i≠j} Var(r̂_ij) /
 * Σ_{i≠j} r̂_ij², W = λ̂ diag(Ŵ) + (1 − λ̂) Ŵ, λ̂ clamped to [0, 1].
 */

/** The shrunk covariance and how it was obtained. */
export interface ShrunkCovariance {
  /** n×n, row-major, symmetric. */
  readonly W: Float64Array;
  /** The shrinkage intensity λ̂ in [0, 1]. */
  readonly lambda: number;
  /** Time points used (those where every series has a residual). */
  readonly observations: number;
}

/**
 * Rows (time points) where every series has a finite residual, as a T×n row-major matrix.
 * `residuals[i]` is series i's residuals on a common time grid (NaN = none at that time).
 */
export function completeRows(residuals: readonly ArrayLike<number>[]): { X: Float64Array; T: number } {
  const n = residuals.length;
  const rows = completeRowIndices(residuals);
  const X = new Float64Array(rows.length * n);
  rows.forEach((t, r) => {
    for (let i = 0; i < n; i++) X[r * n + i] = residuals[i][t];
  });
  return { X, T: rows.length };
}

/** Indices of the rows (time points) where every series has a finite value. */
export function completeRowIndices(residuals: readonly ArrayLike<number>[]): number[] {
  const len = residuals.length === 0 ? 0 : Math.min(...residuals.map((r) => r.length));
  const rows: number[] = [];
  for (let t = 0; t < len; t++) if (residuals.every((r) => Number.isFinite(r[t]))) rows.push(t);
  return rows;
}

/**
 * Schäfer–Strimmer shrinkage covariance of the residual matrix X (T×n, row-major), see the file
 * comment. Null when T < 2 (no variance of the correlations can be estimated). A series with
 * zero variance gets correlation 0 with every other (as hierarchicalforecast protects it).
 */
export function shrinkCovariance(X: Float64Array, T: number, n: number): ShrunkCovariance | null {
  if (T < 2) return null;
  const cov = new Float64Array(n * n);
  for (let t = 0; t < T; t++) {
    const row = t * n;
    for (let i = 0; i < n; i++) {
      const xi = X[row + i];
      if (xi === 0) continue;
      const ci = i * n;
      for (let j = 0; j <= i; j++) cov[ci + j] += xi * X[row + j];
    }
  }
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) cov[j * n + i] = cov[i * n + j] /= T;
  const sd = Float64Array.from({ length: n }, (_, i) => Math.sqrt(cov[i * n + i]));
  // standardised residuals, one contiguous run per series
  const xs = new Float64Array(n * T);
  for (let i = 0; i < n; i++) for (let t = 0; t < T; t++) xs[i * T + t] = sd[i] > 0 ? X[t * n + i] / sd[i] : 0;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) {
      // Var r̂_ij from Σ_t (xs_i xs_j)² and Σ_t xs_i xs_j
      let sq = 0;
      let pr = 0;
      for (let t = 0; t < T; t++) {
        const p = xs[i * T + t] * xs[j * T + t];
        sq += p * p;
        pr += p;
      }
      const v = (sq - (pr * pr) / T) / (T * (T - 1));
      const r = sd[i] > 0 && sd[j] > 0 ? cov[i * n + j] / (sd[i] * sd[j]) : 0;
      num += v;
      den += r * r;
    }
  }
  const lambda = den > 0 ? Math.min(1, Math.max(0, num / den)) : 1;
  const W = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) W[i * n + j] = i === j ? cov[i * n + j] : (1 - lambda) * cov[i * n + j];
  }
  return { W, lambda, observations: T };
}
