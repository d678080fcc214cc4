/**
 * forecast's `checkarima`: a fit is rejected when a coefficient variance from the
 * numerical Hessian is undefined (singular Hessian or a negative diagonal of
 * Aᵀ(H·n)⁻¹A, where A is the Jacobian of the AR transform), as R's `stats::arima`
 * computes `var.coef`.
 */
import { identity, solve } from './linalg';
import { type ArmaSpec, undoPars } from './transform';

/** Jacobian of `undoPars` at the transformed coefficients, restricted to free parameters (R's `ARIMA_Gradtrans`). */
export function gradTrans(coef: Float64Array, o: ArmaSpec, free: number[]): Float64Array {
  const n = coef.length;
  const eps = 1e-3;
  const A = identity(n); // A[i*n + j] = d out_j / d raw_i
  const base = undoPars(coef, o);
  const blocks: [number, number][] = [
    [0, o.p],
    [o.p + o.q, o.P],
  ];
  for (const [off, len] of blocks) {
    for (let i = off; i < off + len; i++) {
      const c2 = Float64Array.from(coef);
      c2[i] += eps;
      const u = undoPars(c2, o);
      for (let j = off; j < off + len; j++) A[i * n + j] = (u[j] - base[j]) / eps;
    }
  }
  const k = free.length;
  const Af = new Float64Array(k * k);
  for (let a = 0; a < k; a++) for (let b = 0; b < k; b++) Af[a * k + b] = A[free[a] * n + free[b]];
  return Af;
}

/** diag(Aᵀ (H·n)⁻¹ A) all non-negative and the solve succeeds (else forecast's checkarima fails the model). */
export function varianceDefined(H: Float64Array, A: Float64Array | null, nUsed: number): boolean {
  const k = Math.round(Math.sqrt(H.length));
  if (k === 0) return true;
  const Hn = H.map((v) => v * nUsed);
  const Am = A ?? identity(k);
  const S = solve(Hn, Am, k, k); // (H n)⁻¹ A
  if (!S) return false;
  for (let j = 0; j < k; j++) {
    let v = 0;
    for (let i = 0; i < k; i++) v += Am[i * k + j] * S[i * k + j];
    if (!(v >= 0)) return false;
  }
  return true;
}
