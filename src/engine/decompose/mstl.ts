/**
 * MSTL: multiple seasonal decomposition by repeated STL (Bandara, Hyndman & Bergmeir 2021,
 * "MSTL: A Seasonal-Trend Decomposition Algorithm for Time Series with Multiple Seasonal
 * Patterns"), as R forecast's `mstl`: periods ascending, each seasonal component re-estimated
 * `iterate` times by STL on the series with the other components removed; seasonal windows
 * 11, 15, 19, ... (7 + 4i); the trend is that of the last STL fit.
 */
import { fillMissingLinear } from '../math/stats';
import { stl } from './stl';

/** Options, with R's defaults. */
export interface MstlOptions {
  /** Passes over the periods, default 2 (R). */
  readonly iterate?: number;
  /** Seasonal window per period (a single number applies to all); default 7 + 4·i, i = 1, 2, ... */
  readonly sWindow?: number | readonly number[];
}

/** The decomposition; `seasonals[i]` belongs to `periods[i]`. */
export interface MstlResult {
  /** Periods actually used (integers, ascending; those with fewer than two full cycles dropped). */
  readonly periods: readonly number[];
  readonly trend: Float64Array;
  readonly seasonals: readonly Float64Array[];
  readonly remainder: Float64Array;
  /** y minus all seasonal components (trend + remainder). */
  readonly adjusted: Float64Array;
}

/**
 * Decompose y with the given seasonal periods (rounded to integers, e.g. 365.25 → 365, as R's
 * `stl` truncates the frequency; duplicates and periods < 2 removed; a period needs n > 2·period).
 * With no usable period the trend is y itself (gaps filled) and there are no seasonals.
 */
export function mstl(y: ArrayLike<number>, periods: readonly number[], options: MstlOptions = {}): MstlResult {
  const n = y.length;
  const used = [...new Set(periods.map((p) => Math.round(p)))].filter((p) => p >= 2 && p < n / 2).sort((a, b) => a - b);
  const x = fillMissingLinear(y);
  if (used.length === 0) {
    return { periods: [], trend: x, seasonals: [], remainder: new Float64Array(n), adjusted: Float64Array.from(x) };
  }
  const iterate = Math.max(1, options.iterate ?? 2);
  const windows = used.map((_, i) => {
    const s = options.sWindow;
    if (s === undefined) return 7 + 4 * (i + 1);
    return typeof s === 'number' ? s : s[i] ?? s[s.length - 1];
  });
  const seasonals: Float64Array[] = used.map(() => new Float64Array(n));
  const deseas = Float64Array.from(x);
  let trend: Float64Array = new Float64Array(n);
  for (let it = 0; it < iterate; it++) {
    for (let i = 0; i < used.length; i++) {
      const s = seasonals[i];
      for (let t = 0; t < n; t++) deseas[t] += s[t];
      const fit = stl(deseas, used[i], { sWindow: windows[i] });
      seasonals[i] = fit.seasonal;
      for (let t = 0; t < n; t++) deseas[t] -= fit.seasonal[t];
      trend = fit.trend;
    }
  }
  const remainder = new Float64Array(n);
  for (let t = 0; t < n; t++) remainder[t] = deseas[t] - trend[t];
  return { periods: used, trend, seasonals, remainder, adjusted: deseas };
}
