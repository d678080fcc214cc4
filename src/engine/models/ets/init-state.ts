/**
 * Initial states for the ETS optimiser, as R `forecast:::initstate` (8.x): a classical
 * decomposition (R `decompose`) when there are three full seasons, otherwise a linear trend plus
 * one Fourier pair (`tslm(y ~ trend + fourier(y, 1))`); then level and slope from a least-squares
 * line through the first `max(10, 2m)` seasonally adjusted values.
 *
 * Returned layout: `[l, b?, s_0, ..., s_{m-2}]` (m-1 seasonal states; the optimiser derives the
 * last one so that the seasonal states sum to 0 (additive) or m (multiplicative), as R does).
 */
import { leastSquares } from './least-squares';

/**
 * Seasonal figure of R's `decompose(y, type)` repeated over the series (position-based from the
 * first observation, as R). `y` must have no NaN and at least 2m values.
 */
export function decomposeSeasonal(y: ArrayLike<number>, m: number, multiplicative: boolean): Float64Array {
  const n = y.length;
  // centred moving average: 2×m MA for even m, plain m MA for odd m (R's default filter)
  const even = m % 2 === 0;
  const half = even ? m / 2 : (m - 1) / 2;
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  for (let t = half; t < n - half; t++) {
    let s = 0;
    if (even) {
      s = 0.5 * (y[t - half] + y[t + half]);
      for (let j = t - half + 1; j < t + half; j++) s += y[j];
    } else {
      for (let j = t - half; j <= t + half; j++) s += y[j];
    }
    const trend = s / m;
    const v = multiplicative ? y[t] / trend : y[t] - trend;
    if (Number.isFinite(v)) {
      sums[t % m] += v;
      counts[t % m] += 1;
    }
  }
  const figure = new Float64Array(m);
  let mean = 0;
  for (let i = 0; i < m; i++) {
    figure[i] = counts[i] > 0 ? sums[i] / counts[i] : NaN;
    mean += figure[i] / m;
  }
  for (let i = 0; i < m; i++) figure[i] = multiplicative ? figure[i] / mean : figure[i] - mean;
  const seasonal = new Float64Array(n);
  for (let t = 0; t < n; t++) seasonal[t] = figure[t % m];
  return seasonal;
}

/** Detrended series from `y ~ trend + fourier(y, 1)` (R's path for fewer than 3 seasons). */
function fourierSeasonal(y: ArrayLike<number>, m: number, multiplicative: boolean): Float64Array {
  const n = y.length;
  const withSin = m !== 2; // sinpi(2t/2) = 0: R drops the all-zero column
  const p = withSin ? 4 : 3;
  const X = new Float64Array(n * p);
  for (let t = 0; t < n; t++) {
    const tt = t + 1;
    let c = 0;
    X[t * p + c++] = 1;
    X[t * p + c++] = tt;
    if (withSin) X[t * p + c++] = Math.sin((2 * Math.PI * tt) / m);
    X[t * p + c++] = Math.cos((2 * Math.PI * tt) / m);
  }
  const coef = leastSquares(X, y, n, p);
  const out = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const trend = coef[0] + coef[1] * (t + 1);
    out[t] = multiplicative ? y[t] / trend : y[t] - trend;
  }
  return out;
}

/**
 * R's `initstate(y, trendtype, seasontype)`. `y` must be free of NaN (callers interpolate).
 * Throws a plain `Error` where R stops (fewer than 4 values for a seasonal model); callers treat
 * that model as not fittable.
 */
export function initState(y: ArrayLike<number>, m: number, trend: 'N' | 'A' | 'M', season: 'N' | 'A' | 'M'): Float64Array {
  const n = y.length;
  let ysa: ArrayLike<number> = y;
  let initSeas: Float64Array | null = null;
  let mm = 1;
  if (season !== 'N') {
    mm = m;
    if (n < 4) throw new Error('initstate: not enough data');
    const mult = season === 'M';
    const seasonal = n < 3 * m ? fourierSeasonal(y, m, mult) : decomposeSeasonal(y, m, mult);
    initSeas = new Float64Array(m - 1);
    for (let i = 0; i < m - 1; i++) initSeas[i] = seasonal[m - 1 - i]; // rev(seasonal[2:m])
    const sa = new Float64Array(n);
    if (!mult) {
      for (let t = 0; t < n; t++) sa[t] = y[t] - seasonal[t];
    } else {
      let sum = 0;
      for (let i = 0; i < m - 1; i++) {
        initSeas[i] = Math.max(initSeas[i], 0.01);
        sum += initSeas[i];
      }
      if (sum > m) for (let i = 0; i < m - 1; i++) initSeas[i] /= sum + 0.01 * (m - 1);
      for (let t = 0; t < n; t++) sa[t] = y[t] / Math.max(seasonal[t], 0.01);
    }
    ysa = sa;
  }
  const maxn = Math.min(Math.max(10, 2 * mm), n);
  const states: number[] = [];
  if (trend === 'N') {
    let s = 0;
    for (let t = 0; t < maxn; t++) s += ysa[t];
    states.push(s / maxn);
  } else {
    // lsfit(1:maxn, ysa[1:maxn])
    let sx = 0;
    let sy = 0;
    for (let t = 0; t < maxn; t++) {
      sx += t + 1;
      sy += ysa[t];
    }
    const mx = sx / maxn;
    const my = sy / maxn;
    let sxx = 0;
    let sxy = 0;
    for (let t = 0; t < maxn; t++) {
      sxx += (t + 1 - mx) ** 2;
      sxy += (t + 1 - mx) * (ysa[t] - my);
    }
    const slope = sxx > 0 ? sxy / sxx : 0;
    const icpt = my - slope * mx;
    if (trend === 'A') {
      let l0 = icpt;
      let b0 = slope;
      if (Math.abs(l0 + b0) < 1e-8) {
        l0 *= 1 + 1e-3;
        b0 *= 1 - 1e-3;
      }
      states.push(l0, b0);
    } else {
      let l0 = icpt + slope;
      if (Math.abs(l0) < 1e-8) l0 = 1e-7;
      let b0 = (icpt + 2 * slope) / l0;
      l0 = l0 / b0;
      if (Math.abs(b0) > 1e10) b0 = Math.sign(b0) * 1e10;
      if (!(l0 >= 1e-8) || !(b0 >= 1e-8)) {
        l0 = Math.max(ysa[0], 1e-3);
        b0 = Math.max(ysa[1] / ysa[0], 1e-3);
      }
      states.push(l0, b0);
    }
  }
  const out = new Float64Array(states.length + (initSeas ? initSeas.length : 0));
  out.set(states);
  if (initSeas) out.set(initSeas, states.length);
  return out;
}
