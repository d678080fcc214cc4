/**
 * Analytic forecast variances for ETS classes 1 and 2 (Hyndman, Koehler, Ord & Snyder 2008,
 * ch. 6, Tables 6.1–6.2; R `forecast:::class1` and `class2`):
 * - class 1 (additive error, additive/no trend and season): v_h = σ²(1 + Σ_{j<h} c_j²),
 *   c_j = H F^{j-1} G;
 * - class 2 (multiplicative error, same components): θ_1 = μ_1², θ_h = μ_h² + σ² Σ_{j<h} c_j² θ_{h-j},
 *   v_h = (1 + σ²) θ_h − μ_h².
 */

/**
 * c_j = H F^{j-1} G for j = 1..h-1 (index j-1 in the result), in R's state layout
 * `[l, b?, s_1..s_m]`, computed by applying F to the vector G (O(h·p), no matrices).
 */
export function cCoefficients(h: number, hasTrend: boolean, m: number, hasSeason: boolean,
  alpha: number, beta: number, gamma: number, phi: number): Float64Array {
  const p = 1 + (hasTrend ? 1 : 0) + (hasSeason ? m : 0);
  const off = hasTrend ? 2 : 1;
  let v = new Float64Array(p);
  let w = new Float64Array(p);
  v[0] = alpha;
  if (hasTrend) v[1] = beta;
  if (hasSeason) v[off] = gamma;
  const c = new Float64Array(Math.max(h - 1, 0));
  for (let j = 0; j < h - 1; j++) {
    // H v, H = [1, phi?, 0, ..., 0, 1]
    let hv = v[0];
    if (hasTrend) hv += phi * v[1];
    if (hasSeason) hv += v[p - 1];
    c[j] = hv;
    // v <- F v: l' = l + phi b; b' = phi b; s_1' = s_m; s_{i+1}' = s_i
    w[0] = v[0] + (hasTrend ? phi * v[1] : 0);
    if (hasTrend) w[1] = phi * v[1];
    if (hasSeason) {
      w[off] = v[p - 1];
      for (let i = off + 1; i < p; i++) w[i] = v[i - 1];
    }
    const t = v;
    v = w;
    w = t;
  }
  return c;
}

/** Class 1 variances σ²(1 + cumsum c_j²), h values. */
export function class1Variance(c: Float64Array, h: number, sigma2: number): Float64Array {
  const v = new Float64Array(h);
  let cum = 0;
  v[0] = sigma2;
  for (let i = 1; i < h; i++) {
    cum += c[i - 1] * c[i - 1];
    v[i] = sigma2 * (1 + cum);
  }
  return v;
}

/** Class 2 variances from the point forecasts `mu` (R's `class2`). */
export function class2Variance(c: Float64Array, mu: Float64Array, h: number, sigma2: number): Float64Array {
  const theta = new Float64Array(h);
  const v = new Float64Array(h);
  theta[0] = mu[0] * mu[0];
  for (let j = 1; j < h; j++) {
    let s = 0;
    for (let i = 0; i < j; i++) s += c[i] * c[i] * theta[j - 1 - i];
    theta[j] = mu[j] * mu[j] + sigma2 * s;
  }
  for (let j = 0; j < h; j++) v[j] = Math.max((1 + sigma2) * theta[j] - mu[j] * mu[j], 0);
  return v;
}
