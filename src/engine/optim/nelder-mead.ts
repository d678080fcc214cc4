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

/**
 * Minimise `f` from `x0`. Non-finite objective values are treated as +Infinity.
 * `f` is called with scratch buffers that are reused between calls (why: one optimiser run makes
 * hundreds of trials and allocating each showed up as garbage-collection time in the ETS fits), so
 * it must not keep a reference to its argument.
 */
export function nelderMead(
  f: (x: Float64Array) => number,
  x0: ArrayLike<number>,
  options: NelderMeadOptions = {},
): NelderMeadResult {
  const n = x0.length;
  const lower = new Float64Array(n);
  const upper = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    lower[i] = options.lower?.[i] ?? -Infinity;
    upper[i] = options.upper?.[i] ?? Infinity;
  }
  const maxEval = options.maxEvaluations ?? 200 * n + 200;
  const tol = options.tolerance ?? 1e-8;
  const alpha = 1;
  const gamma = n > 2 ? 1 + 2 / n : 2;
  const rho = n > 2 ? 0.75 - 1 / (2 * n) : 0.5;
  const sigma = n > 2 ? 1 - 1 / n : 0.5;

  let evaluations = 0;
  const clamp = (x: Float64Array): void => {
    for (let i = 0; i < n; i++) x[i] = Math.min(upper[i], Math.max(lower[i], x[i]));
  };
  const evaluate = (x: Float64Array): number => {
    evaluations++;
    const v = f(x);
    return Number.isFinite(v) ? v : Infinity;
  };

  // vertex k is simplex[k*n .. k*n+n); `vertex` copies one out for evaluation
  const simplex = new Float64Array((n + 1) * n);
  const values = new Float64Array(n + 1);
  const vertex = new Float64Array(n);
  const load = (k: number): Float64Array => {
    for (let i = 0; i < n; i++) vertex[i] = simplex[k * n + i];
    return vertex;
  };
  const store = (k: number, x: Float64Array, v: number): void => {
    simplex.set(x, k * n);
    values[k] = v;
  };
  for (let i = 0; i < n; i++) vertex[i] = x0[i];
  clamp(vertex);
  const start = Float64Array.from(vertex);
  store(0, vertex, evaluate(vertex));
  for (let i = 0; i < n; i++) {
    vertex.set(start);
    let h = options.step?.[i] ?? (Math.abs(start[i]) > 1e-4 ? 0.1 * Math.abs(start[i]) : 0.05);
    if (vertex[i] + h > upper[i]) h = -h; // step inward when the start sits on an upper bound
    vertex[i] += h;
    clamp(vertex);
    if (vertex[i] === start[i]) vertex[i] = Math.max(lower[i], start[i] - Math.abs(h));
    store(i + 1, vertex, evaluate(vertex));
  }

  const order = new Int32Array(n + 1);
  for (let k = 0; k <= n; k++) order[k] = k;
  const centroid = new Float64Array(n);
  const xr = new Float64Array(n);
  const xe = new Float64Array(n);
  const xc = new Float64Array(n);
  /** out = from + coef (towards − from), clamped; `towards` is vertex `k` or the point `p`. */
  const trial = (out: Float64Array, from: Float64Array, k: number, p: Float64Array | null, coef: number): Float64Array => {
    for (let i = 0; i < n; i++) out[i] = from[i] + coef * ((p ? p[i] : simplex[k * n + i]) - from[i]);
    clamp(out);
    return out;
  };

  let converged = false;
  while (evaluations < maxEval) {
    sortOrder(order, values);
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
      const base = order[k] * n;
      for (let i = 0; i < n; i++) centroid[i] += simplex[base + i] / n;
    }
    // reflection: centroid + alpha (centroid - worst)
    const fr = evaluate(trial(xr, centroid, worst, null, -alpha));
    if (fr < values[best]) {
      const fe = evaluate(trial(xe, centroid, worst, null, -alpha * gamma));
      if (fe < fr) store(worst, xe, fe);
      else store(worst, xr, fr);
      continue;
    }
    if (fr < values[secondWorst]) {
      store(worst, xr, fr);
      continue;
    }
    // contraction (outside if the reflection improved on the worst, else inside)
    const outside = fr < values[worst];
    const fc = evaluate(outside ? trial(xc, centroid, 0, xr, rho) : trial(xc, centroid, worst, null, rho));
    if (fc < Math.min(fr, values[worst])) {
      store(worst, xc, fc);
      continue;
    }
    // shrink towards the best
    const bestPoint = load(best); // `vertex` is not written again during the shrink
    for (let k = 1; k <= n; k++) {
      const idx = order[k];
      trial(xc, bestPoint, idx, null, sigma);
      store(idx, xc, evaluate(xc));
    }
  }
  let bestIdx = 0;
  for (let k = 1; k <= n; k++) if (values[k] < values[bestIdx]) bestIdx = k;
  return { x: Float64Array.from(load(bestIdx)), value: values[bestIdx], evaluations, converged };
}

/** Sort vertex indices by value, ties (and +Infinity) by index: insertion sort, n is small. */
function sortOrder(order: Int32Array, values: Float64Array): void {
  for (let a = 1; a < order.length; a++) {
    const k = order[a];
    const v = values[k];
    let b = a - 1;
    while (b >= 0 && (values[order[b]] > v || (values[order[b]] === v && order[b] > k))) {
      order[b + 1] = order[b];
      b--;
    }
    order[b + 1] = k;
  }
}
