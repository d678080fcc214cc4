/**
 * Stationary covariance of the ARMA state vector in Harvey's state-space form
 * (the matrix R's `getQ0` returns, Gardner, Harvey & Phillips 1980), for unit
 * innovation variance.
 *
 * Why not a port of Gardner's AS 154: the state x_t[i] = Σ_{k≥i} (φ_{k+1} y_{t-1-k+i} + θ_k e_{t-k+i})
 * has covariances that follow from the process autocovariances γ and the ψ
 * weights. The first row is Cov(y_t, x_t[k]); the rest of the matrix then follows
 * from the Lyapunov identity P = T P Tᵀ + R Rᵀ by a backward recursion over rows.
 * That is O(r²) after an O(p³) solve for γ(0..p) — exact, and cheap enough to run
 * at every likelihood evaluation.
 */

/**
 * Fill `out` (r×r, column-major, r = max(p, q+1)) with the state covariance.
 * `phi` has length p, `theta` length r-1 (padded with zeros, as R pads it).
 * With `full` false only the first row/column is filled (all the fast filter needs).
 * Returns false if the AR part is (numerically) non-stationary.
 */
export function stationaryCov(phi: Float64Array, p: number, theta: Float64Array, r: number, out: Float64Array, full = true): boolean {
  const q = r - 1;
  // psi weights 0..r-1
  const psi = new Float64Array(r + 1);
  psi[0] = 1;
  for (let j = 1; j <= r; j++) {
    let s = j <= q ? theta[j - 1] : 0;
    for (let i = 1; i <= Math.min(j, p); i++) s += phi[i - 1] * psi[j - i];
    psi[j] = s;
  }
  // autocovariances gamma(0..r)
  const gamma = new Float64Array(r + 2);
  // θ_0 = 1, θ_j (j ≤ q), 0 beyond: a padded array avoids a closure call in the O(r²) loops
  const thv = new Float64Array(r + 2);
  thv[0] = 1;
  for (let j = 1; j <= q; j++) thv[j] = theta[j - 1];
  const th = (j: number): number => thv[j];
  if (p > 0) {
    const n = p + 1;
    const A = new Float64Array(n * n); // row-major
    const b = new Float64Array(n);
    for (let k = 0; k <= p; k++) {
      A[k * n + k] += 1;
      for (let i = 1; i <= p; i++) A[k * n + Math.abs(k - i)] -= phi[i - 1];
      let s = 0;
      for (let j = k; j <= q; j++) s += thv[j] * psi[j - k];
      b[k] = s;
    }
    if (!solveInPlace(A, b, n)) return false;
    for (let k = 0; k <= p && k <= r + 1; k++) gamma[k] = b[k];
    for (let k = p + 1; k <= r + 1; k++) {
      let s = 0;
      for (let i = 1; i <= p; i++) s += phi[i - 1] * gamma[k - i];
      for (let j = k; j <= q; j++) s += th(j) * psi[j - k];
      gamma[k] = s;
    }
    if (!(gamma[0] > 0) || !Number.isFinite(gamma[0])) return false;
  } else {
    for (let k = 0; k <= r + 1; k++) {
      let s = 0;
      for (let j = k; j <= q; j++) s += th(j) * th(j - k);
      gamma[k] = s;
    }
  }
  // first row: Cov(y_t, x_t[k]) = Σ_{m=k}^{r-1} φ_{m+1} γ(1+m-k) + θ_m ψ_{m-k}
  for (let k = 0; k < r; k++) {
    let s = 0;
    for (let m = k; m < r; m++) {
      if (m < p) s += phi[m] * gamma[1 + m - k];
      s += thv[m] * psi[m - k];
    }
    out[k * r] = s; // P[0][k] (row 0, column k)
    out[k] = s; // P[k][0]
  }
  if (!full) return true;
  // backward recursion over rows i = r-1 .. 1 (columns j >= i, then mirror)
  for (let i = r - 1; i >= 1; i--) {
    const pi = i < p ? phi[i] : 0;
    const ri = th(i);
    for (let j = i; j < r; j++) {
      const pj = j < p ? phi[j] : 0;
      let s = pi * pj * out[0] + ri * th(j);
      if (j + 1 < r) s += pi * out[(j + 1) * r]; // P[0][j+1]
      if (i + 1 < r) s += pj * out[i + 1]; // P[i+1][0]
      if (i + 1 < r && j + 1 < r) s += out[i + 1 + (j + 1) * r];
      out[i + j * r] = s;
      out[j + i * r] = s;
    }
  }
  return true;
}

/** Gaussian elimination with partial pivoting; A row-major n×n; solution left in b. */
function solveInPlace(A: Float64Array, b: Float64Array, n: number): boolean {
  for (let c = 0; c < n; c++) {
    let piv = c;
    let best = Math.abs(A[c * n + c]);
    for (let r = c + 1; r < n; r++) {
      const v = Math.abs(A[r * n + c]);
      if (v > best) {
        best = v;
        piv = r;
      }
    }
    if (!(best > 1e-300)) return false;
    if (piv !== c) {
      for (let k = 0; k < n; k++) {
        const t = A[c * n + k];
        A[c * n + k] = A[piv * n + k];
        A[piv * n + k] = t;
      }
      const t = b[c];
      b[c] = b[piv];
      b[piv] = t;
    }
    const d = A[c * n + c];
    for (let r = c + 1; r < n; r++) {
      const f = A[r * n + c] / d;
      if (f === 0) continue;
      for (let k = c; k < n; k++) A[r * n + k] -= f * A[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (let c = n - 1; c >= 0; c--) {
    let s = b[c];
    for (let k = c + 1; k < n; k++) s -= A[c * n + k] * b[k];
    b[c] = s / A[c * n + c];
  }
  return true;
}
