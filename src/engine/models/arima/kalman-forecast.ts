/**
 * h-step forecasts from the end-of-sample filtered state of an `ArimaSS`
 * (R's `KalmanFore`, stats/src/arima.c): a ← T a, P ← T P Tᵀ + R Rᵀ, with
 * mean Z a and variance Z P Zᵀ (unit innovation variance; the caller scales by σ²).
 * Equivalent to the ψ-weight formulas, and it handles the differencing states.
 */
import type { ArimaSS } from './state-space';

/** Write the h forecast means and unit-variance prediction variances. */
export function kalmanForecast(ss: ArimaSS, h: number, mean: Float64Array, variance: Float64Array): void {
  const { r, rd, p, nd, phi, theta, delta } = ss;
  const a = Float64Array.from(ss.a);
  const P = Float64Array.from(ss.P);
  const anew = new Float64Array(rd);
  const mm = new Float64Array(rd * rd);
  const Pn = new Float64Array(rd * rd);
  // T as a dense matrix (forecasting runs once; clarity over speed)
  const T = new Float64Array(rd * rd);
  for (let i = 0; i < p; i++) T[i] = phi[i];
  for (let i = 1; i < r; i++) T[i - 1 + rd * i] = 1;
  if (nd > 0) {
    T[r] = 1;
    for (let k = 0; k < nd; k++) T[r + rd * (r + k)] = delta[k];
    for (let i = 1; i < nd; i++) T[r + i + rd * (r + i - 1)] = 1;
  }
  const R = new Float64Array(rd);
  R[0] = 1;
  for (let i = 1; i < r; i++) R[i] = theta[i - 1];
  for (let l = 0; l < h; l++) {
    let fc = 0;
    for (let i = 0; i < rd; i++) {
      let s = 0;
      for (let k = 0; k < rd; k++) s += T[i + rd * k] * a[k];
      anew[i] = s;
    }
    a.set(anew);
    fc = a[0];
    for (let k = 0; k < nd; k++) fc += delta[k] * a[r + k];
    mean[l] = fc;
    for (let i = 0; i < rd; i++)
      for (let j = 0; j < rd; j++) {
        let s = 0;
        for (let k = 0; k < rd; k++) s += T[i + rd * k] * P[k + rd * j];
        mm[i + rd * j] = s;
      }
    for (let i = 0; i < rd; i++)
      for (let j = 0; j < rd; j++) {
        let s = R[i] * R[j];
        for (let k = 0; k < rd; k++) s += mm[i + rd * k] * T[j + rd * k];
        Pn[i + rd * j] = s;
      }
    P.set(Pn);
    // Z = (1, 0.., Δ)
    let v = 0;
    for (let i = 0; i < rd; i++) {
      const zi = i === 0 ? 1 : i >= r ? delta[i - r] : 0;
      if (zi === 0) continue;
      for (let j = 0; j < rd; j++) {
        const zj = j === 0 ? 1 : j >= r ? delta[j - r] : 0;
        if (zj !== 0) v += zi * P[i + rd * j] * zj;
      }
    }
    variance[l] = v;
  }
}
