/**
 * Automatic ARIMA order selection: the stepwise search of forecast's `auto.arima`
 * (Hyndman & Khandakar 2008, forecast 8.20): d by KPSS, D by seasonal strength,
 * then a neighbourhood search over (p, q, P, Q, constant) from (2,d,2)(1,D,1),
 * scored by AICc; models with near-unit roots or undefined coefficient variance
 * are rejected (forecast's `myarima`). Long series (n > 150 or m > 12) are
 * searched by CSS with R's likelihood offset, then the best are refitted by ML.
 */
import { difference } from './css';
import { type ArimaFit, ArimaFitFailure, type ArimaOrder, fitArima } from './fit';
import { isConstant, ndiffs, nsdiffs } from './unit-root';

/** Search limits and choices (defaults as `auto.arima`). */
export interface AutoOptions {
  readonly maxP?: number;
  readonly maxQ?: number;
  readonly maxSP?: number;
  readonly maxSQ?: number;
  readonly ic?: 'aicc' | 'aic' | 'bic';
  /** Force the CSS approximation on/off (default: n > 150 or m > 12, as R). */
  readonly approximation?: boolean;
  /** Fix d or D instead of testing. */
  readonly d?: number;
  readonly D?: number;
  /** Largest number of models tried (R's nmodels = 94). */
  readonly nmodels?: number;
}

/** Result of the search: the chosen fit (or a special constant case) and notes. */
export interface AutoResult {
  readonly fit: ArimaFit;
  readonly warnings: string[];
  readonly modelsTried: number;
}

interface Candidate {
  p: number;
  q: number;
  P: number;
  Q: number;
  constant: boolean;
  ic: number;
}

/** Run auto.arima's stepwise search on x (leading NaN already trimmed). */
export function autoArima(x: Float64Array, period: number, opts: AutoOptions = {}): AutoResult {
  const warnings: string[] = [];
  let last = x.length - 1;
  while (last >= 0 && !(x[last] === x[last])) last--;
  let serieslength = 0;
  for (let i = 0; i <= last; i++) if (x[i] === x[i]) serieslength++;
  let m = Math.max(1, Math.round(period));
  let ic = opts.ic ?? 'aicc';
  let maxp = Math.min(opts.maxP ?? 5, Math.floor(serieslength / 3));
  let maxq = Math.min(opts.maxQ ?? 5, Math.floor(serieslength / 3));
  let maxP = Math.min(opts.maxSP ?? 2, Math.floor(serieslength / 3 / m));
  let maxQ = Math.min(opts.maxSQ ?? 2, Math.floor(serieslength / 3 / m));
  if (serieslength <= 3) ic = 'aic';
  let D: number;
  if (m === 1) {
    D = 0;
    maxP = maxQ = 0;
  } else if (opts.D !== undefined) D = opts.D;
  else if (x.length <= 2 * m) D = 0;
  else {
    D = nsdiffs(x, m);
    if (D > 0 && difference(x, 0, D, m).every((v) => Number.isNaN(v))) D--;
  }
  let dx = D > 0 ? difference(x, 0, D, m) : x;
  let d = opts.d ?? ndiffs(dx);
  if (opts.d === undefined && d > 0 && difference(dx, d, 0, 1).every((v) => Number.isNaN(v))) d--;
  if (d > 0) dx = difference(dx, d, 0, 1);
  const order = (p: number, q: number, P: number, Q: number): ArimaOrder => ({ p, d, q, P, D, Q, m });
  if (dx.length === 0) throw new ArimaFitFailure('not enough data after differencing');
  if (isConstant(dx)) {
    // polynomial data: R fits the differencing model with a fixed drift/mean
    let mu = 0;
    let k = 0;
    for (const v of dx) if (v === v) ((mu += v), k++);
    mu /= k;
    const base = { mean: false, drift: false, method: 'CSS-ML' as const, checkVariance: false };
    let fit: ArimaFit;
    if (D > 0 && d === 0) fit = fitArima(x, { ...base, order: order(0, 0, 0, 0), drift: true, fixedXreg: { drift: mu / m } });
    else if (D > 0 || d === 2) fit = fitArima(x, { ...base, order: order(0, 0, 0, 0) });
    else if (d === 1) fit = fitArima(x, { ...base, order: order(0, 0, 0, 0), drift: true, fixedXreg: { drift: mu } });
    else fit = fitArima(x, { ...base, order: order(0, 0, 0, 0), mean: true, fixedXreg: { intercept: mu } });
    warnings.push('differenced series is constant: deterministic model');
    return { fit, warnings, modelsTried: 1 };
  }
  if (m > 1) {
    if (maxP > 0) maxp = Math.min(maxp, m - 1);
    if (maxQ > 0) maxq = Math.min(maxq, m - 1);
  }
  const approximation = opts.approximation ?? (x.length > 150 || m > 12);
  let offset = 0;
  if (approximation) {
    try {
      const f0 = fitArima(x, { order: order(0, 0, 0, 0), mean: true, drift: false, method: 'CSS-ML', checkVariance: false });
      offset = -2 * f0.loglik - serieslength * Math.log(f0.sigma2Arima);
    } catch {
      offset = 0;
    }
  }
  const allowdrift = d + D === 1;
  const allowmean = d + D === 0;
  let constant = allowdrift || allowmean;
  const nstar = serieslength - d - D * m;

  /** forecast's myarima: fit and score, Inf on failure or near-unit roots. */
  const score = (p: number, q: number, P: number, Q: number, c: boolean, approx: boolean): { ic: number; fit?: ArimaFit } => {
    try {
      const fit = fitArima(x, {
        order: order(p, q, P, Q),
        mean: c,
        drift: c && d + D === 1,
        method: approx ? 'CSS' : 'CSS-ML',
      });
      let aic = fit.aic;
      if (approx) aic = offset + nstar * Math.log(fit.sigma2Arima) + 2 * fit.npar;
      if (!Number.isFinite(aic)) return { ic: Infinity, fit };
      const bic = aic + fit.npar * (Math.log(nstar) - 2);
      const aicc = aic + (2 * fit.npar * (fit.npar + 1)) / (nstar - fit.npar - 1);
      let v = ic === 'bic' ? bic : ic === 'aic' ? aic : aicc;
      if (fit.minRoot < 1.01 || !fit.varianceOk || Number.isNaN(v)) v = Infinity;
      return { ic: v, fit };
    } catch (e) {
      if (e instanceof ArimaFitFailure) return { ic: Infinity };
      throw e;
    }
  };

  const nmodels = opts.nmodels ?? 94;
  const results: Candidate[] = [];
  const seen = (p: number, q: number, P: number, Q: number, c: boolean): boolean =>
    results.some((r) => r.p === p && r.q === q && r.P === P && r.Q === Q && r.constant === c);
  let best: { ic: number; fit?: ArimaFit } = { ic: Infinity };
  const tryModel = (p: number, q: number, P: number, Q: number, c: boolean): boolean => {
    const s = score(p, q, P, Q, c, approximation);
    results.push({ p, q, P, Q, constant: c, ic: s.ic });
    if (s.ic < best.ic) {
      best = s;
      return true;
    }
    return false;
  };

  let startp = 2;
  let startq = 2;
  let startP = 1;
  let startQ = 1;
  if (x.length < 10) {
    startp = startq = 1;
    startP = startQ = 0;
  }
  let p = Math.min(startp, maxp);
  let q = Math.min(startq, maxq);
  let P = Math.min(startP, maxP);
  let Q = Math.min(startQ, maxQ);
  {
    const s = score(p, q, P, Q, constant, approximation);
    results.push({ p, q, P, Q, constant, ic: s.ic });
    best = s;
  }
  if (tryModel(0, 0, 0, 0, constant)) p = q = P = Q = 0;
  if (maxp > 0 || maxP > 0) {
    const np = maxp > 0 ? 1 : 0;
    const nP = m > 1 && maxP > 0 ? 1 : 0;
    if (tryModel(np, 0, nP, 0, constant)) [p, P, q, Q] = [np, nP, 0, 0];
  }
  if (maxq > 0 || maxQ > 0) {
    const nq = maxq > 0 ? 1 : 0;
    const nQ = m > 1 && maxQ > 0 ? 1 : 0;
    if (tryModel(0, nq, 0, nQ, constant)) [p, P, q, Q] = [0, 0, nq, nQ];
  }
  if (constant && tryModel(0, 0, 0, 0, false)) p = q = P = Q = 0;

  // neighbourhood moves in R's order; the first improvement restarts the scan
  const moves: [number, number, number, number, (s: { p: number; q: number; P: number; Q: number }) => boolean][] = [
    [0, 0, -1, 0, (s) => s.P > 0],
    [0, 0, 0, -1, (s) => s.Q > 0],
    [0, 0, 1, 0, (s) => s.P < maxP],
    [0, 0, 0, 1, (s) => s.Q < maxQ],
    [0, 0, -1, -1, (s) => s.Q > 0 && s.P > 0],
    [0, 0, -1, 1, (s) => s.Q < maxQ && s.P > 0],
    [0, 0, 1, -1, (s) => s.Q > 0 && s.P < maxP],
    [0, 0, 1, 1, (s) => s.Q < maxQ && s.P < maxP],
    [-1, 0, 0, 0, (s) => s.p > 0],
    [0, -1, 0, 0, (s) => s.q > 0],
    [1, 0, 0, 0, (s) => s.p < maxp],
    [0, 1, 0, 0, (s) => s.q < maxq],
    [-1, -1, 0, 0, (s) => s.q > 0 && s.p > 0],
    [-1, 1, 0, 0, (s) => s.q < maxq && s.p > 0],
    [1, -1, 0, 0, (s) => s.q > 0 && s.p < maxp],
    [1, 1, 0, 0, (s) => s.q < maxq && s.p < maxp],
  ];
  let k = results.length;
  let startk = 0;
  while (startk < k && k < nmodels) {
    startk = k;
    let improved = false;
    for (const [dp, dq, dP, dQ, ok] of moves) {
      const s = { p, q, P, Q };
      if (!ok(s) || seen(p + dp, q + dq, P + dP, Q + dQ, constant)) continue;
      k++;
      if (k > nmodels) break;
      if (tryModel(p + dp, q + dq, P + dP, Q + dQ, constant)) {
        p += dp;
        q += dq;
        P += dP;
        Q += dQ;
        improved = true;
        break;
      }
    }
    if (improved || k > nmodels) continue;
    if ((allowdrift || allowmean) && !seen(p, q, P, Q, !constant)) {
      k++;
      if (k > nmodels) continue;
      if (tryModel(p, q, P, Q, !constant)) constant = !constant;
    }
  }
  if (k > nmodels) warnings.push(`stepwise search stopped at the model limit (${nmodels})`);

  if (approximation && best.fit) {
    // R refits every tried model in ic order (Inf last), not only the finite ones
    const ordered = results.map((r, i) => ({ r, i })).sort((a, b) => (a.r.ic === b.r.ic ? a.i - b.i : a.r.ic < b.r.ic ? -1 : 1)).map((o) => o.r);
    best = { ic: Infinity };
    for (const r of ordered) {
      const s = score(r.p, r.q, r.P, r.Q, r.constant, false);
      if (s.ic < Infinity) {
        best = s;
        break;
      }
    }
  }
  if (!best.fit || best.ic === Infinity) {
    // Why a fallback: R stops with "No suitable ARIMA model found"; a service needs a forecast.
    warnings.push('no ARIMA model passed the checks: fell back to the plain differencing model');
    const fit = fitArima(x, { order: order(0, 0, 0, 0), mean: allowmean, drift: allowdrift, method: 'CSS-ML', checkVariance: false });
    return { fit, warnings, modelsTried: results.length + 1 };
  }
  return { fit: best.fit, warnings, modelsTried: results.length };
}
