/**
 * Parameter space of ETS, R `forecast` 8.x `bounds = "both"`: the "usual" box
 * (0 < beta < alpha < 1, 0 < gamma < 1 - alpha, 0.8 < phi < 0.98 by default) intersected with the
 * "admissible" (forecastability) region of Hyndman, Akram & Archibald (2008) / Hyndman et al. (2008)
 * ch. 10, as `EtsTargetFunction::check_params` and `admissible` in `etsTargetFunction.cpp`.
 *
 * Deviation, for speed and determinism: R finds the roots of the characteristic polynomial with
 * `cpolyroot` and requires max |root| <= 1 + 1e-10. We decide the same question without finding
 * roots: a Schur–Cohn recursion on the polynomial rescaled by (1 + 1e-10), which is exact in exact
 * arithmetic and costs O(m²) flops with no iteration.
 */

/** Which smoothing parameters are free (estimated) vs given. */
export interface ParamFlags {
  hasTrend: boolean;
  hasSeason: boolean;
  damped: boolean;
}

/** Box bounds on (alpha, beta, gamma, phi), R's `lower`/`upper`. */
export interface Bounds {
  lower: [number, number, number, number];
  upper: [number, number, number, number];
}

/** R's defaults: lower = c(1e-4, 1e-4, 1e-4, 0.8), upper = c(0.9999, 0.9999, 0.9999, 0.98). */
export const DEFAULT_BOUNDS: Bounds = {
  lower: [1e-4, 1e-4, 1e-4, 0.8],
  upper: [0.9999, 0.9999, 0.9999, 0.98],
};

/** Scratch for the Schur–Cohn recursion (degree ≤ 25 since m ≤ 24). */
const scratch = new Float64Array(32);
const scratch2 = new Float64Array(32);

/**
 * True if every root of the polynomial with ascending coefficients `c[0..deg]` has modulus
 * <= 1 + 1e-10 (R's criterion), via Schur–Cohn on p((1 + 1e-10) w).
 */
export function rootsInsideUnitCircle(c: Float64Array, deg: number): boolean {
  let a = scratch;
  let b = scratch2;
  const rho = 1 + 1e-10;
  let pow = 1;
  for (let k = 0; k <= deg; k++) {
    a[k] = c[k] * pow;
    pow *= rho;
  }
  let d = deg;
  while (d > 0 && a[d] === 0) d--; // a vanishing leading coefficient lowers the degree
  while (d > 0) {
    const lead = a[d];
    const c0 = a[0];
    if (!(Math.abs(c0) < Math.abs(lead))) return false;
    // (lead·p(z) − c0·p*(z)) / z, normalised by its leading coefficient lead² − c0²
    const norm = lead * lead - c0 * c0;
    for (let j = 0; j < d; j++) b[j] = (lead * a[j + 1] - c0 * a[d - 1 - j]) / norm;
    const t = a;
    a = b;
    b = t;
    d--;
  }
  return true;
}

const poly = new Float64Array(32);

/**
 * The admissible region (R's `admissible()`), with phi = 1 when not damped and beta = 0 when
 * there is no trend.
 */
export function admissible(alpha: number, beta: number, gamma: number, phi: number, m: number, f: ParamFlags): boolean {
  if (phi < 0 || phi > 1 + 1e-8) return false;
  if (!f.hasSeason) {
    if (alpha < 1 - 1 / phi || alpha > 1 + 1 / phi) return false;
    if (f.hasTrend && (beta < alpha * (phi - 1) || beta > (1 + phi) * (2 - alpha))) return false;
    return true;
  }
  if (m <= 1) return true;
  const b = f.hasTrend ? beta : 0;
  const d = 1 - 1 / phi - alpha;
  if (gamma < (d > 0 ? d : 0) || gamma > 1 + 1 / phi - alpha) return false;
  if (alpha < 1 - 1 / phi - (gamma * (1 - m + phi + phi * m)) / (2 * phi * m)) return false;
  if (b < -(1 - phi) * (gamma / m + alpha)) return false;
  // characteristic polynomial z^{m+1} + (a+b-phi) z^m + (a+b-a·phi) z^{m-1..2} + (a+b-a·phi+g-1) z + phi(1-a-g)
  const deg = m + 1;
  poly[deg] = 1;
  poly[m] = alpha + b - phi;
  for (let k = 2; k <= m - 1; k++) poly[k] = alpha + b - alpha * phi;
  poly[1] = alpha + b - alpha * phi + gamma - 1;
  poly[0] = phi * (1 - alpha - gamma);
  return rootsInsideUnitCircle(poly, deg);
}

/**
 * R's `check.param` / `check_params` with `bounds = "both"`: usual box (only for estimated
 * parameters, as R) and then the admissible region.
 */
export function checkParams(
  alpha: number,
  beta: number,
  gamma: number,
  phi: number,
  m: number,
  f: ParamFlags,
  free: { alpha: boolean; beta: boolean; gamma: boolean; phi: boolean },
  bounds: Bounds,
): boolean {
  const { lower, upper } = bounds;
  if (free.alpha && (alpha < lower[0] || alpha > upper[0])) return false;
  if (free.beta && (beta < lower[1] || beta > alpha || beta > upper[1])) return false;
  if (free.phi && (phi < lower[3] || phi > upper[3])) return false;
  if (free.gamma && (gamma < lower[2] || gamma > 1 - alpha || gamma > upper[2])) return false;
  return admissible(alpha, beta, gamma, phi, m, f);
}
