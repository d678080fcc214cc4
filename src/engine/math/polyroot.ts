/**
 * Complex roots of a real polynomial c[0] + c[1] z + ... + c[n] z^n by the
 * Durand–Kerner (Weierstrass) simultaneous iteration, polished by Newton steps.
 * Meant for the low degrees of ARMA lag polynomials (≤ ~10), where it is robust
 * and accurate to ~1e-12; R uses Jenkins–Traub (`polyroot`) for the same job.
 */

/** Roots as parallel arrays of real and imaginary parts (length = effective degree). */
export interface PolyRoots {
  re: Float64Array;
  im: Float64Array;
}

/**
 * Roots of `c[0] + c[1] z + ... + c[n] z^n`. Trailing (highest-order) zero
 * coefficients are dropped first, so the degree is the last non-zero index.
 */
export function polyRoots(c: ArrayLike<number>): PolyRoots {
  let n = c.length - 1;
  while (n > 0 && c[n] === 0) n--;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  if (n === 0) return { re, im };
  const lead = c[n];
  // monic coefficients a[k] for z^k, k < n
  const a = new Float64Array(n);
  for (let k = 0; k < n; k++) a[k] = c[k] / lead;
  if (n === 1) {
    re[0] = -a[0];
    return { re, im };
  }
  // starting points on a circle of radius given by the Cauchy-like bound
  let radius = 0;
  for (let k = 0; k < n; k++) radius = Math.max(radius, Math.pow(Math.abs(a[k]), 1 / (n - k)));
  radius = Math.max(radius, 1e-3);
  for (let k = 0; k < n; k++) {
    const ang = (2 * Math.PI * k) / n + 0.4;
    re[k] = radius * Math.cos(ang);
    im[k] = radius * Math.sin(ang);
  }
  for (let iter = 0; iter < 500; iter++) {
    let change = 0;
    for (let k = 0; k < n; k++) {
      // p(z_k) by Horner (monic)
      let pr = 1;
      let pi = 0;
      for (let j = n - 1; j >= 0; j--) {
        const tr = pr * re[k] - pi * im[k] + a[j];
        pi = pr * im[k] + pi * re[k];
        pr = tr;
      }
      // prod_{j != k} (z_k - z_j)
      let qr = 1;
      let qi = 0;
      for (let j = 0; j < n; j++) {
        if (j === k) continue;
        const dr = re[k] - re[j];
        const di = im[k] - im[j];
        const tr = qr * dr - qi * di;
        qi = qr * di + qi * dr;
        qr = tr;
      }
      const den = qr * qr + qi * qi;
      if (den === 0) {
        re[k] += 1e-8;
        change = Infinity;
        continue;
      }
      const wr = (pr * qr + pi * qi) / den;
      const wi = (pi * qr - pr * qi) / den;
      re[k] -= wr;
      im[k] -= wi;
      change = Math.max(change, Math.hypot(wr, wi) / Math.max(1, Math.hypot(re[k], im[k])));
    }
    if (change < 1e-15) break;
  }
  return { re, im };
}

/** Smallest modulus among the roots (Infinity for a constant polynomial). */
export function minRootModulus(c: ArrayLike<number>): number {
  const { re, im } = polyRoots(c);
  let m = Infinity;
  for (let k = 0; k < re.length; k++) m = Math.min(m, Math.hypot(re[k], im[k]));
  return m;
}
