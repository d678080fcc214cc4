/**
 * Small dense least squares for the ETS initial-state regression (at most 4 columns): Householder
 * QR on a copy, so rank-deficient columns do not blow up (they get a zero coefficient, as R's
 * `lm` drops aliased columns).
 */

/** Solve min ||X b - y|| for row-major `X` (n × p). Returns b (length p). */
export function leastSquares(X: ArrayLike<number>, y: ArrayLike<number>, n: number, p: number): Float64Array {
  const A = Float64Array.from(X);
  const r = Float64Array.from(y);
  const diag = new Float64Array(p);
  const ok = new Uint8Array(p);
  for (let k = 0; k < p; k++) {
    let norm = 0;
    for (let i = k; i < n; i++) norm += A[i * p + k] ** 2;
    norm = Math.sqrt(norm);
    let colScale = 0;
    for (let i = 0; i < n; i++) colScale = Math.max(colScale, Math.abs(X[i * p + k]));
    if (norm <= 1e-9 * colScale || norm === 0 || k >= n) continue;
    ok[k] = 1;
    const alpha = A[k * p + k] > 0 ? -norm : norm;
    // v = x - alpha e1, stored in place
    A[k * p + k] -= alpha;
    let vnorm2 = 0;
    for (let i = k; i < n; i++) vnorm2 += A[i * p + k] ** 2;
    for (let j = k + 1; j < p; j++) {
      let d = 0;
      for (let i = k; i < n; i++) d += A[i * p + k] * A[i * p + j];
      const f = (2 * d) / vnorm2;
      for (let i = k; i < n; i++) A[i * p + j] -= f * A[i * p + k];
    }
    let d = 0;
    for (let i = k; i < n; i++) d += A[i * p + k] * r[i];
    const f = (2 * d) / vnorm2;
    for (let i = k; i < n; i++) r[i] -= f * A[i * p + k];
    diag[k] = alpha;
  }
  const b = new Float64Array(p);
  for (let k = p - 1; k >= 0; k--) {
    if (!ok[k]) continue;
    let s = r[k];
    for (let j = k + 1; j < p; j++) s -= A[k * p + j] * b[j];
    b[k] = s / diag[k];
  }
  return b;
}
