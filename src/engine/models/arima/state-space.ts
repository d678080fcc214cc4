/**
 * ARIMA in state-space form and its Kalman filter, a port of R's `makeARIMA`,
 * `ARIMA_Like` and `KalmanFore` (src/library/stats/src/arima.c; Gardner, Harvey &
 * Phillips 1980; Durbin & Koopman 2001 §3.4).
 *
 * State: r = max(p, q+1) ARMA states (Harvey's form) followed by nd states that
 * carry the differencing polynomial Δ (diffuse prior, variance kappa = 1e6).
 * Observations whose prediction variance is ≥ 1e4 (the diffuse start) are left
 * out of the likelihood, exactly as R does. A NaN observation skips the update.
 *
 * All buffers are allocated once per model; the filter loop allocates nothing.
 */
import { stationaryCov } from './stationary-cov';

/** R's default prior variance for the diffuse (differencing) states. */
export const KAPPA = 1e6;

/** A state-space ARIMA with its filter state (a, P) and work buffers. */
export class ArimaSS {
  /** ARMA state dimension max(p, q+1). */
  readonly r: number;
  /** Total state dimension r + nd. */
  readonly rd: number;
  readonly p: number;
  readonly nd: number;
  /** AR coefficients (length p). */
  readonly phi: Float64Array;
  /** MA coefficients padded to r-1. */
  readonly theta: Float64Array;
  /** Differencing coefficients Δ (length nd): y_t = Σ Δ_i y_{t-i} + w_t. */
  readonly delta: Float64Array;
  /** Filtered state and covariance (column-major rd×rd). */
  readonly a: Float64Array;
  readonly P: Float64Array;
  /** Predicted covariance / initial covariance. */
  readonly Pnew: Float64Array;
  private readonly anew: Float64Array;
  private readonly M: Float64Array;
  private readonly mm: Float64Array;
  private readonly q0: Float64Array;
  private readonly nz: Int32Array;

  constructor(p: number, q: number, delta: ArrayLike<number>) {
    this.p = p;
    this.r = Math.max(p, q + 1);
    this.nd = delta.length;
    this.rd = this.r + this.nd;
    this.phi = new Float64Array(p);
    this.theta = new Float64Array(this.r - 1);
    this.delta = Float64Array.from(delta);
    this.a = new Float64Array(this.rd);
    this.anew = new Float64Array(this.rd);
    this.M = new Float64Array(this.rd);
    this.P = new Float64Array(this.rd * this.rd);
    this.Pnew = new Float64Array(this.rd * this.rd);
    this.mm = new Float64Array(this.rd * this.rd);
    this.q0 = new Float64Array(this.r * this.r);
    this.nz = new Int32Array(Math.max(1, p));
  }

  /**
   * Set coefficients (phi length p, theta length ≥ q, extra entries ignored) and reset
   * the filter to the stationary/diffuse prior. Returns false if the AR part is not stationary.
   */
  reset(phi: ArrayLike<number>, theta: ArrayLike<number>): boolean {
    const { r, rd, p } = this;
    for (let i = 0; i < p; i++) this.phi[i] = phi[i];
    for (let i = 0; i < r - 1; i++) this.theta[i] = i < theta.length ? theta[i] : 0;
    this.a.fill(0);
    this.Pnew.fill(0);
    if (r > 1) {
      if (!stationaryCov(this.phi, p, this.theta, r, this.q0)) return false;
      for (let j = 0; j < r; j++) for (let i = 0; i < r; i++) this.Pnew[i + rd * j] = this.q0[i + r * j];
    } else {
      const v = p > 0 ? 1 / (1 - this.phi[0] * this.phi[0]) : 1;
      if (!(v > 0) || !Number.isFinite(v)) return false;
      this.Pnew[0] = v;
    }
    for (let i = r; i < rd; i++) this.Pnew[i + rd * i] = KAPPA;
    return true;
  }

  /**
   * Exact likelihood of a stationary ARMA (no differencing states, no missing values)
   * by the Chandrasekhar recursions (Morf, Sidhu & Kailath 1974; Mélard 1984): started
   * from the stationary covariance, P_{t+1} - P_t has rank one, so each step costs O(r)
   * instead of the Kalman filter's O(r²). Same innovations and gains as `filter`, hence
   * the same likelihood. Returns false (R's xmax objective) if the AR part is non-stationary.
   */
  filterArma(y: ArrayLike<number>, phiIn: ArrayLike<number>, thetaIn: ArrayLike<number>, out: Float64Array): boolean {
    const { r, p, phi, theta, q0 } = this;
    for (let i = 0; i < p; i++) phi[i] = phiIn[i];
    for (let i = 0; i < r - 1; i++) theta[i] = i < thetaIn.length ? thetaIn[i] : 0;
    let F: number;
    const G = this.anew;
    const Y = this.M;
    const a = this.a;
    const TY = this.mm;
    if (r > 1) {
      if (!stationaryCov(phi, p, theta, r, q0, false)) return false;
      F = q0[0];
      for (let i = 0; i < r; i++) G[i] = (i < p ? phi[i] * q0[0] : 0) + (i < r - 1 ? q0[i + 1] : 0);
    } else {
      F = p > 0 ? 1 / (1 - phi[0] * phi[0]) : 1;
      G[0] = p > 0 ? phi[0] * F : 0;
    }
    if (!(F > 0) || !Number.isFinite(F)) return false;
    for (let i = 0; i < r; i++) {
      Y[i] = G[i];
      a[i] = 0;
    }
    let M = -1 / F;
    let ssq = 0;
    let sumlog = 0;
    let nu = 0;
    const n = y.length;
    let frozen = false;
    // seasonal AR polynomials are sparse: visit only the non-zero lags
    const nz = this.nz;
    let nnz = 0;
    for (let i = 0; i < p; i++) if (phi[i] !== 0) nz[nnz++] = i;
    for (let t = 0; t < n; t++) {
      const v = y[t] - a[0];
      if (F < 1e4) {
        nu++;
        ssq += (v * v) / F;
        sumlog += Math.log(F);
      }
      const vf = v / F;
      const a0 = a[0];
      if (frozen) {
        for (let i = 0; i < r - 1; i++) a[i] = a[i + 1] + G[i] * vf;
        a[r - 1] = G[r - 1] * vf;
        for (let k = 0; k < nnz; k++) a[nz[k]] += phi[nz[k]] * a0;
        continue;
      }
      // F_{t+1} = F + M u², G_{t+1} = G + M u TY, Y_{t+1} = TY - G_{t+1} u / F_{t+1},
      // M_{t+1} = M + M² u² / F_t (Harvey 1989 §3.3.4); TY = T Y.
      const u = Y[0];
      for (let i = 0; i < r - 1; i++) {
        a[i] = a[i + 1] + G[i] * vf;
        TY[i] = Y[i + 1];
      }
      a[r - 1] = G[r - 1] * vf;
      TY[r - 1] = 0;
      for (let k = 0; k < nnz; k++) {
        const i = nz[k];
        a[i] += phi[i] * a0;
        TY[i] += phi[i] * u;
      }
      const Fn = F + M * u * u;
      const mu = M * u;
      const gu = u / Fn;
      let ymax = 0;
      for (let i = 0; i < r; i++) {
        const g = G[i] + mu * TY[i];
        G[i] = g;
        const yi = TY[i] - g * gu;
        Y[i] = yi;
        const ay = yi < 0 ? -yi : yi;
        if (ay > ymax) ymax = ay;
      }
      M += (mu * mu) / F;
      F = Fn;
      if (!(F > 0)) return false;
      // Why freeze: once the rank-one increment is below rounding, F and G are constant.
      if (ymax * ymax * (M < 0 ? -M : M) < 1e-16 * F) frozen = true;
    }
    out[0] = ssq;
    out[1] = sumlog;
    out[2] = nu;
    return true;
  }

  /**
   * Run the filter over y (R's `ARIMA_Like` with up = 0). Returns [ssq, sumlog, nu] in `out`.
   * If `resid` is given, standardised innovations are written to it (NaN where y is NaN).
   */
  filter(y: ArrayLike<number>, out: Float64Array, resid?: Float64Array): void {
    const { r, rd, p, nd, phi, theta, delta, a, P, Pnew, anew, M, mm } = this;
    const q = r - 1;
    let ssq = 0;
    let sumlog = 0;
    let nu = 0;
    const n = y.length;
    let steady = false;
    for (let l = 0; l < n; l++) {
      for (let i = 0; i < r; i++) {
        let tmp = i < r - 1 ? a[i + 1] : 0;
        if (i < p) tmp += phi[i] * a[0];
        anew[i] = tmp;
      }
      if (nd > 0) {
        for (let i = r + 1; i < rd; i++) anew[i] = a[i - 1];
        let tmp = a[0];
        for (let i = 0; i < nd; i++) tmp += delta[i] * a[r + i];
        anew[r] = tmp;
      }
      if (l > 0 && !steady) {
        if (nd === 0) {
          for (let i = 0; i < r; i++) {
            const vi = i === 0 ? 1 : theta[i - 1];
            const pi = i < p ? phi[i] : 0;
            for (let j = 0; j < r; j++) {
              let tmp = (j === 0 ? 1 : theta[j - 1]) * vi;
              const pj = j < p ? phi[j] : 0;
              tmp += pi * pj * P[0];
              if (i < r - 1 && j < r - 1) tmp += P[i + 1 + r * (j + 1)];
              if (j < r - 1) tmp += pi * P[j + 1];
              if (i < r - 1) tmp += pj * P[i + 1];
              Pnew[i + r * j] = tmp;
            }
          }
        } else {
          // mm = T P
          for (let j = 0; j < rd; j++) {
            const pj0 = P[rd * j];
            for (let i = 0; i < r; i++) {
              let tmp = i < p ? phi[i] * pj0 : 0;
              if (i < r - 1) tmp += P[i + 1 + rd * j];
              mm[i + rd * j] = tmp;
            }
            let tmp = pj0;
            for (let k = 0; k < nd; k++) if (delta[k] !== 0) tmp += delta[k] * P[r + k + rd * j];
            mm[r + rd * j] = tmp;
            for (let i = 1; i < nd; i++) mm[r + i + rd * j] = P[r + i - 1 + rd * j];
          }
          // Pnew = mm Tᵀ
          for (let i = 0; i < r; i++) {
            const pi = i < p ? phi[i] : 0;
            for (let j = 0; j < rd; j++) {
              let tmp = pi * mm[j];
              if (i < r - 1) tmp += mm[rd * (i + 1) + j];
              Pnew[j + rd * i] = tmp;
            }
          }
          for (let j = 0; j < rd; j++) {
            let tmp = mm[j];
            for (let k = 0; k < nd; k++) if (delta[k] !== 0) tmp += delta[k] * mm[rd * (r + k) + j];
            Pnew[j + rd * r] = tmp;
          }
          for (let i = 1; i < nd; i++) for (let j = 0; j < rd; j++) Pnew[j + rd * (r + i)] = mm[rd * (r + i - 1) + j];
          for (let i = 0; i <= q; i++) {
            const vi = i === 0 ? 1 : theta[i - 1];
            for (let j = 0; j <= q; j++) Pnew[i + rd * j] += vi * (j === 0 ? 1 : theta[j - 1]);
          }
        }
      }
      const yl = y[l];
      if (yl === yl) {
        let resid0 = yl - anew[0];
        for (let i = 0; i < nd; i++) resid0 -= delta[i] * anew[r + i];
        for (let i = 0; i < rd; i++) {
          let tmp = Pnew[i];
          for (let j = 0; j < nd; j++) tmp += Pnew[i + rd * (r + j)] * delta[j];
          M[i] = tmp;
        }
        let gain = M[0];
        for (let j = 0; j < nd; j++) gain += delta[j] * M[r + j];
        if (gain < 1e4) {
          nu++;
          ssq += (resid0 * resid0) / gain;
          sumlog += Math.log(gain);
        }
        if (resid) resid[l] = resid0 / Math.sqrt(gain);
        const rg = resid0 / gain;
        for (let i = 0; i < rd; i++) a[i] = anew[i] + M[i] * rg;
        if (!steady) {
          let change = 0;
          for (let j = 0; j < rd; j++) {
            const mj = M[j] / gain;
            for (let i = 0; i < rd; i++) {
              const v = Pnew[i + rd * j] - M[i] * mj;
              const dv = Math.abs(v - P[i + rd * j]);
              if (dv > change) change = dv;
              P[i + rd * j] = v;
            }
          }
          // Why: once the filtered covariance stops changing, the recursion is
          // time-invariant; skipping it changes the likelihood by < 1e-12 relative.
          if (l > rd && change < 1e-13 * gain) steady = true;
        }
      } else {
        for (let i = 0; i < rd; i++) a[i] = anew[i];
        for (let i = 0; i < rd * rd; i++) P[i] = Pnew[i];
        steady = false;
        if (resid) resid[l] = NaN;
      }
    }
    out[0] = ssq;
    out[1] = sumlog;
    out[2] = nu;
  }
}
