/**
 * Future sample paths from a fitted ETS model, as R `simulate.ets(future = TRUE)` /
 * `etssimulate` in `etscalc.c`: Gaussian innovations with variance σ² (truncated at −1 for
 * multiplicative error, as R), pushed through the state equations from the last state.
 * Randomness only from the seeded `Rng`.
 */
import { Rng } from '../../rng';
import { ADD, HUGEN, NONE, TOL } from './spec';


/** What the simulator needs from a fit. */
export interface SimModel {
  lastState: Float64Array;
  m: number;
  error: number;
  trend: number;
  season: number;
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  sigma2: number;
}

/**
 * `n` paths of length `h`, written row-major into one Float64Array (path i at [i·h, (i+1)·h)).
 * Innovations are drawn path by path, step by step, so a path depends only on the seed and n.
 */
export function simulatePaths(model: SimModel, h: number, n: number, seed: number): Float64Array {
  const out = new Float64Array(n * h);
  const rng = new Rng(seed);
  const { error, trend, season, alpha, beta, gamma, phi } = model;
  const m = season > NONE ? model.m : 1;
  const x = model.lastState;
  const off = trend > NONE ? 2 : 1;
  const sd = Math.sqrt(model.sigma2);
  const ring = new Float64Array(m);
  const phiIsOne = Math.abs(phi - 1) < TOL;
  const betaOverAlpha = beta / alpha;
  for (let path = 0; path < n; path++) {
    let l = x[0];
    let b = trend > NONE ? x[1] : 0;
    if (season > NONE) for (let j = 0; j < m; j++) ring[j] = x[off + m - 1 - j];
    let idx = 0;
    for (let i = 0; i < h; i++) {
      let q: number;
      let phib: number;
      if (trend === NONE) {
        q = l;
        phib = 0;
      } else if (trend === ADD) {
        phib = phi * b;
        q = l + phib;
      } else {
        phib = b < 0 ? NaN : phiIsOne ? b : Math.pow(b, phi);
        q = l * phib;
      }
      const sOld = season > NONE ? ring[idx] : 0;
      const f = season === NONE ? q : season === ADD ? q + sOld : q * sOld;
      let e = sd * rng.normal();
      let y: number;
      if (error === ADD) y = f + e;
      else {
        if (e < -1) e = -1;
        y = f * (1 + e);
      }
      out[path * h + i] = y;
      let p: number;
      if (season === NONE) p = y;
      else if (season === ADD) p = y - sOld;
      else p = Math.abs(sOld) < TOL ? HUGEN : y / sOld;
      const oldl = l;
      l = q + alpha * (p - q);
      if (trend > NONE) {
        const r = trend === ADD ? l - oldl : Math.abs(oldl) < TOL ? HUGEN : l / oldl;
        b = phib + betaOverAlpha * (r - phib);
      }
      if (season > NONE) {
        const t = season === ADD ? y - q : Math.abs(q) < TOL ? HUGEN : y / q;
        ring[idx] = sOld + gamma * (t - sOld);
        if (++idx === m) idx = 0;
      }
    }
  }
  return out;
}

