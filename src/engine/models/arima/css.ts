/**
 * Differencing helpers and the conditional-sum-of-squares objective of R's
 * `ARIMA_CSS` (stats/src/arima.c): residuals of the expanded ARMA recursion on
 * the differenced series, started after ncond = d + Dm + p + mP observations with
 * earlier residuals taken as zero. Used for starting values (CSS-ML) and, as in
 * `auto.arima`, as the fast approximate criterion for long series.
 */

/** Coefficients Δ of (1-B)^d (1-B^m)^D written as y_t = Σ Δ_i y_{t-i} + w_t (R's `Delta`). */
export function differencingPoly(d: number, D: number, m: number): Float64Array {
  let poly = [1];
  const mul = (f: number[]): void => {
    const out = new Array<number>(poly.length + f.length - 1).fill(0);
    for (let i = 0; i < poly.length; i++) for (let j = 0; j < f.length; j++) out[i + j] += poly[i] * f[j];
    poly = out;
  };
  for (let i = 0; i < d; i++) mul([1, -1]);
  const seas = new Array<number>(m + 1).fill(0);
  seas[0] = 1;
  seas[m] = -1;
  for (let i = 0; i < D; i++) mul(seas);
  return Float64Array.from(poly.slice(1), (v) => -v);
}

/** Apply (1-B)^d (1-B^m)^D; the result is shorter by d + Dm. NaN propagates. */
export function difference(x: ArrayLike<number>, d: number, D: number, m: number): Float64Array {
  let w = Float64Array.from(x);
  for (let k = 0; k < d; k++) {
    const o = new Float64Array(Math.max(0, w.length - 1));
    for (let i = 0; i < o.length; i++) o[i] = w[i + 1] - w[i];
    w = o;
  }
  for (let k = 0; k < D; k++) {
    const o = new Float64Array(Math.max(0, w.length - m));
    for (let i = 0; i < o.length; i++) o[i] = w[i + m] - w[i];
    w = o;
  }
  return w;
}

/**
 * CSS: mean squared residual of the ARMA recursion on the differenced series `w`
 * (length N), starting at index c0 = p + mP. `resid` (length N) receives the residuals.
 * Returns ssq / nu (R's `res`), NaN if no residual is usable.
 */
export function cssResiduals(
  w: ArrayLike<number>,
  phi: Float64Array,
  theta: Float64Array,
  resid: Float64Array,
): number {
  const N = w.length;
  const np = phi.length;
  const nq = theta.length;
  const c0 = np;
  let ssq = 0;
  let nu = 0;
  for (let i = 0; i < Math.min(c0, N); i++) resid[i] = 0;
  // seasonal polynomials are sparse: visit only the non-zero AR lags
  const lags = new Int32Array(np);
  let nl = 0;
  for (let j = 0; j < np; j++) if (phi[j] !== 0) lags[nl++] = j;
  for (let i = c0; i < N; i++) {
    let tmp = w[i];
    for (let k = 0; k < nl; k++) tmp -= phi[lags[k]] * w[i - lags[k] - 1];
    const jmax = Math.min(i - c0, nq);
    for (let j = 0; j < jmax; j++) tmp -= theta[j] * resid[i - j - 1];
    resid[i] = tmp;
    if (tmp === tmp) {
      nu++;
      ssq += tmp * tmp;
    }
  }
  return nu > 0 ? ssq / nu : NaN;
}
