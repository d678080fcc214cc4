/**
 * Variable-metric (BFGS) minimiser with central-difference gradients, following
 * R's `optim(method = "BFGS")` (Nash 1990, algorithm 21, R's `vmmin`): same
 * line search (backtracking by 0.2, Armijo 1e-4), same relative tolerance and
 * iteration limit, gradients with step `ndeps` = 1e-3 on the scaled parameters.
 * Following R's choices matters because `auto.arima` compares fits whose optima
 * R itself found this way.
 */

/** Options mirroring `optim`'s control list. */
export interface BfgsOptions {
  /** Parameter scaling (R's `parscale`), default 1. The optimiser works on par / parscale. */
  parscale?: ArrayLike<number>;
  /** Maximum iterations (R default 100). */
  maxit?: number;
  /** Relative convergence tolerance (R default sqrt(machine eps) ≈ 1.49e-8). */
  reltol?: number;
}

/** Result of `bfgs`. */
export interface BfgsResult {
  /** Minimiser in original units. */
  par: Float64Array;
  value: number;
  /** 0 converged, 1 iteration limit, 2 non-finite gradient. */
  code: number;
  evaluations: number;
}

const NDEPS = 1e-3;

/** Central-difference gradient of f at x (original units) w.r.t. the scaled parameters. */
function gradient(f: (x: Float64Array) => number, x: Float64Array, scale: Float64Array, g: Float64Array): boolean {
  for (let i = 0; i < x.length; i++) {
    const xi = x[i];
    x[i] = xi + NDEPS * scale[i];
    const v1 = f(x);
    x[i] = xi - NDEPS * scale[i];
    const v2 = f(x);
    x[i] = xi;
    g[i] = (v1 - v2) / (2 * NDEPS);
    if (!Number.isFinite(g[i])) return false;
  }
  return true;
}

/** Minimise f from x0. `f` must not keep a reference to its argument. */
export function bfgs(f: (x: Float64Array) => number, x0: ArrayLike<number>, options: BfgsOptions = {}): BfgsResult {
  const n = x0.length;
  const scale = Float64Array.from({ length: n }, (_, i) => options.parscale?.[i] ?? 1);
  const maxit = options.maxit ?? 100;
  const reltol = options.reltol ?? 1.4901161193847656e-8;
  let evaluations = 0;
  const work = new Float64Array(n);
  // fs works on scaled parameters b
  const fs = (b: Float64Array): number => {
    for (let i = 0; i < n; i++) work[i] = b[i] * scale[i];
    evaluations++;
    return f(work);
  };
  const b = Float64Array.from({ length: n }, (_, i) => x0[i] / scale[i]);
  if (n === 0) return { par: new Float64Array(0), value: f(new Float64Array(0)), code: 0, evaluations: 1 };
  let fval = fs(b);
  if (!Number.isFinite(fval)) return { par: Float64Array.from(x0), value: Infinity, code: 2, evaluations };
  let Fmin = fval;
  const g = new Float64Array(n);
  const gradS = (bb: Float64Array): boolean => {
    for (let i = 0; i < n; i++) work[i] = bb[i] * scale[i];
    const x = Float64Array.from(work);
    const ok = gradient(f, x, scale, g);
    evaluations += 2 * n;
    return ok;
  };
  if (!gradS(b)) return { par: Float64Array.from(x0), value: Fmin, code: 2, evaluations };
  const B = new Float64Array(n * n);
  const t = new Float64Array(n);
  const X = new Float64Array(n);
  const c = new Float64Array(n);
  const bestB = Float64Array.from(b);
  let iter = 1;
  let gradcount = 1;
  let ilast = gradcount;
  let count = 0;
  let code = 1;
  const stepredn = 0.2;
  const acctol = 0.0001;
  const reltest = 10.0;
  for (;;) {
    if (ilast === gradcount) {
      B.fill(0);
      for (let i = 0; i < n; i++) B[i * n + i] = 1;
    }
    for (let i = 0; i < n; i++) {
      X[i] = b[i];
      c[i] = g[i];
    }
    let gradproj = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s -= B[i * n + j] * g[j];
      t[i] = s;
      gradproj += s * g[i];
    }
    if (gradproj < 0) {
      let steplength = 1.0;
      let accpoint = false;
      do {
        count = 0;
        for (let i = 0; i < n; i++) {
          b[i] = X[i] + steplength * t[i];
          if (reltest + X[i] === reltest + b[i]) count++;
        }
        if (count < n) {
          fval = fs(b);
          accpoint = Number.isFinite(fval) && fval <= Fmin + gradproj * steplength * acctol;
          if (!accpoint) steplength *= stepredn;
        }
      } while (!(count === n || accpoint));
      const enough = Math.abs(fval - Fmin) > reltol * (Math.abs(Fmin) + reltol);
      if (!enough) {
        count = n;
        if (fval < Fmin) bestB.set(b);
        Fmin = Math.min(Fmin, fval);
      }
      if (count < n) {
        Fmin = fval;
        bestB.set(b);
        if (!gradS(b)) return { par: Float64Array.from(b, (v, i) => v * scale[i]), value: Fmin, code: 2, evaluations };
        gradcount++;
        iter++;
        let D1 = 0;
        for (let i = 0; i < n; i++) {
          t[i] *= steplength;
          c[i] = g[i] - c[i];
          D1 += t[i] * c[i];
        }
        if (D1 > 0) {
          let D2 = 0;
          for (let i = 0; i < n; i++) {
            let s = 0;
            for (let j = 0; j < n; j++) s += B[i * n + j] * c[j];
            X[i] = s;
            D2 += s * c[i];
          }
          D2 = 1.0 + D2 / D1;
          for (let i = 0; i < n; i++)
            for (let j = 0; j < n; j++) B[i * n + j] += (D2 * t[i] * t[j] - X[i] * t[j] - t[i] * X[j]) / D1;
        } else {
          ilast = gradcount;
        }
      } else if (ilast < gradcount) {
        count = 0;
        ilast = gradcount;
      }
    } else {
      count = 0;
      if (ilast === gradcount) count = n;
      else ilast = gradcount;
    }
    if (iter >= maxit) break;
    if (gradcount - ilast > 2 * n) ilast = gradcount;
    if (count === n && ilast === gradcount) {
      code = 0;
      break;
    }
  }
  const par = new Float64Array(n);
  for (let i = 0; i < n; i++) par[i] = bestB[i] * scale[i];
  return { par, value: Fmin, code, evaluations };
}

/**
 * Numerical Hessian in original units (R's `optimhess`: central differences of
 * central-difference gradients, step 1e-3 × parscale). Written as the equivalent
 * four-point formula on function values and computed for j ≤ i only, which halves
 * the evaluations; R symmetrises the same quantity. Used only to reject fits whose
 * coefficient variances would be undefined, as forecast's `checkarima` does.
 */
export function hessian(f: (x: Float64Array) => number, x0: ArrayLike<number>, parscale?: ArrayLike<number>): Float64Array {
  const n = x0.length;
  const h = Float64Array.from({ length: n }, (_, i) => NDEPS * (parscale?.[i] ?? 1));
  const H = new Float64Array(n * n);
  const x = Float64Array.from(x0);
  const f0 = f(x);
  for (let i = 0; i < n; i++) {
    const xi = x[i];
    x[i] = xi + 2 * h[i];
    const fp = f(x);
    x[i] = xi - 2 * h[i];
    const fm = f(x);
    x[i] = xi;
    H[i * n + i] = (fp - 2 * f0 + fm) / (4 * h[i] * h[i]);
    for (let j = 0; j < i; j++) {
      const xj = x[j];
      let s = 0;
      for (const [si, sj] of [[1, 1], [1, -1], [-1, 1], [-1, -1]]) {
        x[i] = xi + si * h[i];
        x[j] = xj + sj * h[j];
        s += si * sj * f(x);
      }
      x[i] = xi;
      x[j] = xj;
      H[i * n + j] = H[j * n + i] = s / (4 * h[i] * h[j]);
    }
  }
  return H;
}
