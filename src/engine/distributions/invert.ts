/** Shared by steps defined by their quantile function. */

/** Lowest and highest probability a quantile function is evaluated at when inverted. */
const P_MIN = 1e-12;

/**
 * The cdf at `x` of a law given by its (non-decreasing) quantile function: the inverse of
 * `quantile` by bisection on p (60 halvings: exact to double precision); 0 below the
 * `P_MIN` quantile, 1 from the 1 − `P_MIN` one.
 */
export function cdfByBisection(quantile: (p: number) => number, x: number): number {
  let lo = P_MIN;
  let hi = 1 - P_MIN;
  if (x < quantile(lo)) return 0;
  if (x >= quantile(hi)) return 1;
  for (let k = 0; k < 60; k++) {
    const mid = 0.5 * (lo + hi);
    if (quantile(mid) <= x) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}
