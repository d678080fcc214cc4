/**
 * Fit one ETS model by maximum likelihood, as R `forecast:::etsmodel` (8.x): R's starting values
 * (`initparam`), decomposition-based initial states (`initstate`), then all smoothing parameters
 * and initial states jointly by Nelder–Mead on R's `lik`, inside bounds "both".
 */
import { checkParams, type Bounds, type ParamFlags } from './admissible';
import { initState } from './init-state';
import { likelihoodFor } from './likelihood';
import { runEts, type Kernel } from './recursion';
import { code, specName, type EtsSpec } from './spec';

/** Smoothing parameters fixed by the caller (R's `alpha =`, `beta =`, ...). */
export interface FixedParams {
  alpha?: number;
  beta?: number;
  gamma?: number;
  phi?: number;
}

/** One fitted ETS model (R's `etsmodel` return value, in our terms). */
export interface EtsFit {
  spec: EtsSpec;
  name: string;
  /** Seasonal period used by the model (1 when not seasonal). */
  m: number;
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  /** Full initial state, R layout `[l, b?, s_1..s_m]`. */
  initState: Float64Array;
  /** State after the last observation, R layout. */
  lastState: Float64Array;
  /** R's `lik` (−2·loglik up to constants). */
  lik: number;
  loglik: number;
  aic: number;
  aicc: number;
  bic: number;
  /** Estimated parameter count including sigma (R's `np + 1`). */
  npar: number;
  /** Observed (non-missing) values. */
  nobs: number;
  /** sum(residuals²) / (nobs − np), R's `sigma2` as set in `ets()`. */
  sigma2: number;
  fitted: Float64Array;
  residuals: Float64Array;
  /** Objective evaluations used by the optimiser. */
  evaluations: number;
  /** The optimum in search coordinates (`EtsProblem` layout): a warm start for refits. */
  x: Float64Array;
}

/** One model's likelihood problem in search coordinates, ready for an optimiser. */
export interface EtsProblem {
  spec: EtsSpec;
  /** Leading coordinates that are smoothing parameters (alpha, u, v, phi as free). */
  nSmooth: number;
  /** Whether coordinate 0 is alpha (false when alpha is fixed). */
  alphaFree: boolean;
  /** Index of the first seasonal initial state (= x0.length when not seasonal). */
  seasonStart: number;
  /** Parameters counted by the information criteria (R's np + 1, sigma included). */
  npar: number;
  /** Observed values. */
  nobs: number;
  /** R's starting point (`initparam` + `initstate`). */
  x0: Float64Array;
  lower: Float64Array;
  upper: Float64Array;
  /** Initial simplex steps. */
  steps: Float64Array;
  /** R's `lik` (+Infinity outside bounds "both"). Allocation-free. */
  objective(x: Float64Array): number;
  /** The fitted model at `x`. */
  finish(x: Float64Array, evaluations: number): EtsFit;
}

/**
 * Set up `spec` for `y` (`y` may contain NaN but not at its start; `yFilled` is `y` with gaps
 * interpolated, used only for the initial states). Returns `null` where R's `etsmodel` returns
 * an infinite IC or fails (too many parameters for the data, no admissible start).
 */
export function buildProblem(
  y: Float64Array,
  yFilled: Float64Array,
  period: number,
  spec: EtsSpec,
  fixed: FixedParams,
  bounds0: Bounds,
): EtsProblem | null {
  const m = spec.season !== 'N' ? period : 1;
  const flags: ParamFlags = { hasTrend: spec.trend !== 'N', hasSeason: spec.season !== 'N', damped: spec.damped };
  const lower = bounds0.lower.slice() as Bounds['lower'];
  const upper = bounds0.upper.slice() as Bounds['upper'];
  // R's etsmodel adjusts the box for fixed parameters (including its beta -> lower[1] quirk)
  if (fixed.alpha !== undefined) {
    upper[1] = Math.min(fixed.alpha, upper[1]);
    upper[2] = Math.min(1 - fixed.alpha, upper[2]);
  }
  if (fixed.beta !== undefined) lower[0] = Math.max(fixed.beta, lower[0]);
  if (fixed.gamma !== undefined) upper[0] = Math.min(1 - fixed.gamma, upper[0]);
  const bounds: Bounds = { lower, upper };

  // initparam (bounds "both" takes R's non-admissible branch)
  const free = {
    alpha: fixed.alpha === undefined,
    beta: flags.hasTrend && fixed.beta === undefined,
    gamma: flags.hasSeason && fixed.gamma === undefined,
    phi: spec.damped && fixed.phi === undefined,
  };
  const start: number[] = [];
  const lo: number[] = [];
  const hi: number[] = [];
  let alpha = fixed.alpha ?? lower[0] + (0.2 * (upper[0] - lower[0])) / m;
  if (alpha > 1 || alpha < 0) alpha = lower[0] + 2e-3;
  if (free.alpha) start.push(alpha), lo.push(lower[0]), hi.push(upper[0]);
  let beta = 0;
  if (flags.hasTrend) {
    if (free.beta) {
      const ub = Math.min(upper[1], alpha);
      beta = lower[1] + 0.1 * (ub - lower[1]);
      if (beta < 0 || beta > alpha) beta = alpha - 1e-3;
      start.push(toUnit(beta, lower[1], Math.min(upper[1], alpha))), lo.push(0), hi.push(1);
    } else beta = fixed.beta as number;
  }
  let gamma = 0;
  if (flags.hasSeason) {
    if (free.gamma) {
      const ug = Math.min(upper[2], 1 - alpha);
      gamma = lower[2] + 0.05 * (ug - lower[2]);
      if (gamma < 0 || gamma > 1 - alpha) gamma = 1 - alpha - 1e-3;
      start.push(toUnit(gamma, lower[2], Math.min(upper[2], 1 - alpha))), lo.push(0), hi.push(1);
    } else gamma = fixed.gamma as number;
  }
  let phi = 1;
  if (spec.damped) {
    if (free.phi) {
      phi = lower[3] + 0.99 * (upper[3] - lower[3]);
      if (phi < 0 || phi > 1) phi = upper[3] - 1e-3;
      start.push(phi), lo.push(lower[3]), hi.push(upper[3]);
    } else phi = fixed.phi as number;
  }
  if (!checkParams(alpha, beta, gamma, phi, m, flags, free, bounds)) return null;

  let init: Float64Array;
  try {
    init = initState(yFilled, m, spec.trend, spec.season);
  } catch {
    return null;
  }
  // Search coordinates: alpha and phi as they are, but beta and gamma as fractions u, v in [0, 1]
  // of their usual ranges [lower, min(upper, alpha)] and [lower, min(upper, 1 - alpha)]. Same
  // feasible set as R, but the constraints beta <= alpha and gamma <= 1 - alpha become box bounds
  // the simplex can slide along instead of walls of +Inf it keeps bouncing off (R's NM often
  // stops early there).
  const nSmooth = start.length;
  const nstate = init.length;
  let nobs = 0;
  for (let i = 0; i < y.length; i++) if (y[i] === y[i]) nobs++;
  const np = nSmooth + nstate;
  const nFixed = (free.alpha ? 0 : 1) + (flags.hasTrend && !free.beta ? 1 : 0) + (flags.hasSeason && !free.gamma ? 1 : 0) + (spec.damped && !free.phi ? 1 : 0);
  if (np >= nobs - 1) return null;

  const hasSeason = flags.hasSeason;
  const seasMult = spec.season === 'M';
  const off = flags.hasTrend ? 2 : 1;
  const full = new Float64Array(nstate + (hasSeason ? 1 : 0));
  const ring = new Float64Array(Math.max(m, 1));
  let logSum = 0;
  for (let i = 0; i < y.length; i++) if (y[i] === y[i]) logSum += Math.log(Math.abs(y[i]));
  const gm = Math.exp(logSum / nobs); // geometric mean of |y|
  const k: Kernel = { m, error: code(spec.error), trend: code(spec.trend), season: code(spec.season), alpha, beta, gamma, phi, scale: spec.error === 'M' && gm > 0 && gm < Infinity ? gm : 1 };
  const likelihood = likelihoodFor(k.error, k.trend, k.season);
  const fillState = (x: ArrayLike<number>): boolean => {
    let sum = 0;
    for (let i = 0; i < nstate; i++) {
      const v = x[nSmooth + i];
      full[i] = v;
      if (i >= off) sum += v;
    }
    if (hasSeason) {
      full[nstate] = (seasMult ? m : 0) - sum;
      if (seasMult) for (let i = off; i <= nstate; i++) if (full[i] < 0) return false;
    }
    return true;
  };
  const setSmooth = (x: ArrayLike<number>): void => {
    let j = 0;
    if (free.alpha) k.alpha = x[j++];
    if (free.beta) k.beta = lower[1] + x[j++] * (Math.min(upper[1], k.alpha) - lower[1]);
    if (free.gamma) k.gamma = lower[2] + x[j++] * (Math.min(upper[2], 1 - k.alpha) - lower[2]);
    if (free.phi) k.phi = x[j++];
  };
  const objective = (x: Float64Array): number => {
    setSmooth(x);
    if (!checkParams(k.alpha, k.beta, k.gamma, k.phi, m, flags, free, bounds)) return Infinity;
    if (!fillState(x)) return Infinity;
    let lik = likelihood(y, full, k, ring);
    if (lik !== lik) return Infinity;
    if (lik < -1e10) lik = -1e10; // R: avoid perfect fits
    return lik;
  };

  const x0 = new Float64Array(np);
  for (let i = 0; i < nSmooth; i++) x0[i] = start[i];
  x0.set(init, nSmooth);
  const lowerAll = new Float64Array(np).fill(-Infinity);
  const upperAll = new Float64Array(np).fill(Infinity);
  const steps = new Float64Array(np);
  let scale = 0;
  for (let i = 0; i < y.length; i++) if (y[i] === y[i]) scale += Math.abs(y[i]) / nobs;
  for (let i = 0; i < nSmooth; i++) {
    lowerAll[i] = lo[i];
    upperAll[i] = hi[i];
    steps[i] = (hi[i] - lo[i]) * SMOOTH_STEP;
  }
  for (let i = 0; i < nstate; i++) {
    const v = init[i];
    const isGrowth = spec.trend === 'M' && i === 1;
    const isMultSeason = seasMult && i >= off;
    const floor = isGrowth || isMultSeason ? 0.01 : 0.01 * scale + 1e-8;
    steps[nSmooth + i] = Math.max(0.1 * Math.abs(v), floor);
  }

  const finish = (x: Float64Array, evaluations: number): EtsFit => {
    // final pass with outputs, at the optimum
    setSmooth(x);
    fillState(x);
    const n = y.length;
    const fitted = new Float64Array(n);
    const residuals = new Float64Array(n);
    const lastState = new Float64Array(full.length);
    const lik = Math.max(runEts(y, full, k, ring, { fitted, residuals, finalState: lastState }), -1e10);
    const npar = np + 1;
    const aic = informationCriterion(lik, npar, nobs, 'aic');
    const bic = informationCriterion(lik, npar, nobs, 'bic');
    const aicc = informationCriterion(lik, npar, nobs, 'aicc');
    let sse = 0;
    for (let i = 0; i < n; i++) if (residuals[i] === residuals[i]) sse += residuals[i] * residuals[i];
    return {
      spec,
      name: specName(spec),
      m,
      alpha: k.alpha,
      beta: k.beta,
      gamma: k.gamma,
      phi: k.phi,
      initState: Float64Array.from(full),
      lastState,
      lik,
      loglik: -0.5 * lik,
      aic,
      aicc,
      bic,
      npar,
      nobs,
      sigma2: sse / (nobs - np - nFixed), // R counts given smoothing parameters here too
      fitted,
      residuals,
      evaluations,
      x: Float64Array.from(x),
    };
  };
  return { spec, nSmooth, alphaFree: free.alpha, seasonStart: hasSeason ? nSmooth + off : np, npar: np + 1, nobs, x0, lower: lowerAll, upper: upperAll, steps, objective, finish };
}

/** Position of v in [lo, hi] as a fraction (0.5 if the range is empty). */
function toUnit(v: number, lo: number, hi: number): number {
  return hi > lo ? Math.min(1, Math.max(0, (v - lo) / (hi - lo))) : 0.5;
}

/**
 * First simplex step of each smoothing coordinate, as a share of its range. Large on purpose: the
 * likelihood is often bimodal in alpha (a slow-level and a random-walk-like mode); R reaches the
 * far mode only through its oversized simplex (0.1·max|par|, dominated by the level state).
 */
const SMOOTH_STEP = 0.4;

/** R's information criteria from `lik` (= −2 loglik): AIC, BIC, AICc with `npar` incl. sigma. */
export function informationCriterion(lik: number, npar: number, nobs: number, ic: 'aic' | 'aicc' | 'bic'): number {
  if (ic === 'bic') return lik + Math.log(nobs) * npar;
  const aic = lik + 2 * npar;
  return ic === 'aic' ? aic : aic + (2 * npar * (npar + 1)) / (nobs - npar - 1);
}
