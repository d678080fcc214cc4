/**
 * Golden-section search for the minimum of a function of one variable that is unimodal on
 * [lo, hi] (convex, say): each step keeps the part of the bracket holding the lower of two
 * interior values, shrinking it by the golden ratio, and reuses one of them.
 */

/** The midpoint of the bracket left after `steps` shrinkings of [lo, hi] (its width is 0.618^steps of the first). */
export function goldenSectionMin(f: (x: number) => number, lo: number, hi: number, steps = 40): number {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - ratio * (hi - lo);
  let x2 = lo + ratio * (hi - lo);
  let f1 = f(x1);
  let f2 = f(x2);
  for (let i = 0; i < steps; i++) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - ratio * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + ratio * (hi - lo);
      f2 = f(x2);
    }
  }
  return (lo + hi) / 2;
}
