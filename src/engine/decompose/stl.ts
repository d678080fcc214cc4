/**
 * STL: Seasonal-Trend decomposition by Loess (Cleveland et al. 1990), with R `stats::stl`'s
 * defaults and its `s.window = "periodic"` convention, on the reference algorithm
 * (`stl.f`: `stlss` cycle-subseries smoothing, `stlstp` inner loop, outer robustness loop).
 * Loess primitives are in `stl-loess.ts`.
 */
import { fillMissingLinear } from '../math/stats';
import { ess, est, fts, rwt } from './stl-loess';

/** Options, with R's defaults. */
export interface StlOptions {
  /** Seasonal window: odd span ≥ 3 or `periodic` (the default). */
  readonly sWindow?: number | 'periodic';
  /** Seasonal loess degree, default 0 (R). */
  readonly sDegree?: 0 | 1;
  /** Trend window, default nextodd(ceil(1.5·period / (1 − 1.5/sWindow))). */
  readonly tWindow?: number;
  /** Trend degree, default 1. */
  readonly tDegree?: 0 | 1;
  /** Low-pass window, default nextodd(period). */
  readonly lWindow?: number;
  /** Robust fitting (inner 1, outer 15, as R). Default false (inner 2, outer 0). */
  readonly robust?: boolean;
  /** Override inner / outer iterations. */
  readonly inner?: number;
  readonly outer?: number;
}

/** The three components (each length n) and the final robustness weights. */
export interface StlResult {
  readonly seasonal: Float64Array;
  readonly trend: Float64Array;
  readonly remainder: Float64Array;
  readonly weights: Float64Array;
}

const nextOdd = (x: number): number => {
  const v = Math.round(x);
  return v % 2 === 0 ? v + 1 : v;
};

/** Smooth each cycle-subseries and extend it one period at both ends (`stlss`); season has n + 2np values. */
function cycleSubseries(
  y: Float64Array, n: number, np: number, ns: number, isdeg: number, nsjump: number,
  rw: Float64Array | null, season: Float64Array, w1: Float64Array, w2: Float64Array, w3: Float64Array, w4: Float64Array,
): void {
  for (let j = 1; j <= np; j++) {
    const k = Math.floor((n - j) / np) + 1;
    for (let i = 1; i <= k; i++) w1[i - 1] = y[(i - 1) * np + j - 1];
    if (rw) for (let i = 1; i <= k; i++) w3[i - 1] = rw[(i - 1) * np + j - 1];
    const sub = rw ? w3 : null;
    ess(w1, 0, k, ns, isdeg, nsjump, sub, 0, w2, 1, w4);
    const nright = Math.min(ns, k);
    const left = est(w1, 0, k, ns, isdeg, 0, 1, nright, w4, sub, 0);
    w2[0] = Number.isNaN(left) ? w2[1] : left;
    const nleft = Math.max(1, k - ns + 1);
    const right = est(w1, 0, k, ns, isdeg, k + 1, nleft, k, w4, sub, 0);
    w2[k + 1] = Number.isNaN(right) ? w2[k] : right;
    for (let m = 1; m <= k + 2; m++) season[(m - 1) * np + j - 1] = w2[m - 1];
  }
}

/**
 * Decompose `y` (n > 2·period, period ≥ 2 integer) as R `stl(ts(y, frequency = period), ...)`.
 * Missing values are filled by linear interpolation first (R's stl refuses them).
 */
export function stl(yIn: ArrayLike<number>, period: number, options: StlOptions = {}): StlResult {
  const n = yIn.length;
  const np = Math.round(period);
  if (!(np >= 2)) throw new RangeError(`stl: period must be >= 2, got ${period}`);
  if (n <= 2 * np) throw new RangeError(`stl: series has fewer than two periods (${n} values, period ${np})`);
  const y = fillMissingLinear(yIn);
  const periodic = options.sWindow === undefined || options.sWindow === 'periodic';
  let sWindow = periodic ? 10 * n + 1 : (options.sWindow as number);
  const sDegree = periodic ? 0 : options.sDegree ?? 0;
  const tWindow = options.tWindow ?? nextOdd(Math.ceil((1.5 * np) / (1 - 1.5 / sWindow)));
  const lWindow = options.lWindow ?? nextOdd(np);
  const tDegree = options.tDegree ?? 1;
  const lDegree = tDegree;
  const sJump = Math.ceil(sWindow / 10);
  const tJump = Math.ceil(tWindow / 10);
  const lJump = Math.ceil(lWindow / 10);
  const inner = options.inner ?? (options.robust ? 1 : 2);
  const outer = options.outer ?? (options.robust ? 15 : 0);
  // As `stl.f`: spans at least 3 and odd.
  const odd3 = (v: number): number => {
    const x = Math.max(3, v);
    return x % 2 === 0 ? x + 1 : x;
  };
  sWindow = odd3(sWindow);
  const nt = odd3(tWindow);
  const nl = odd3(lWindow);

  const big = n + 2 * np;
  const season = new Float64Array(n);
  const trend = new Float64Array(n);
  const rw = new Float64Array(n).fill(1);
  const c = new Float64Array(big);
  const w1 = new Float64Array(big);
  const w2 = new Float64Array(big);
  const w3 = new Float64Array(big);
  const w4 = new Float64Array(big);
  const w5 = new Float64Array(big);
  let userw = false;
  for (let k = 0; ; ) {
    const weights = userw ? rw : null;
    for (let it = 0; it < inner; it++) {
      for (let i = 0; i < n; i++) w1[i] = y[i] - trend[i];
      cycleSubseries(w1, n, np, sWindow, sDegree, sJump, weights, c, w2, w3, w4, w5);
      fts(c, big, np, w3, w1);
      ess(w3, 0, n, nl, lDegree, lJump, null, 0, w1, 0, w4);
      for (let i = 0; i < n; i++) season[i] = c[np + i] - w1[i];
      for (let i = 0; i < n; i++) w1[i] = y[i] - season[i];
      ess(w1, 0, n, nt, tDegree, tJump, weights, 0, trend, 0, w3);
    }
    k++;
    if (k > outer) break;
    for (let i = 0; i < n; i++) w1[i] = trend[i] + season[i];
    rwt(y, w1, rw);
    userw = true;
  }
  if (outer <= 0) rw.fill(1);
  if (periodic) {
    // R: the seasonal component is replaced by its mean at each cycle position.
    const sums = new Float64Array(np);
    const counts = new Float64Array(np);
    for (let i = 0; i < n; i++) {
      sums[i % np] += season[i];
      counts[i % np]++;
    }
    for (let i = 0; i < n; i++) season[i] = sums[i % np] / counts[i % np];
  }
  const remainder = new Float64Array(n);
  for (let i = 0; i < n; i++) remainder[i] = y[i] - season[i] - trend[i];
  return { seasonal: season, trend, remainder, weights: rw };
}
