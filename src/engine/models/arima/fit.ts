/**
 * Fit one (seasonal) ARIMA by R's `stats::arima` recipe, with forecast's `Arima`
 * bookkeeping on top (AICc, BIC, the residual-based sigma²):
 * CSS starting values, then exact Gaussian ML by the Kalman filter, AR parts
 * kept stationary by the partial-autocorrelation transform, MA roots inverted
 * after optimisation, mean/drift as regression terms.
 */
import { bfgs, hessian } from './bfgs';
import { cssResiduals, difference, differencingPoly } from './css';
import { leastSquares } from './linalg';
import { ArimaSS } from './state-space';
import { type ArmaSpec, arStationary, expandArma, invTrans, maInvert, minRoot, undoPars } from './transform';
import { gradTrans, varianceDefined } from './variance-check';

/** A full (seasonal) ARIMA order with its period m (m = 1 when non-seasonal). */
export interface ArimaOrder extends ArmaSpec {
  readonly d: number;
  readonly D: number;
}

/** Estimation method, as R: CSS then ML (default), ML only, or CSS only (auto.arima's approximation). */
export type ArimaMethod = 'CSS-ML' | 'ML' | 'CSS';

/** What to fit. */
export interface FitSpec {
  readonly order: ArimaOrder;
  /** Intercept when d + D = 0 (R's include.mean). */
  readonly mean: boolean;
  /** Linear-trend regressor 1..n (R/forecast's include.drift). */
  readonly drift: boolean;
  readonly method: ArimaMethod;
  /** Fixed regression coefficients by name (e.g. auto.arima's fixed drift for polynomial data). */
  readonly fixedXreg?: { readonly [name: string]: number };
  /** Compute the coefficient variance and flag undefined ones (forecast's `checkarima`). Default true. */
  readonly checkVariance?: boolean;
}

/** A fitted ARIMA, everything needed to forecast and to rank models. */
export interface ArimaFit {
  readonly order: ArimaOrder;
  readonly method: ArimaMethod;
  /** Coefficients [ar, ma, sar, sma, xreg] and their names. */
  readonly coef: Float64Array;
  readonly names: readonly string[];
  /** Regression columns by name (`intercept`, `drift`). */
  readonly xregNames: readonly string[];
  readonly loglik: number;
  readonly aic: number;
  readonly aicc: number;
  readonly bic: number;
  /** forecast's sigma²: Σ resid² / (nstar - npar + 1), used for intervals. */
  readonly sigma2: number;
  /** stats::arima's own sigma² (ML: ssq / nobs; CSS: mean squared CSS residual), as auto.arima's offset uses. */
  readonly sigma2Arima: number;
  /** Observations in the likelihood (non-missing minus differencing order). */
  readonly nobs: number;
  readonly npar: number;
  /** Standardised one-step innovations, NaN where y is missing. */
  readonly residuals: Float64Array;
  /** State-space model holding the end-of-sample filtered state. */
  readonly ss: ArimaSS;
  /** Series length (for the drift regressor's future values). */
  readonly n: number;
  /** Smallest AR/MA root modulus of the expanded polynomials (Infinity if none). */
  readonly minRoot: number;
  /** False when the coefficient variance is undefined (singular or negative). */
  readonly varianceOk: boolean;
  readonly warnings: string[];
}

/** Thrown when a fit cannot be completed (the auto search scores it as Inf). */
export class ArimaFitFailure extends Error {}

const XMAX = 1.7976931348623157e308;

/** Fit `spec` to `x` (NaN = missing). Throws `ArimaFitFailure` where R's arima would stop. */
export function fitArima(x: Float64Array, spec: FitSpec): ArimaFit {
  const o = spec.order;
  const { p, q, P, Q, m, d, D } = o;
  const n = x.length;
  const warnings: string[] = [];
  const narma = p + q + P + Q;
  const delta = differencingPoly(d, D, m);
  const nd = delta.length;
  const xreg: Float64Array[] = [];
  const xregNames: string[] = [];
  if (spec.mean && nd === 0) {
    xreg.push(new Float64Array(n).fill(1));
    xregNames.push('intercept');
  }
  if (spec.drift) {
    xreg.push(Float64Array.from({ length: n }, (_, i) => i + 1));
    xregNames.push('drift');
  }
  const nc = xreg.length;
  const ntot = narma + nc;
  const fixed = new Float64Array(ntot).fill(NaN);
  xregNames.forEach((nm, k) => {
    const v = spec.fixedXreg?.[nm];
    if (v !== undefined) fixed[narma + k] = v;
  });
  const mask = Array.from(fixed, (v) => Number.isNaN(v));
  const free: number[] = [];
  mask.forEach((f, i) => f && free.push(i));
  const noOptim = free.length === 0;
  const trans = !noOptim;
  let nonNa = 0;
  for (let i = 0; i < n; i++) if (x[i] === x[i]) nonNa++;
  const nUsed = nonNa - nd;
  if (nUsed <= 0) throw new ArimaFitFailure('too few non-missing observations');
  const anyNa = nonNa < n;
  let method = spec.method;
  if (method === 'CSS-ML' && anyNa) method = 'ML';

  // differenced series and regressors (regression terms enter linearly)
  const dx = difference(x, d, D, m);
  const dxr = xreg.map((c) => difference(c, d, D, m));
  const N = dx.length;
  const init = new Float64Array(ntot);
  const parscale = new Float64Array(ntot).fill(1);
  if (nc > 0) {
    let ls = N > nc ? leastSquares(dx, dxr) : null;
    if (!ls) ls = leastSquares(x, xreg);
    if (!ls) throw new ArimaFitFailure('regression terms are not estimable');
    for (let k = 0; k < nc; k++) {
      init[narma + k] = ls.coef[k];
      // Why the fallback: R would pass a zero parscale on a perfect fit and fail; any positive scale works.
      parscale[narma + k] = ls.se[k] > 0 ? 10 * ls.se[k] : Math.max(1e-3, Math.abs(ls.coef[k]) * 0.1);
    }
  }

  // work buffers
  const coef = Float64Array.from(fixed);
  const phi = new Float64Array(p + m * P);
  const theta = new Float64Array(q + m * Q);
  const w = new Float64Array(N);
  const xr = new Float64Array(n);
  const cssRes = new Float64Array(N);
  const lik = new Float64Array(3);
  const ssDiff = new ArimaSS(phi.length, theta.length, []);
  const ssFull = new ArimaSS(phi.length, theta.length, delta);
  const fillCoef = (par: ArrayLike<number>): void => {
    for (let k = 0; k < free.length; k++) coef[free[k]] = par[k];
  };
  const setW = (c: ArrayLike<number>): void => {
    for (let i = 0; i < N; i++) {
      let v = dx[i];
      for (let k = 0; k < nc; k++) v -= c[narma + k] * dxr[k][i];
      w[i] = v;
    }
  };
  const setXr = (c: ArrayLike<number>): void => {
    for (let i = 0; i < n; i++) {
      let v = x[i];
      for (let k = 0; k < nc; k++) v -= c[narma + k] * xreg[k][i];
      xr[i] = v;
    }
  };
  const armaCSS = (par: Float64Array): number => {
    fillCoef(par);
    expandArma(coef, o, phi, theta);
    setW(coef);
    return 0.5 * Math.log(cssResiduals(w, phi, theta, cssRes));
  };
  const tc = new Float64Array(ntot);
  const armafn = (par: Float64Array, doTrans: boolean): number => {
    fillCoef(par);
    if (doTrans) {
      const u = undoPars(coef, o);
      tc.set(u);
    } else tc.set(coef);
    expandArma(tc, o, phi, theta);
    // Why differenced data when complete: the ARMA filter on (1-B)^d(1-B^m)^D x is R's
    // diffuse likelihood up to O(1/kappa), and its state is nd dimensions smaller.
    if (!anyNa) {
      setW(tc);
      if (!ssDiff.filterArma(w, phi, theta, lik)) return XMAX;
    } else {
      if (!ssFull.reset(phi, theta)) return XMAX;
      setXr(tc);
      ssFull.filter(xr, lik);
    }
    if (lik[2] === 0) return XMAX;
    const s2 = lik[0] / lik[2];
    return 0.5 * (Math.log(s2) + lik[1] / lik[2]);
  };

  // CSS conditions on the first nd + p + mP observations (R's ncond)
  if (method !== 'ML' && N <= p + m * P) throw new ArimaFitFailure('too few observations for CSS');
  const initFree = () => Float64Array.from(free, (i) => init[i]);
  const scaleFree = Float64Array.from(free, (i) => parscale[i]);
  let value: number;
  let code = 0;
  let varianceOk = true;
  const checkVar = spec.checkVariance ?? true;

  if (method === 'CSS') {
    const res = noOptim ? { par: new Float64Array(0), value: armaCSS(new Float64Array(0)), code: 0 } : bfgs(armaCSS, initFree(), { parscale: scaleFree });
    code = res.code;
    fillCoef(res.par);
    value = res.value;
    if (!noOptim && checkVar) {
      varianceOk = varianceDefined(hessian(armaCSS, res.par, scaleFree), null, nUsed);
      fillCoef(res.par);
    }
  } else {
    if (method === 'CSS-ML') {
      const res = noOptim ? { par: new Float64Array(0), code: 0 } : bfgs(armaCSS, initFree(), { parscale: scaleFree });
      if (res.code === 0) for (let k = 0; k < free.length; k++) init[free[k]] = res.par[k];
      if (!arStationary(init, 0, p) || !arStationary(init, p + q, P))
        throw new ArimaFitFailure('non-stationary AR part from CSS');
    }
    if (trans) {
      const it = invTrans(init, o);
      init.set(it);
      if (q > 0) maInvert(init, p, q);
      if (Q > 0) maInvert(init, p + q + P, Q);
    }
    const f = (par: Float64Array): number => armafn(par, trans);
    const res = noOptim ? { par: new Float64Array(0), value: armafn(new Float64Array(0), false), code: 0 } : bfgs(f, initFree(), { parscale: scaleFree });
    code = res.code;
    value = res.value;
    fillCoef(res.par);
    if (trans) {
      if (q > 0) maInvert(coef, p, q);
      if (Q > 0) maInvert(coef, p + q + P, Q);
      if (checkVar) {
        const par = Float64Array.from(free, (i) => coef[i]);
        const A = gradTrans(coef, o, free);
        varianceOk = varianceDefined(hessian(f, par, scaleFree), A, nUsed);
        fillCoef(par); // the Hessian's evaluations left coef perturbed
      }
      coef.set(undoPars(coef, o));
    }
  }
  if (code !== 0) warnings.push(`optimiser did not converge (code ${code})`);

  // final pass: residuals and end-of-sample state on the undifferenced series
  expandArma(coef, o, phi, theta);
  if (!ssFull.reset(phi, theta)) throw new ArimaFitFailure('non-stationary AR part');
  setXr(coef);
  const residuals = new Float64Array(n);
  ssFull.filter(xr, lik, residuals);
  let loglik: number;
  let aic: number;
  let sigma2Arima = lik[0] / nUsed;
  if (method === 'CSS') {
    setW(coef);
    const s2css = cssResiduals(w, phi, theta, cssRes);
    residuals.fill(0, 0, Math.min(n, nd));
    for (let i = 0; i < N; i++) residuals[nd + i] = cssRes[i];
    loglik = -0.5 * (2 * nUsed * value + nUsed + nUsed * Math.log(2 * Math.PI));
    aic = NaN;
    sigma2Arima = s2css;
  } else {
    // Why re-evaluate: the optimiser ran on the differenced series; the reported
    // likelihood is R's diffuse one (they differ by O(1/kappa)), from the same filter pass.
    if (lik[2] > 0) value = 0.5 * (Math.log(lik[0] / lik[2]) + lik[1] / lik[2]);
    loglik = -0.5 * (2 * nUsed * value + nUsed + nUsed * Math.log(2 * Math.PI));
    aic = -2 * loglik + 2 * free.length + 2;
  }
  // forecast::Arima bookkeeping
  let first = 0;
  while (first < n && !(x[first] === x[first])) first++;
  let last = n - 1;
  while (last >= 0 && !(x[last] === x[last])) last--;
  let nSpan = 0;
  for (let i = first; i <= last; i++) if (x[i] === x[i]) nSpan++;
  const nstar = nSpan - d - D * m;
  const npar = free.length + 1;
  const aicc = aic + (2 * npar * (npar + 1)) / (nstar - npar - 1);
  const bic = aic + npar * (Math.log(nstar) - 2);
  let rss = 0;
  for (let i = 0; i < n; i++) if (residuals[i] === residuals[i]) rss += residuals[i] * residuals[i];
  const sigma2 = rss / (nstar - npar + 1);
  const mr = Math.min(
    minRoot(coef, 0, p, -1),
    Math.pow(minRoot(coef, p + q, P, -1), 1 / m),
    minRoot(coef, p, q, 1),
    Math.pow(minRoot(coef, p + q + P, Q, 1), 1 / m),
  );
  const names: string[] = [];
  for (let i = 1; i <= p; i++) names.push(`ar${i}`);
  for (let i = 1; i <= q; i++) names.push(`ma${i}`);
  for (let i = 1; i <= P; i++) names.push(`sar${i}`);
  for (let i = 1; i <= Q; i++) names.push(`sma${i}`);
  names.push(...xregNames);
  return {
    order: o, method, coef: Float64Array.from(coef), names, xregNames, loglik, aic, aicc, bic, sigma2, sigma2Arima,
    nobs: nUsed, npar, residuals, ss: ssFull, n, minRoot: mr, varianceOk, warnings,
  };
}
