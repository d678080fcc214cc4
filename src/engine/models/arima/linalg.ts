/** Small dense linear algebra for ARIMA bookkeeping (k ≤ ~10): no dependency, row-major. */

/**
 * Solve A X = B for X (A n×n, B n×k, both row-major; inputs are copied).
 * Returns null when A is singular to working precision, as R's `solve` errors.
 */
export function solve(A: ArrayLike<number>, B: ArrayLike<number>, n: number, k: number): Float64Array | null {
  const a = Float64Array.from(A);
  const b = Float64Array.from(B);
  let scale = 0;
  for (let i = 0; i < n * n; i++) scale = Math.max(scale, Math.abs(a[i]));
  if (!(scale > 0) || !Number.isFinite(scale)) return null;
  for (let c = 0; c < n; c++) {
    let piv = c;
    let best = Math.abs(a[c * n + c]);
    for (let r = c + 1; r < n; r++) {
      const v = Math.abs(a[r * n + c]);
      if (v > best) {
        best = v;
        piv = r;
      }
    }
    // R's solve uses LAPACK dgesv with an rcond check at ~1e-16 (reciprocal condition)
    if (!(best > scale * 1e-14)) return null;
    if (piv !== c) {
      for (let j = 0; j < n; j++) [a[c * n + j], a[piv * n + j]] = [a[piv * n + j], a[c * n + j]];
      for (let j = 0; j < k; j++) [b[c * k + j], b[piv * k + j]] = [b[piv * k + j], b[c * k + j]];
    }
    for (let r = c + 1; r < n; r++) {
      const f = a[r * n + c] / a[c * n + c];
      if (f === 0) continue;
      for (let j = c; j < n; j++) a[r * n + j] -= f * a[c * n + j];
      for (let j = 0; j < k; j++) b[r * k + j] -= f * b[c * k + j];
    }
  }
  for (let c = n - 1; c >= 0; c--)
    for (let j = 0; j < k; j++) {
      let s = b[c * k + j];
      for (let i = c + 1; i < n; i++) s -= a[c * n + i] * b[i * k + j];
      b[c * k + j] = s / a[c * n + c];
    }
  return b;
}

/** Ordinary least squares y ~ X (columns given), rows with any NaN dropped: coefficients and standard errors. */
export function leastSquares(y: ArrayLike<number>, cols: readonly ArrayLike<number>[]): { coef: Float64Array; se: Float64Array } | null {
  const k = cols.length;
  const XtX = new Float64Array(k * k);
  const Xty = new Float64Array(k);
  let nobs = 0;
  for (let t = 0; t < y.length; t++) {
    let ok = y[t] === y[t];
    for (let c = 0; c < k && ok; c++) ok = cols[c][t] === cols[c][t];
    if (!ok) continue;
    nobs++;
    for (let i = 0; i < k; i++) {
      Xty[i] += cols[i][t] * y[t];
      for (let j = 0; j < k; j++) XtX[i * k + j] += cols[i][t] * cols[j][t];
    }
  }
  if (nobs <= k) return null;
  const coef = solve(XtX, Xty, k, 1);
  if (!coef) return null;
  let rss = 0;
  for (let t = 0; t < y.length; t++) {
    let f = 0;
    let ok = y[t] === y[t];
    for (let c = 0; c < k && ok; c++) {
      ok = cols[c][t] === cols[c][t];
      f += coef[c] * cols[c][t];
    }
    if (ok) rss += (y[t] - f) ** 2;
  }
  const inv = solve(XtX, identity(k), k, k);
  const se = new Float64Array(k);
  for (let i = 0; i < k; i++) se[i] = inv ? Math.sqrt((rss / (nobs - k)) * inv[i * k + i]) : NaN;
  return { coef, se };
}

/** k×k identity, row-major. */
export function identity(k: number): Float64Array {
  const I = new Float64Array(k * k);
  for (let i = 0; i < k; i++) I[i * k + i] = 1;
  return I;
}
