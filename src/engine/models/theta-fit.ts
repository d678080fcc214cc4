/**
 * Estimation for the Theta family, on a complete (gap-free) series.
 *
 * - SES (the engine of the standard Theta, Hyndman & Billah 2003): y_t = ℓ_{t−1} + ε_t,
 *   ℓ_t = ℓ_{t−1} + α ε_t, all n errors used, as R `ets(y, "ANN", opt.crit = "mse")`.
 * - OTM / DOTM (Fiorucci, Pellegrini, Louzada, Petropoulos & Koehler 2016, "Models for optimising
 *   the theta method and their relationship to state space models", IJF 32(4)), in the recursion
 *   of forecTheta / statsforecast `theta.cpp`: μ_t = ℓ_{t−1} + (1 − 1/θ)·[(1−α)^{t−1} A + (1 − (1−α)^t)/α · B],
 *   ℓ_t = α y_t + (1−α) ℓ_{t−1}, with (A, B) the OLS intercept and slope of the whole series
 *   (OTM) or of y_1..y_{t−1}, updated recursively (DOTM); the first three errors are a burn-in.
 *
 * Gaussian errors: maximising the likelihood with σ concentrated out = minimising the SSE.
 * Why a profile: the errors are linear in ℓ_0 and in w = 1 − 1/θ, so for each α those are
 * solved exactly by least squares (w kept in [0, 1), i.e. θ ≥ 1), and the bounded Nelder–Mead
 * searches α alone, started from the best point of a grid (the SSE in α can be multimodal).
 * Every series is shifted by its first value first: both models are shift-equivariant and the
 * normal equations lose less precision.
 */
import { nelderMead } from '../optim/nelder-mead';

/** Fitted parameters and final states. Levels are on the original scale. */
export interface ThetaCoreFit {
  readonly alpha: number;
  /** ℓ_0 (SES) / "initial smoothed" (OTM, DOTM). */
  readonly l0: number;
  /** w = 1 − 1/θ (0 for SES). */
  readonly w: number;
  /** Sum of squared one-step errors over the scored errors. */
  readonly sse: number;
  /** Number of scored errors. */
  readonly nErrors: number;
  /** One-step fitted values (μ_t, or ℓ_{t−1} for SES), length n. */
  readonly fitted: Float64Array;
  /** Final level ℓ_n. */
  readonly level: number;
  /** Final theta-line coefficients (A, B) and running mean (DOTM), original scale. */
  readonly a: number;
  readonly b: number;
  readonly meanY: number;
}

/** Which recursion: SES, OTM (static A, B) or DOTM (dynamic A, B). */
export type ThetaCore = 'ses' | 'otm' | 'dotm';

const BURN_IN = 3;
const GRID = 24;

/** A_{t}, B_{t}: for OTM the full-sample OLS line repeated; for DOTM the recursive OLS on y_1..y_{t+1}. */
function thetaLines(y: Float64Array, dynamic: boolean): { a: Float64Array; b: Float64Array; meanY: Float64Array } {
  const n = y.length;
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  const meanY = new Float64Array(n);
  if (!dynamic) {
    let sy = 0;
    let sty = 0;
    for (let t = 0; t < n; t++) {
      sy += y[t];
      sty += (t + 1) * y[t];
    }
    const my = sy / n;
    const bn = n > 1 ? (6 * ((2 * sty) / n - (n + 1) * my)) / (n * n - 1) : 0;
    a.fill(my - ((n + 1) * bn) / 2);
    b.fill(bn);
    meanY.fill(my);
    return { a, b, meanY };
  }
  a[0] = y[0];
  b[0] = 0;
  meanY[0] = y[0];
  for (let i = 1; i < n; i++) {
    meanY[i] = (i * meanY[i - 1] + y[i]) / (i + 1);
    b[i] = ((i - 1) * b[i - 1] + (6 * (y[i] - meanY[i - 1])) / (i + 1)) / (i + 2);
    a[i] = meanY[i] - (b[i] * (i + 2)) / 2;
  }
  return { a, b, meanY };
}

/** Work arrays reused across objective evaluations (no allocation in the search loop). */
interface Work {
  y: Float64Array;
  lineA: Float64Array;
  lineB: Float64Array;
  core: ThetaCore;
  l0: number;
  w: number;
  /** Final level ℓ_n of the last residual pass. */
  level: number;
}

/** Profile: best (ℓ_0, w) for this α; returns the SSE and leaves ℓ_0, w in `work`. */
function profile(work: Work, alpha: number): number {
  const { y, lineA, lineB, core } = work;
  const n = y.length;
  const q = 1 - alpha;
  const first = core === 'ses' ? 0 : BURN_IN;
  let lev0 = 0; // level with ℓ_0 = 0
  let c = 1; // coefficient of ℓ_0 in ℓ_{t−1}
  let pw = 1; // (1−α)^t
  let scc = 0, scg = 0, sgg = 0, scr = 0, sgr = 0;
  for (let t = 0; t < n; t++) {
    if (t >= first) {
      const r = y[t] - lev0;
      const g = core === 'ses' ? 0 : t === 0 ? lineA[0] + lineB[0] : lineA[t - 1] * pw + (lineB[t - 1] * (1 - pw * q)) / alpha;
      scc += c * c;
      scg += c * g;
      sgg += g * g;
      scr += c * r;
      sgr += g * r;
    }
    lev0 = alpha * y[t] + q * lev0;
    c *= q;
    pw *= q;
  }
  let l0 = 0;
  let w = 0;
  const det = scc * sgg - scg * scg;
  if (core !== 'ses' && det > 1e-12 * scc * sgg && sgg > 0) {
    l0 = (sgg * scr - scg * sgr) / det;
    w = (scc * sgr - scg * scr) / det;
  } else if (core !== 'ses' && sgg > 0 && !(scc > 1e-300)) {
    w = sgr / sgg; // ℓ_0 has no influence on the scored errors
  }
  if (core !== 'ses' && !(w >= 0 && w < 1 - 1e-10)) {
    w = Math.min(1 - 1e-10, Math.max(0, Number.isFinite(w) ? w : 0));
    l0 = scc > 1e-300 ? (scr - w * scg) / scc : 0;
  } else if (core === 'ses') {
    l0 = scc > 1e-300 ? scr / scc : 0;
  }
  work.l0 = l0;
  work.w = w;
  return residualPass(work, alpha, null);
}

/** SSE (and optionally fitted values) at (α, work.l0, work.w); leaves the final level in `work.level`. */
function residualPass(work: Work, alpha: number, fitted: Float64Array | null): number {
  const { y, lineA, lineB, core, l0, w } = work;
  const n = y.length;
  const q = 1 - alpha;
  const first = core === 'ses' ? 0 : BURN_IN;
  let level = l0;
  let pw = 1;
  let sse = 0;
  for (let t = 0; t < n; t++) {
    const g = core === 'ses' ? 0 : t === 0 ? lineA[0] + lineB[0] : lineA[t - 1] * pw + (lineB[t - 1] * (1 - pw * q)) / alpha;
    const mu = level + w * g;
    if (fitted) fitted[t] = mu;
    if (t >= first) sse += (y[t] - mu) * (y[t] - mu);
    level = alpha * y[t] + q * level;
    pw *= q;
  }
  work.level = level;
  return sse;
}

/**
 * Fit SES / OTM / DOTM to the gap-free series `y` (length ≥ 2, ≥ 5 for OTM/DOTM).
 * α is searched in [1e-4, 0.9999] for SES (R's `ets` bounds) and [0.1, 0.99] for OTM/DOTM
 * (Fiorucci et al.'s bounds, as forecTheta and statsforecast).
 */
export function fitThetaCore(yIn: ArrayLike<number>, core: ThetaCore): ThetaCoreFit {
  const n = yIn.length;
  const shift = yIn[0];
  const y = Float64Array.from(yIn, (v) => v - shift);
  const lines = thetaLines(y, core === 'dotm');
  const work: Work = { y, lineA: lines.a, lineB: lines.b, core, l0: 0, w: 0, level: 0 };
  const lo = core === 'ses' ? 1e-4 : 0.1;
  const hi = core === 'ses' ? 0.9999 : 0.99;
  let bestA = lo;
  let bestV = Infinity;
  for (let i = 0; i < GRID; i++) {
    const a = lo + ((hi - lo) * i) / (GRID - 1);
    const v = profile(work, a);
    if (v < bestV) {
      bestV = v;
      bestA = a;
    }
  }
  const res = nelderMead((x) => profile(work, x[0]), [bestA], {
    lower: [lo],
    upper: [hi],
    step: [(hi - lo) / (GRID - 1) / 2],
    tolerance: 1e-12,
    maxEvaluations: 300,
  });
  const alpha = res.value <= bestV ? res.x[0] : bestA;
  profile(work, alpha);
  const fitted = new Float64Array(n);
  const sse = residualPass(work, alpha, fitted);
  const level = work.level;
  for (let t = 0; t < n; t++) fitted[t] += shift;
  const last = n - 1;
  // Why `+ shift` on A and the level: the fit ran on y − shift (see file doc); ℓ_0 maps back as ℓ_0 + (1 − w)·shift.
  return {
    alpha,
    l0: work.l0 + (1 - work.w) * shift,
    w: work.w,
    sse,
    nErrors: core === 'ses' ? n : Math.max(0, n - BURN_IN),
    fitted,
    level: level + shift - work.w * shift * Math.pow(1 - alpha, n),
    a: lines.a[last] + shift,
    b: lines.b[last],
    meanY: lines.meanY[last] + shift,
  };
}

/**
 * Point forecasts of OTM / DOTM by running the recursion with y replaced by μ (as forecTheta
 * and statsforecast do), from the final states of `fit` on a series of length n.
 */
export function thetaCoreForecast(fit: ThetaCoreFit, core: 'otm' | 'dotm', n: number, h: number): Float64Array {
  const out = new Float64Array(h);
  const alpha = fit.alpha;
  const q = 1 - alpha;
  let level = fit.level;
  let a = fit.a;
  let b = fit.b;
  let meanY = fit.meanY;
  let pw = Math.pow(q, n);
  for (let j = 0; j < h; j++) {
    const i = n + j;
    const mu = level + fit.w * (a * pw + (b * (1 - pw * q)) / alpha);
    out[j] = mu;
    level = alpha * mu + q * level;
    if (core === 'dotm') {
      const prevMean = meanY;
      meanY = (i * meanY + mu) / (i + 1);
      b = ((i - 1) * b + (6 * (mu - prevMean)) / (i + 1)) / (i + 2);
      a = meanY - (b * (i + 2)) / 2;
    }
    pw *= q;
  }
  return out;
}
