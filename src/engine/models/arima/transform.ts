/**
 * ARIMA parameter bookkeeping, as R's `stats::arima` (src/library/stats/src/arima.c):
 * the partial-autocorrelation transform that keeps AR parts stationary
 * (Jones 1980; Monahan 1984), the expansion of multiplicative seasonal
 * polynomials, and the inversion of non-invertible MA roots.
 *
 * Coefficient vectors are laid out as R does: [ar(p), ma(q), sar(P), sma(Q), xreg...].
 */
import { polyRoots } from '../../math/polyroot';

/** ARMA orders of a (seasonal) model: p, q, P, Q and the period m. */
export interface ArmaSpec {
  readonly p: number;
  readonly q: number;
  readonly P: number;
  readonly Q: number;
  readonly m: number;
}

/** tanh then Durbin–Levinson: unconstrained → stationary AR coefficients (R's `partrans`). */
function partrans(raw: Float64Array, off: number, n: number, out: Float64Array): void {
  const work = new Float64Array(n);
  for (let j = 0; j < n; j++) work[j] = out[off + j] = Math.tanh(raw[off + j]);
  for (let j = 1; j < n; j++) {
    const a = out[off + j];
    for (let k = 0; k < j; k++) work[k] -= a * out[off + j - k - 1];
    for (let k = 0; k < j; k++) out[off + k] = work[k];
  }
}

/** Inverse of `partrans` (R's `invpartrans`); AR must be stationary. */
function invpartrans(phi: Float64Array, off: number, n: number, out: Float64Array): void {
  const work = new Float64Array(n);
  const cur = new Float64Array(n);
  for (let j = 0; j < n; j++) work[j] = cur[j] = phi[off + j];
  for (let j = n - 1; j > 0; j--) {
    const a = cur[j];
    for (let k = 0; k < j; k++) work[k] = (cur[k] + a * cur[j - k - 1]) / (1 - a * a);
    for (let k = 0; k < j; k++) cur[k] = work[k];
  }
  for (let j = 0; j < n; j++) out[off + j] = Math.atanh(Math.max(-1 + 1e-16, Math.min(1 - 1e-16, cur[j])));
}

/** Map optimiser parameters to coefficients: AR blocks through `partrans` (R's `ARIMA_undoPars`). */
export function undoPars(par: Float64Array, s: ArmaSpec): Float64Array {
  const out = Float64Array.from(par);
  if (s.p > 0) partrans(par, 0, s.p, out);
  if (s.P > 0) partrans(par, s.p + s.q, s.P, out);
  return out;
}

/** Coefficients to optimiser parameters (R's `ARIMA_Invtrans`). */
export function invTrans(coef: Float64Array, s: ArmaSpec): Float64Array {
  const out = Float64Array.from(coef);
  if (s.p > 0) invpartrans(coef, 0, s.p, out);
  if (s.P > 0) invpartrans(coef, s.p + s.q, s.P, out);
  return out;
}

/**
 * Expand multiplicative seasonal polynomials into plain phi (length p + mP) and
 * theta (length q + mQ), with R's sign conventions: y_t = Σ phi_i y_{t-i} + e_t + Σ theta_j e_{t-j}.
 * Writes into the given buffers (no allocation in the likelihood loop).
 */
export function expandArma(coef: ArrayLike<number>, s: ArmaSpec, phi: Float64Array, theta: Float64Array): void {
  const { p, q, P, Q, m } = s;
  phi.fill(0);
  theta.fill(0);
  for (let i = 0; i < p; i++) phi[i] = coef[i];
  for (let i = 0; i < q; i++) theta[i] = coef[p + i];
  for (let j = 0; j < P; j++) {
    const sar = coef[p + q + j];
    phi[(j + 1) * m - 1] += sar;
    for (let i = 0; i < p; i++) phi[(j + 1) * m + i] -= coef[i] * sar;
  }
  for (let j = 0; j < Q; j++) {
    const sma = coef[p + q + P + j];
    theta[(j + 1) * m - 1] += sma;
    for (let i = 0; i < q; i++) theta[(j + 1) * m + i] += coef[p + i] * sma;
  }
}

/** Smallest root modulus of 1 + sign·(c_1 z + ... + c_n z^n), Infinity when all c are ~0. */
export function minRoot(c: ArrayLike<number>, off: number, n: number, sign: number): number {
  let last = -1;
  for (let i = 0; i < n; i++) if (Math.abs(c[off + i]) > 1e-8) last = i;
  if (last < 0) return Infinity;
  const poly = new Float64Array(last + 2);
  poly[0] = 1;
  for (let i = 0; i <= last; i++) poly[i + 1] = sign * c[off + i];
  const { re, im } = polyRoots(poly);
  let min = Infinity;
  for (let k = 0; k < re.length; k++) min = Math.min(min, Math.hypot(re[k], im[k]));
  return min;
}

/** True when 1 - Σ ar_i z^i has all roots outside the unit circle (R's `arCheck`). */
export function arStationary(c: ArrayLike<number>, off: number, n: number): boolean {
  let last = -1;
  for (let i = 0; i < n; i++) if (c[off + i] !== 0) last = i;
  if (last < 0) return true;
  return minRoot(c, off, last + 1, -1) > 1;
}

/** Reflect MA roots inside the unit circle to make 1 + Σ ma_i z^i invertible (R's `maInvert`), in place. */
export function maInvert(c: Float64Array, off: number, n: number): void {
  let q0 = -1;
  for (let i = 0; i < n; i++) if (c[off + i] !== 0) q0 = i;
  if (q0 < 0) return;
  const deg = q0 + 1;
  const poly = new Float64Array(deg + 1);
  poly[0] = 1;
  for (let i = 0; i < deg; i++) poly[i + 1] = c[off + i];
  const { re, im } = polyRoots(poly);
  let any = false;
  for (let k = 0; k < re.length; k++) if (Math.hypot(re[k], im[k]) < 1) any = true;
  if (!any) return;
  if (deg === 1) {
    c[off] = 1 / c[off];
    return;
  }
  for (let k = 0; k < re.length; k++) {
    const m2 = re[k] * re[k] + im[k] * im[k];
    if (m2 < 1) {
      re[k] = re[k] / m2;
      im[k] = -im[k] / m2;
    }
  }
  // rebuild Π (1 - z / r_k) with complex arithmetic
  const xr = new Float64Array(deg + 1);
  const xi = new Float64Array(deg + 1);
  xr[0] = 1;
  for (let k = 0; k < deg; k++) {
    const m2 = re[k] * re[k] + im[k] * im[k];
    const ir = re[k] / m2; // 1/r = conj(r)/|r|^2
    const ii = -im[k] / m2;
    for (let j = k + 1; j >= 1; j--) {
      xr[j] -= xr[j - 1] * ir - xi[j - 1] * ii;
      xi[j] -= xr[j - 1] * ii + xi[j - 1] * ir;
    }
  }
  for (let i = 0; i < deg; i++) c[off + i] = xr[i + 1];
}
