/**
 * How many differences: forecast's `ndiffs` (KPSS test, Kwiatkowski et al. 1992,
 * as urca's `ur.kpss(type = "mu")` with lag trunc(3√n/13), 5% level) and
 * `nsdiffs` with its default seasonal test `seas` (STL seasonal strength > 0.64).
 */
import { seasonalStrength } from './stl-strength';

/** forecast's `is.constant`: all.equal(x, rep(x[1])) at tolerance 1.5e-8 (NaN ignored). */
export function isConstant(x: ArrayLike<number>): boolean {
  let first = NaN;
  for (let i = 0; i < x.length; i++)
    if (x[i] === x[i]) {
      first = x[i];
      break;
    }
  if (Number.isNaN(first)) return true;
  let diff = 0;
  let mag = 0;
  let k = 0;
  for (let i = 0; i < x.length; i++) {
    if (!(x[i] === x[i])) continue;
    diff += Math.abs(x[i] - first);
    mag += Math.abs(x[i]);
    k++;
  }
  diff /= k;
  mag /= k;
  return (mag > 1.5e-8 ? diff / mag : diff) < 1.5e-8;
}

/** KPSS level-stationarity statistic with Bartlett-weighted long-run variance (urca `ur.kpss`, type "mu"). */
export function kpssStatistic(y: ArrayLike<number>, lag?: number): number {
  const n = y.length;
  const l = lag ?? Math.trunc((3 * Math.sqrt(n)) / 13);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += y[i];
  mean /= n;
  const res = new Float64Array(n);
  for (let i = 0; i < n; i++) res[i] = y[i] - mean;
  let S = 0;
  let num = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    S += res[i];
    num += S * S;
    s2 += res[i] * res[i];
  }
  num /= n * n;
  s2 /= n;
  let lr = 0;
  for (let k = 1; k <= l; k++) {
    let c = 0;
    for (let t = k; t < n; t++) c += res[t] * res[t - k];
    lr += (1 - k / (l + 1)) * c;
  }
  return num / (s2 + (2 / n) * lr);
}

/** First differences to reach KPSS stationarity at 5% (forecast's `ndiffs`, max.d = 2). NaN dropped first, as R. */
export function ndiffs(x: ArrayLike<number>, maxD = 2): number {
  let y = Float64Array.from(Array.from(x).filter((v) => v === v));
  let d = 0;
  if (y.length < 2 || isConstant(y)) return 0;
  // p-value < 0.05 ⇔ statistic above the 5% critical value 0.463 (urca's table, linear interpolation)
  let dodiff = kpssStatistic(y) > 0.463;
  while (dodiff && d < maxD) {
    d++;
    const z = new Float64Array(y.length - 1);
    for (let i = 0; i < z.length; i++) z[i] = y[i + 1] - y[i];
    y = z;
    if (y.length < 2 || isConstant(y)) return d;
    dodiff = kpssStatistic(y) > 0.463;
  }
  return d;
}

/** Seasonal differences (0 or 1) by seasonal strength > 0.64 (forecast's `nsdiffs`, test "seas", max.D = 1). */
export function nsdiffs(x: ArrayLike<number>, m: number): number {
  if (m <= 1 || isConstant(x) || m >= x.length) return 0;
  return seasonalStrength(x, m) > 0.64 ? 1 : 0;
}
