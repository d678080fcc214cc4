/**
 * Classical decomposition by moving averages (R `stats::decompose`, Kendall & Stuart 1983)
 * and the seasonality test used by the M4 benchmarks and by Theta.
 *
 * Trend: centred moving average of order m (a 2×m MA when m is even). Seasonal figure: the
 * mean of the detrended series at each position t mod m, normalised to mean 1
 * (multiplicative) or 0 (additive). As in R, position i of the figure belongs to the
 * observations i, i+m, i+2m, ... counted from the start of the series.
 */
import { regularizedBeta } from '../math/special';
import { acf, countFinite, isConstant, nanVariance } from '../math/stats';

/** Result of `classicalDecompose`. */
export interface ClassicalDecomposition {
  readonly type: 'multiplicative' | 'additive';
  readonly period: number;
  /** Centred moving average (NaN for the first and last ⌊m/2⌋ values and near gaps). */
  readonly trend: Float64Array;
  /** Seasonal figure, length m; `figure[t % m]` applies to observation t. */
  readonly figure: Float64Array;
  /** Seasonal component, same length as y. */
  readonly seasonal: Float64Array;
}

/**
 * Decompose `y` with period `m` (integer ≥ 2, at least 2m values as R requires).
 * Missing values make the neighbouring trend values missing and are skipped in the figure
 * means; a figure position with no value gets the neutral 1 (or 0).
 */
export function classicalDecompose(
  y: ArrayLike<number>,
  m: number,
  type: 'multiplicative' | 'additive' = 'multiplicative',
): ClassicalDecomposition {
  const n = y.length;
  if (!Number.isInteger(m) || m < 2) throw new RangeError(`classical decomposition needs an integer period >= 2, got ${m}`);
  if (n < 2 * m) throw new RangeError(`classical decomposition needs at least 2 periods (${2 * m} values), got ${n}`);
  const trend = new Float64Array(n).fill(NaN);
  const half = Math.floor(m / 2);
  const even = m % 2 === 0;
  for (let t = half; t < n - half; t++) {
    let s = 0;
    for (let j = -half; j <= half; j++) {
      const w = even && (j === -half || j === half) ? 0.5 : 1;
      s += w * y[t + j];
    }
    trend[t] = s / m; // NaN propagates from any missing value in the window, as R's filter
  }
  const mult = type === 'multiplicative';
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  for (let t = 0; t < n; t++) {
    const d = mult ? y[t] / trend[t] : y[t] - trend[t];
    if (Number.isFinite(d)) {
      sums[t % m] += d;
      counts[t % m]++;
    }
  }
  const figure = new Float64Array(m);
  let mean = 0;
  for (let i = 0; i < m; i++) {
    figure[i] = counts[i] > 0 ? sums[i] / counts[i] : mult ? 1 : 0;
    mean += figure[i] / m;
  }
  for (let i = 0; i < m; i++) figure[i] = mult ? figure[i] / mean : figure[i] - mean;
  const seasonal = new Float64Array(n);
  for (let t = 0; t < n; t++) seasonal[t] = figure[t % m];
  return { type, period: m, trend, figure, seasonal };
}

/** Which published form of the seasonality test to apply. */
export type SeasonalityTestVariant = 'm4' | 'r';

/**
 * The 90% autocorrelation test for seasonality at lag m (Assimakopoulos & Nikolopoulos 2000,
 * as used for Naive2/Theta in M4 and by R `thetaf`): seasonal when
 * |r_m| > 1.645 · sqrt((1 + 2 Σ_{k<m} r_k²) / n).
 *
 * - `m4` (default): exactly the M4 benchmark code (`Benchmarks and Evaluation.py`), which needs
 *   n ≥ 3m and, as published, adds r_1 unsquared to the sum. Why keep that quirk: the official
 *   Naive2 (and so every published OWA) was computed with it.
 * - `r`: R forecast's `thetaf`: all r_k squared, needs n > 2m and a non-constant series.
 *   Deviation from R: with 3 to 4 cycles (3m ≤ n < 4m) a series the autocorrelation test
 *   refuses is still seasonal when `stableSeasonalityTest` finds a cycle. Why: below 4 cycles
 *   the autocorrelation test cannot pass even a perfect cycle. The biased r_m is at most
 *   (n − m)/n (2/3 at n = 3m), while a smooth cycle makes every r_k below m large, so the
 *   threshold is about as high (0.8 for a pure sine of period 24 at n = 72). On M4 hourly
 *   histories of 72 hours it passed 50 of 414 series.
 *
 * Always false for m < 2 or a constant series.
 */
export function seasonalityTest(y: ArrayLike<number>, m: number, variant: SeasonalityTestVariant = 'm4'): boolean {
  const n = y.length;
  if (!(m >= 2) || isConstant(y)) return false;
  const period = Math.round(m);
  if (variant === 'm4' ? n < 3 * period : n <= 2 * period) return false;
  const r = acf(y, period);
  let s = variant === 'm4' ? r[0] : r[0] * r[0];
  for (let k = 2; k < period; k++) s += r[k - 1] * r[k - 1];
  const limit = 1.6448536269514722 * Math.sqrt(Math.max(0, 1 + 2 * s) / n);
  if (Math.abs(r[period - 1]) > limit) return true;
  return variant === 'r' && n >= 3 * period && n < 4 * period && stableSeasonalityTest(y, period);
}

/** Significance level of `stableSeasonalityTest`: X-11's 0.1%. */
const STABLE_SEASONALITY_LEVEL = 0.001;

/**
 * X-11's F-test for stable seasonality (Lothian & Morry 1978; X-13ARIMA-SEATS table D8): a
 * one-way analysis of variance of the detrended values y − trend (classical decomposition)
 * grouped by position t mod m, seasonal when the positions' means differ at the 0.1% level. (The
 * level holds for independent noise: 0.03% measured at m = 24, n = 72–95. Series that wander leave
 * a wavy remainder the test reads as a cycle more often: random walks 2.4–3.7%, AR(0.8) 1.5–2.9%,
 * 3,000 series each; the autocorrelation test's own rate there is about 10%.)
 * Unlike the autocorrelation test it weighs every cycle's value at each position, so 3 cycles
 * can show a cycle. Why additive deviations: they exist for any sign of y (the multiplicative
 * figure is refused later for non-positive series). False for m < 2, a constant series or
 * n < 3m (fewer than 2 detrended values per position leave no within-position scatter).
 */
export function stableSeasonalityTest(y: ArrayLike<number>, m: number): boolean {
  const n = y.length;
  if (!Number.isInteger(m) || m < 2 || n < 3 * m || isConstant(y)) return false;
  const { trend } = classicalDecompose(y, m, 'additive');
  const dev = Float64Array.from(y, (v, t) => v - trend[t]); // NaN at the trend's ends and gaps
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  let total = 0;
  let count = 0;
  for (let t = 0; t < n; t++) {
    if (!Number.isFinite(dev[t])) continue;
    sums[t % m] += dev[t];
    counts[t % m]++;
    total += dev[t];
    count++;
  }
  let groups = 0;
  for (let i = 0; i < m; i++) if (counts[i] > 0) groups++;
  const dfBetween = groups - 1;
  const dfWithin = count - groups;
  if (dfBetween < 1 || dfWithin < 1) return false;
  const grand = total / count;
  let between = 0;
  for (let i = 0; i < m; i++) if (counts[i] > 0) between += counts[i] * (sums[i] / counts[i] - grand) ** 2;
  let within = 0;
  for (let t = 0; t < n; t++) if (Number.isFinite(dev[t])) within += (dev[t] - sums[t % m] / counts[t % m]) ** 2;
  if (!(within > 0)) return between > 0; // an exact repeating cycle, nothing left to test against
  const f = between / dfBetween / (within / dfWithin);
  // P(F > f) for F(dfBetween, dfWithin) as the upper tail's own incomplete beta, exact for small p
  const p = regularizedBeta(dfWithin / (dfWithin + dfBetween * f), dfWithin / 2, dfBetween / 2);
  return p < STABLE_SEASONALITY_LEVEL;
}

/**
 * Multiplicative seasonal adjustment as M4's Naive2/Theta do it: when `seasonalityTest`
 * says seasonal, the figure of the classical multiplicative decomposition, else null.
 * Also null (no adjustment) when any index is non-positive or non-finite, which a
 * multiplicative model cannot use (series with zeros or negative values); R's `thetaf`
 * likewise falls back to no adjustment when an index is near 0.
 */
export function multiplicativeSeasonalFigure(
  y: ArrayLike<number>,
  m: number,
  variant: SeasonalityTestVariant = 'm4',
): Float64Array | null {
  if (!seasonalityTest(y, m, variant)) return null;
  const period = Math.round(m);
  let positive = true;
  for (let i = 0; i < y.length; i++) if (y[i] <= 0) positive = false;
  if (!positive) return null;
  const { figure } = classicalDecompose(y, period, 'multiplicative');
  for (let i = 0; i < period; i++) if (!(figure[i] > 1e-4) || !Number.isFinite(figure[i])) return null;
  return figure;
}

/**
 * Strength of the seasonal cycle of period `m` (Wang, Smith & Hyndman 2006; Hyndman &
 * Athanasopoulos, FPP3 §4.3): max(0, 1 − var(R) / var(S + R)) of the classical additive
 * decomposition of `y`, over the positions where its trend is defined. NaN when `y` has a
 * missing value or fewer than two cycles beyond the trend's ends.
 */
export function seasonalStrength(y: ArrayLike<number>, m: number): number {
  if (countFinite(y) !== y.length || y.length < 3 * m) return NaN;
  const { trend, seasonal } = classicalDecompose(y, m, 'additive');
  // NaN where the trend is not defined (its ends), which the variances leave out
  const rem = Float64Array.from(y, (v, t) => v - trend[t] - seasonal[t]);
  const total = nanVariance(Float64Array.from(rem, (r, t) => r + seasonal[t]));
  return total > 0 ? Math.max(0, 1 - nanVariance(rem) / total) : 0;
}
