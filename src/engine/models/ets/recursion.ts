/**
 * The ETS state recursions: one-step forecasts, state updates and the likelihood, following R
 * `forecast`'s `etscalc.c` (`etscalc_internal`, `update`, `forecast`) line by line, so the
 * likelihood matches R's `lik` exactly: `n·log(SSE)` for additive error, plus `2·Σ log|ŷ_t|` for
 * multiplicative error (the concentrated Gaussian likelihood of Hyndman et al. 2008, §5.2).
 *
 * State layout (as R): `[l, b?, s_1, ..., s_m]` where `s_1` is the newest seasonal state and
 * `s_m` the one used for the next observation. Internally the seasonal states live in a ring
 * buffer instead of R's per-step `memcpy` shift (same numbers, O(1) per step).
 *
 * Missing values (`NaN`): R's `ets` cannot take them (it cuts to the longest contiguous
 * stretch). Here a missing observation is a predict-only step: the state moves on with the
 * error set to zero (exactly what `etscalc.c` does for `NA` inside `update`), and the step
 * adds nothing to the likelihood; `n` in `n·log(SSE)` counts the observed values only.
 */
import { ADD, HUGEN, MULT, NONE, TOL } from './spec';


/** Everything the kernel needs besides the data and the initial state. */
export interface Kernel {
  m: number;
  error: number;
  trend: number;
  season: number;
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  /**
   * Typical size of the one-step forecasts, e.g. the geometric mean of |y| (default 1). Only the
   * multiplicative-error likelihood uses it: Σ log|f_t| is taken as n·log(scale) + log Π |f_t|/scale,
   * one logarithm per evaluation (see `runEts`).
   */
  scale?: number;
}

/** Optional outputs of `runEts` (all preallocated by the caller, length n except `finalState`). */
export interface KernelOutputs {
  fitted?: Float64Array;
  residuals?: Float64Array;
  /** Final state in R's layout (length 1 + trend + m·season). */
  finalState?: Float64Array;
}

/**
 * Run the filter over `y` from initial state `x0` (R layout, full m seasonal states), using
 * `ring` (length >= m) as scratch. Returns R's `lik`, or `NaN` when a multiplicative trend goes
 * negative (R's `NA`); callers map non-finite values to +Infinity. Allocation-free.
 */
export function runEts(
  y: Float64Array,
  x0: ArrayLike<number>,
  k: Kernel,
  ring: Float64Array,
  out?: KernelOutputs,
  exact = false,
): number {
  const n = y.length;
  const { error, trend, season, alpha, beta, gamma, phi } = k;
  const m = season > NONE ? k.m : 1;
  let l = x0[0];
  let b = trend > NONE ? x0[1] : 0;
  const off = trend > NONE ? 2 : 1;
  if (season > NONE) for (let j = 0; j < m; j++) ring[j] = x0[off + m - 1 - j];
  const phiIsOne = Math.abs(phi - 1) < TOL;
  const betaOverAlpha = beta / alpha;
  const fitted = out?.fitted;
  const residuals = out?.residuals;
  const mult = error === MULT;
  const scale = k.scale ?? 1;
  const invScale = 1 / scale;
  let sse = 0;
  let sumLog = 0;
  // Running product of |f|/scale for Σ log|f| (R takes one log per step). Why not R's way: a log
  // per step, or even a range check per step, costs about as much as the rest of the step. So the
  // product runs unchecked; if it leaves (1e-300, 1e300) the pass is redone `exact`ly, folding
  // the product into sumLog whenever it leaves (1e-100, 1e100).
  let prod = 1;
  let nobs = 0;
  let idx = 0;
  for (let i = 0; i < n; i++) {
    // one-step forecast from the previous state
    let q: number; // level part of the forecast: l + phi b, or l b^phi
    let phib: number;
    if (trend === NONE) {
      q = l;
      phib = 0;
    } else if (trend === ADD) {
      phib = phi * b;
      q = l + phib;
    } else {
      if (b < 0) return NaN; // R: forecast() gives NA, lik becomes NA
      phib = phiIsOne ? b : Math.pow(b, phi);
      q = l * phib;
    }
    const sOld = season > NONE ? ring[idx] : 0;
    const f = season === NONE ? q : season === ADD ? q + sOld : q * sOld;
    const yi = y[i];
    const observed = yi === yi;
    if (fitted) fitted[i] = f;
    if (observed) {
      const e = error === ADD ? yi - f : (yi - f) / f;
      if (residuals) residuals[i] = e;
      sse += e * e;
      if (mult) {
        if (exact) {
          prod *= f < 0 ? -f : f;
          if (prod > 1e100 || prod < 1e-100) {
            sumLog += Math.log(prod);
            prod = 1;
          }
        } else prod *= (f < 0 ? -f : f) * invScale;
      }
      nobs++;
    } else if (residuals) residuals[i] = NaN;
    // state update (R's update(); a missing y keeps p = q and t = old season)
    let p: number;
    if (!observed) p = q;
    else if (season === NONE) p = yi;
    else if (season === ADD) p = yi - sOld;
    else p = Math.abs(sOld) < TOL ? HUGEN : yi / sOld;
    // Why not R's formulas verbatim: R updates b from r = l_new - l_old, which puts the slope
    // behind the new level in one long chain of dependent operations per step. With d = p - q,
    // R's l_new = q + alpha d and, for an additive trend, its
    // b_new = phib + (beta/alpha)(l_new - l_old - phib) = phib + beta d exactly (q = l_old + phib):
    // the same recursion, rounded differently, with a shorter chain. The fast kernels of
    // `likelihood.ts` use this form too and must match this loop bit for bit.
    const d = p - q;
    const oldl = l;
    l = q + alpha * d;
    if (trend === ADD) b = phib + beta * d;
    else if (trend === MULT) {
      const r = Math.abs(oldl) < TOL ? HUGEN : l / oldl;
      b = phib + betaOverAlpha * (r - phib);
    }
    if (season > NONE) {
      let t: number;
      if (!observed) t = sOld;
      else if (season === ADD) t = yi - q;
      else t = Math.abs(q) < TOL ? HUGEN : yi / q;
      ring[idx] = sOld + gamma * (t - sOld);
      if (++idx === m) idx = 0;
    }
  }
  if (out?.finalState) {
    const fs = out.finalState;
    fs[0] = l;
    if (trend > NONE) fs[1] = b;
    if (season > NONE) {
      // newest seasonal state is the one written last, at idx - 1
      for (let j = 0; j < m; j++) fs[off + j] = ring[(((idx - 1 - j) % m) + m) % m];
    }
  }
  const lik = nobs * Math.log(sse);
  if (!mult) return lik;
  if (exact) return lik + 2 * (sumLog + Math.log(prod));
  return prod > 1e-300 && prod < 1e300 ? lik + 2 * (Math.log(prod) + nobs * Math.log(scale)) : runEts(y, x0, k, ring, out, true);
}

/**
 * Point forecasts (conditional means for linear models, R's `etsforecast`) from a state in R
 * layout, `h` steps. A multiplicative trend with negative growth gives `NaN`, as R's NA.
 */
export function pointForecast(x: ArrayLike<number>, m: number, trend: number, season: number, phi: number, h: number): Float64Array {
  const f = new Float64Array(h);
  const l = x[0];
  const b = trend > NONE ? x[1] : 0;
  const off = trend > NONE ? 2 : 1;
  const mm = season > NONE ? m : 1;
  let phistar = phi;
  let phipow = phi;
  let j = mm - 1;
  for (let i = 0; i < h; i++) {
    let v: number;
    if (trend === NONE) v = l;
    else if (trend === ADD) v = l + phistar * b;
    else v = b < 0 ? NaN : l * Math.pow(b, phistar);
    if (season === ADD) v += x[off + j];
    else if (season === MULT) v *= x[off + j];
    f[i] = v;
    if (--j < 0) j = mm - 1;
    if (Math.abs(phi - 1) < TOL) phistar += 1;
    else {
      phipow *= phi;
      phistar += phipow;
    }
  }
  return f;
}
