/**
 * The loess building blocks of STL (Cleveland, Cleveland, McRae & Terpenning 1990, J. Official
 * Statistics 6(1)), transcribed from the algorithm of the reference Fortran `stl.f` (netlib, as
 * shipped in R's stats package): `est` (one local fit), `ess` (loess over a series with jumps
 * and linear interpolation), `ma` (moving average), `fts` (the low-pass filter) and `rwt`
 * (bisquare robustness weights). Positions are 1-based in the maths, arrays 0-based.
 */

/**
 * Local weighted fit at position xs (1-based) using points nleft..nright of y (tricube weights,
 * times `rw` when given; local constant for deg 0, local line for deg 1). Writes the weights into
 * `w` and returns the fitted value, or NaN when every weight is zero.
 */
export function est(
  y: Float64Array, yOff: number, n: number, len: number, deg: number, xs: number,
  nleft: number, nright: number, w: Float64Array, rw: Float64Array | null, rwOff: number,
): number {
  const range = n - 1;
  let h = Math.max(xs - nleft, nright - xs);
  if (len > n) h += Math.floor((len - n) / 2);
  const h9 = 0.999 * h;
  const h1 = 0.001 * h;
  let a = 0;
  for (let j = nleft; j <= nright; j++) {
    let wj = 0;
    const r = Math.abs(j - xs);
    if (r <= h9) {
      if (r <= h1) wj = 1;
      else {
        const u = r / h;
        const v = 1 - u * u * u;
        wj = v * v * v;
      }
      if (rw) wj *= rw[rwOff + j - 1];
      a += wj;
    }
    w[j - 1] = wj;
  }
  if (a <= 0) return NaN;
  for (let j = nleft; j <= nright; j++) w[j - 1] /= a;
  if (h > 0 && deg > 0) {
    let m = 0;
    for (let j = nleft; j <= nright; j++) m += w[j - 1] * j;
    let b = xs - m;
    let c = 0;
    for (let j = nleft; j <= nright; j++) c += w[j - 1] * (j - m) * (j - m);
    if (Math.sqrt(c) > 0.001 * range) {
      b /= c;
      for (let j = nleft; j <= nright; j++) w[j - 1] *= b * (j - m) + 1;
    }
  }
  let ys = 0;
  for (let j = nleft; j <= nright; j++) ys += w[j - 1] * y[yOff + j - 1];
  return ys;
}

/**
 * Loess smooth of y[yOff .. yOff+n−1] into ys[ysOff ..], evaluated every `njump` points and
 * linearly interpolated in between (the last point always evaluated), as `stless`.
 */
export function ess(
  y: Float64Array, yOff: number, n: number, len: number, deg: number, njump: number,
  rw: Float64Array | null, rwOff: number, ys: Float64Array, ysOff: number, w: Float64Array,
): void {
  if (n < 2) {
    ys[ysOff] = y[yOff];
    return;
  }
  const fit = (i: number, nleft: number, nright: number): void => {
    const v = est(y, yOff, n, len, deg, i, nleft, nright, w, rw, rwOff);
    ys[ysOff + i - 1] = Number.isNaN(v) ? y[yOff + i - 1] : v;
  };
  const newnj = Math.min(njump, n - 1);
  let nleft = 1;
  let nright = n;
  if (len >= n) {
    nleft = 1;
    nright = n;
    for (let i = 1; i <= n; i += newnj) fit(i, nleft, nright);
  } else if (newnj === 1) {
    const nsh = Math.floor((len + 1) / 2);
    nleft = 1;
    nright = len;
    for (let i = 1; i <= n; i++) {
      if (i > nsh && nright !== n) {
        nleft++;
        nright++;
      }
      fit(i, nleft, nright);
    }
  } else {
    const nsh = Math.floor((len + 1) / 2);
    for (let i = 1; i <= n; i += newnj) {
      if (i < nsh) {
        nleft = 1;
        nright = len;
      } else if (i >= n - nsh + 1) {
        nleft = n - len + 1;
        nright = n;
      } else {
        nleft = i - nsh + 1;
        nright = len + i - nsh;
      }
      fit(i, nleft, nright);
    }
  }
  if (newnj !== 1) {
    for (let i = 1; i <= n - newnj; i += newnj) {
      const delta = (ys[ysOff + i + newnj - 1] - ys[ysOff + i - 1]) / newnj;
      for (let j = i + 1; j <= i + newnj - 1; j++) ys[ysOff + j - 1] = ys[ysOff + i - 1] + delta * (j - i);
    }
    const k = Math.floor((n - 1) / newnj) * newnj + 1;
    if (k !== n) {
      // As the reference code: the window of the last evaluated point is reused for position n.
      fit(n, nleft, nright);
      if (k !== n - 1) {
        const delta = (ys[ysOff + n - 1] - ys[ysOff + k - 1]) / (n - k);
        for (let j = k + 1; j <= n - 1; j++) ys[ysOff + j - 1] = ys[ysOff + k - 1] + delta * (j - k);
      }
    }
  }
}

/** Moving average of length len: ave[i] = mean(x[i .. i+len−1]), i < n − len + 1. */
export function ma(x: Float64Array, n: number, len: number, ave: Float64Array): void {
  const newn = n - len + 1;
  let v = 0;
  for (let i = 0; i < len; i++) v += x[i];
  ave[0] = v / len;
  for (let j = 1; j < newn; j++) {
    v = v - x[j - 1] + x[j + len - 1];
    ave[j] = v / len;
  }
}

/** The low-pass filter of STL: MA(np), MA(np), MA(3); output has n − 2np values. */
export function fts(x: Float64Array, n: number, np: number, out: Float64Array, work: Float64Array): void {
  ma(x, n, np, out);
  ma(out, n - np + 1, np, work);
  ma(work, n - 2 * np + 2, 3, out);
}

/**
 * Bisquare robustness weights from |y − fit| scaled by 6·median (as `stlrwt`).
 * Deliberate deviation: the median is exact. R's `stlrwt` asks its partial sort `psort` for
 * positions (n/2 + 1, n/2), in descending order, while `psort` assumes ascending ones, so for some
 * even-length series R uses a wrong "median" (found reproducing `stl(USAccDeaths, "periodic",
 * robust = TRUE)`, which differs from R from the 5th robustness pass on). Non-robust STL and MSTL
 * are unaffected.
 */
export function rwt(y: ArrayLike<number>, fit: Float64Array, rw: Float64Array): void {
  const n = y.length;
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) r[i] = Math.abs(y[i] - fit[i]);
  const sorted = Float64Array.from(r).sort();
  const m1 = Math.floor(n / 2) + 1;
  const m2 = n - m1 + 1;
  const cmad = 3 * (sorted[m1 - 1] + sorted[m2 - 1]);
  const c9 = 0.999 * cmad;
  const c1 = 0.001 * cmad;
  for (let i = 0; i < n; i++) {
    if (r[i] <= c1) rw[i] = 1;
    else if (r[i] <= c9) {
      const u = r[i] / cmad;
      rw[i] = (1 - u * u) * (1 - u * u);
    } else rw[i] = 0;
  }
}
