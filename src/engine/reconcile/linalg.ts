/**
 * Dense symmetric positive-definite algebra for reconciliation (matrices of a few hundred rows):
 * Cholesky factorisation and solves, row-major Float64Array, no dependency. Why our own: the
 * engine stays dependency-free and bit-reproducible, and these two routines are all MinT needs.
 */

/**
 * Lower-triangular L with A = L Lᵀ (A n×n symmetric, only its lower triangle is read), or null
 * when a pivot is not above `tol` times the largest diagonal entry (A not positive definite to
 * working precision).
 */
export function cholesky(A: Float64Array, n: number, tol = 1e-13): Float64Array | null {
  let maxDiag = 0;
  for (let i = 0; i < n; i++) maxDiag = Math.max(maxDiag, A[i * n + i]);
  if (!(maxDiag > 0) || !Number.isFinite(maxDiag)) return null;
  const floor = tol * maxDiag;
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let d = A[rj + j];
    for (let k = 0; k < j; k++) d -= L[rj + k] * L[rj + k];
    if (!(d > floor)) return null;
    const ljj = Math.sqrt(d);
    L[rj + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let s = A[ri + j];
      for (let k = 0; k < j; k++) s -= L[ri + k] * L[rj + k];
      L[ri + j] = s / ljj;
    }
  }
  return L;
}

/** Solve (L Lᵀ) X = B in place for B n×k (row-major), L from `cholesky`. */
export function choleskySolve(L: Float64Array, n: number, B: Float64Array, k: number): Float64Array {
  // forward: L Z = B
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    const bi = i * k;
    for (let p = 0; p < i; p++) {
      const l = L[ri + p];
      if (l === 0) continue;
      const bp = p * k;
      for (let c = 0; c < k; c++) B[bi + c] -= l * B[bp + c];
    }
    const d = L[ri + i];
    for (let c = 0; c < k; c++) B[bi + c] /= d;
  }
  // backward: Lᵀ X = Z
  for (let i = n - 1; i >= 0; i--) {
    const bi = i * k;
    for (let p = i + 1; p < n; p++) {
      const l = L[p * n + i];
      if (l === 0) continue;
      const bp = p * k;
      for (let c = 0; c < k; c++) B[bi + c] -= l * B[bp + c];
    }
    const d = L[i * n + i];
    for (let c = 0; c < k; c++) B[bi + c] /= d;
  }
  return B;
}

/**
 * Cholesky of A, retried with a ridge of `ridge` × (largest diagonal) added to the diagonal when
 * A is singular to working precision. Returns the factor and the ridge used (0 when none was).
 */
export function choleskyWithRidge(A: Float64Array, n: number, ridge: number): { L: Float64Array; ridge: number } | null {
  const L = cholesky(A, n);
  if (L) return { L, ridge: 0 };
  let maxDiag = 0;
  for (let i = 0; i < n; i++) maxDiag = Math.max(maxDiag, A[i * n + i]);
  if (!(maxDiag > 0)) return null;
  const shifted = Float64Array.from(A);
  for (let i = 0; i < n; i++) shifted[i * n + i] += ridge * maxDiag;
  const retry = cholesky(shifted, n, 0);
  return retry ? { L: retry, ridge } : null;
}
