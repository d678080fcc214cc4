/**
 * Bounded Nelder–Mead simplex minimiser (Nelder & Mead 1965; adaptive coefficients
 * of Gao & Han 2012 in higher dimensions). Bounds are enforced by projecting every
 * trial point onto the box, so the objective is only ever evaluated inside it.
 * Deterministic: no randomness, fixed iteration order.
 */

export interface NelderMeadOptions {
  /** Lower bounds per coordinate (default -Infinity). */
  lower?: ArrayLike<number>;
  /** Upper bounds per coordinate (default +Infinity). */
  upper?: ArrayLike<number>;
  /** Initial simplex step per coordinate (default 10% of the value, or 0.05 near zero). */
  step?: ArrayLike<number>;
  /** Maximum objective evaluations (default 200·n + 200). */
  maxEvaluations?: number;
  /** Stop when the spread of simplex values falls below this (default 1e-8, relative). */
  tolerance?: number;
}

export interface NelderMeadResult {
  /** Best point found. */
  x: Float64Array;
  /** Objective value there. */
  value: number;
  /** Objective evaluations used. */
  evaluations: number;
  /** True if the tolerance was met before the evaluation limit. */
  converged: boolean;
}

/** Minimise `f` from `x0`. Non-finite objective values are treated as +Infinity. */
export function nelderMead(
  f: (x: Float64Array) => number,
  x0: ArrayLike<number>,
  options: NelderMeadOptions = {},
): NelderMeadResult {
  const n = x0.length;
  const lower = Float64Array.from({ length: n }, (_, i) => options.lower?.[i] ?? -Infinity);
  const upper = Float64Array.from({ length: n }, (_, i) => options.upper?.[i] ?? Infinity);
  const maxEval = options.maxEvaluations ?? 200 * n + 200;
  const tol = options.tolerance ?? 1e-8;
  const alpha = 1;
  const gamma = n > 2 ? 1 + 2 / n : 2;
  const rho = n > 2 ? 0.75 - 1 / (2 * n) : 0.5;
  const sigma = n > 2 ? 1 - 1 / n : 0.5;

  let evaluations = 0;
  const clamp = (x: Float64Array): Float64Array => {
    for (let i = 0; i < n; i++) x[i] = Math.min(upper[i], Math.max(lower[i], x[i]));
    return x;
  };
  const evaluate = (x: Float64Array): number => {
    evaluations++;
    const v = f(x);
    return Number.isFinite(v) ? v : Infinity;
  };

  const simplex: Float64Array[] = [];
  const values: number[] = [];
  const start = clamp(Float64Array.from(x0));
  simplex.push(start);
  values.push(evaluate(start));
  for (let i = 0; i < n; i++) {
    const p = Float64Array.from(start);
    let h = options.step?.[i] ?? (Math.abs(start[i]) > 1e-4 ? 0.1 * Math.abs(start[i]) : 0.05);
    if (p[i] + h > upper[i]) h = -h; // step inward when the start sits on an upper bound
    p[i] += h;
    clamp(p);
    if (p[i] === start[i]) p[i] = Math.max(lower[i], start[i] - Math.abs(h));
    simplex.push(p);
    values.push(evaluate(p));
  }

  const order = Array.from({ length: n + 1 }, (_, i) => i);
  const centroid = new Float64Array(n);
  const trial = (from: Float64Array, towards: Float64Array, coef: number): Float64Array => {
    const p = new Float64Array(n);
    for (let i = 0; i < n; i++) p[i] = from[i] + coef * (towards[i] - from[i]);
    return clamp(p);
  };

  let converged = false;
  while (evaluations < maxEval) {
    order.sort((a, b) => values[a] - values[b] || a - b);
    const best = order[0];
    const worst = order[n];
    const secondWorst = order[n - 1];
    const spread = Math.abs(values[worst] - values[best]);
    if (spread <= tol * (Math.abs(values[best]) + tol) || (values[best] === Infinity && evaluations > 10 * n)) {
      converged = Number.isFinite(values[best]);
      break;
    }
    centroid.fill(0);
    for (let k = 0; k < n; k++) {
      const p = simplex[order[k]];
      for (let i = 0; i < n; i++) centroid[i] += p[i] / n;
    }
    // reflection: centroid + alpha (centroid - worst)
    const xr = trial(centroid, simplex[worst], -alpha);
    const fr = evaluate(xr);
    if (fr < values[best]) {
      const xe = trial(centroid, simplex[worst], -alpha * gamma);
      const fe = evaluate(xe);
      if (fe < fr) {
        simplex[worst] = xe;
        values[worst] = fe;
      } else {
        simplex[worst] = xr;
        values[worst] = fr;
      }
      continue;
    }
    if (fr < values[secondWorst]) {
      simplex[worst] = xr;
      values[worst] = fr;
      continue;
    }
    // contraction (outside if the reflection improved on the worst, else inside)
    const outside = fr < values[worst];
    const xc = outside ? trial(centroid, xr, rho) : trial(centroid, simplex[worst], rho);
    const fc = evaluate(xc);
    if (fc < Math.min(fr, values[worst])) {
      simplex[worst] = xc;
      values[worst] = fc;
      continue;
    }
    // shrink towards the best
    for (let k = 1; k <= n; k++) {
      const idx = order[k];
      simplex[idx] = trial(simplex[best], simplex[idx], sigma);
      values[idx] = evaluate(simplex[idx]);
    }
  }
  let bestIdx = 0;
  for (let k = 1; k <= n; k++) if (values[k] < values[bestIdx]) bestIdx = k;
  return { x: simplex[bestIdx], value: values[bestIdx], evaluations, converged };
}
