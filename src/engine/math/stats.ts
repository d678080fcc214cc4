/**
 * Descriptive statistics shared by the engine's models: means and variances that skip
 * missing values (NaN), the sample autocorrelation function as R's `acf` computes it,
 * the Hyndman–Fan type-7 quantile (R's default), a least-squares line on the time index,
 * and linear gap filling. Plain loops over `ArrayLike<number>`, no allocation beyond
 * the returned arrays.
 */

/** Number of finite (non-NaN, non-infinite) values. */
export function countFinite(y: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < y.length; i++) if (Number.isFinite(y[i])) n++;
  return n;
}

/**
 * Mean of all values as a running mean, m += (v − m)/k: no sum that overflows when the values are
 * near the largest double (1e308), at the cost of rounding that differs from `nanMean`'s; 0 for none.
 */
export function runningMean(y: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < y.length; i++) m += (y[i] - m) / (i + 1);
  return m;
}

/** Sum of the finite values (0 when there are none). */
export function nanSum(y: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < y.length; i++) if (Number.isFinite(y[i])) s += y[i];
  return s;
}

/** Mean of the finite values; NaN when there are none. */
export function nanMean(y: ArrayLike<number>): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (Number.isFinite(v)) {
      s += v;
      n++;
    }
  }
  return n > 0 ? s / n : NaN;
}

/**
 * Variance of the finite values with denominator n − `ddof` (default 1, the sample
 * variance as R's `var`); NaN when fewer than ddof + 1 values. Two-pass for accuracy.
 */
export function nanVariance(y: ArrayLike<number>, ddof = 1): number {
  const m = nanMean(y);
  let s = 0;
  let n = 0;
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (Number.isFinite(v)) {
      s += (v - m) * (v - m);
      n++;
    }
  }
  return n > ddof ? s / (n - ddof) : NaN;
}

/** Standard deviation, `sqrt(nanVariance(y, ddof))`. */
export function nanSd(y: ArrayLike<number>, ddof = 1): number {
  return Math.sqrt(nanVariance(y, ddof));
}

/**
 * Sample autocorrelations at lags 1..maxLag as R `acf(y, lag.max, na.action = na.pass)`:
 * deviations from the overall mean, lag-k sums over pairs where both values exist, all
 * divided by the lag-0 sum of squares (the biased estimator, so the sequence is positive
 * definite). Returns `r` with `r[k - 1]` the lag-k autocorrelation; zeros for a constant series.
 */
export function acf(y: ArrayLike<number>, maxLag: number): Float64Array {
  const n = y.length;
  const r = new Float64Array(Math.max(0, maxLag));
  const mean = nanMean(y);
  let c0 = 0;
  for (let i = 0; i < n; i++) if (Number.isFinite(y[i])) c0 += (y[i] - mean) ** 2;
  if (!(c0 > 0)) return r;
  for (let k = 1; k <= maxLag; k++) {
    let s = 0;
    for (let i = k; i < n; i++) {
      const a = y[i];
      const b = y[i - k];
      if (Number.isFinite(a) && Number.isFinite(b)) s += (a - mean) * (b - mean);
    }
    r[k - 1] = s / c0;
  }
  return r;
}

/**
 * Quantile of `sorted` (ascending, no NaN) at probability p by linear interpolation of
 * order statistics: Hyndman & Fan (1996) type 7, R's `quantile` default.
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (n - 1) * Math.min(1, Math.max(0, p));
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

/** Type-7 quantile of the finite values of `y` (unsorted); NaN when there are none. */
export function quantile7(y: ArrayLike<number>, p: number): number {
  const v: number[] = [];
  for (let i = 0; i < y.length; i++) if (Number.isFinite(y[i])) v.push(y[i]);
  v.sort((a, b) => a - b);
  return quantileSorted(v, p);
}

/** Least-squares line `y ≈ intercept + slope·t`, t = 0..n−1, over the finite values. */
export interface Line {
  readonly intercept: number;
  readonly slope: number;
}

/**
 * Ordinary least squares of y on the time index 0..n−1 (R `lsfit(0:(n-1), y)`), skipping
 * missing values. Slope 0 when fewer than two values exist.
 */
export function olsLine(y: ArrayLike<number>): Line {
  let n = 0;
  let st = 0;
  let sy = 0;
  for (let t = 0; t < y.length; t++) {
    if (Number.isFinite(y[t])) {
      n++;
      st += t;
      sy += y[t];
    }
  }
  if (n === 0) return { intercept: NaN, slope: 0 };
  const mt = st / n;
  const my = sy / n;
  let sxy = 0;
  let sxx = 0;
  for (let t = 0; t < y.length; t++) {
    if (Number.isFinite(y[t])) {
      sxy += (t - mt) * (y[t] - my);
      sxx += (t - mt) * (t - mt);
    }
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  return { intercept: my - slope * mt, slope };
}

/**
 * A copy of `y` with interior gaps filled by linear interpolation and leading/trailing
 * gaps by the nearest value (a simple stand-in for R's `na.interp` on non-seasonal data).
 * All-missing input stays all NaN.
 */
export function fillMissingLinear(y: ArrayLike<number>): Float64Array {
  const n = y.length;
  const out = Float64Array.from(y);
  let prev = -1;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(out[i])) continue;
    if (prev < 0) {
      for (let j = 0; j < i; j++) out[j] = out[i];
    } else if (i - prev > 1) {
      const a = out[prev];
      const b = out[i];
      for (let j = prev + 1; j < i; j++) out[j] = a + ((b - a) * (j - prev)) / (i - prev);
    }
    prev = i;
  }
  if (prev >= 0) for (let j = prev + 1; j < n; j++) out[j] = out[prev];
  return out;
}

/** True when every finite value equals the first finite one (or there are none). */
export function isConstant(y: ArrayLike<number>): boolean {
  let first = NaN;
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (!Number.isFinite(v)) continue;
    if (Number.isNaN(first)) first = v;
    else if (v !== first) return false;
  }
  return true;
}

/** Index of the last finite value, or −1. */
export function lastFiniteIndex(y: ArrayLike<number>): number {
  for (let i = y.length - 1; i >= 0; i--) if (Number.isFinite(y[i])) return i;
  return -1;
}
