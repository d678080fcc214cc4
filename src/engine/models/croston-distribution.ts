/**
 * Predictive distribution of one period of intermittent demand: a hurdle (zero-altered) law
 * Y = B·S with B ~ Bernoulli(p) "a demand occurs" and S > 0 the demand size, as in the
 * stochastic model behind Croston's method (Shenstone & Hyndman 2005, "Stochastic models
 * underlying Croston's method", J. Forecasting 24(6)).
 *
 * Why this choice: Croston, SBA and TSB estimate exactly two things, the chance of a demand and
 * the mean size when one occurs, so a hurdle law with those two moments is the distribution the
 * methods themselves imply; a Gaussian around p·z would put mass below zero and never at zero.
 * For integer (count) data the size is 1 + NegBin, its mean the smoothed size z and its variance
 * the sample variance of the observed sizes (Poisson when they are under-dispersed): integer
 * valued, at least 1, with a tail beyond the largest size seen. For non-integer data the size is
 * the empirical law of the observed sizes rescaled to mean z.
 */
import { EmpiricalStep } from '../distributions/empirical-step';
import { runningMean } from '../math/stats';
import type { StepDistribution } from '../types';

/** Support cap of the tabulated size pmf; the remaining mass (< 1e-12 in practice) sits on the last point. */
const MAX_SUPPORT = 200000;

/**
 * True when the shifted negative binomial of `IntegerSizeStep(mu, variance)` fits in its tabulated
 * support: its mean plus 12 standard deviations under `MAX_SUPPORT`. Beyond (sizes in the tens of
 * thousands and up) the table would cut the tail and with it the mean, so callers use a continuous
 * size law instead, rounded by the facade's count law (`distributions/count.ts`).
 */
export function integerSizeFits(mu: number, variance: number): boolean {
  return mu + 12 * Math.sqrt(Math.max(variance, mu)) < MAX_SUPPORT;
}

/** A distribution on the integers 1..K given by its pmf, as a StepDistribution. */
export class IntegerSizeStep implements StepDistribution {
  readonly mean: number;
  /** cum[k] = P(S ≤ k + 1). */
  private readonly cum: Float64Array;

  /** Shifted negative binomial: S = 1 + X, E[X] = mu, Var[X] = variance (Poisson when variance ≤ mu). */
  constructor(mu: number, variance: number) {
    const m = Math.max(0, mu);
    const logp: number[] = [];
    // Recursion in logs from 0 (no overflow, no log-gamma needed): p_k/p_{k−1} = (k−1+r)/k · m/(r+m).
    const poisson = !(variance > m * (1 + 1e-9)) || m === 0;
    const r = poisson ? Infinity : (m * m) / (variance - m);
    let lp = m === 0 ? 0 : poisson ? -m : r * Math.log(r / (r + m));
    const logRatio = poisson ? Math.log(m) : Math.log(m / (r + m));
    let max = lp;
    for (let k = 0; k < MAX_SUPPORT; k++) {
      logp.push(lp);
      if (lp > max) max = lp;
      if (m === 0 || (k > m && lp - max < -37)) break;
      const kk = k + 1;
      lp += (poisson ? 0 : Math.log((kk - 1 + r) / kk)) + logRatio - (poisson ? Math.log(kk) : 0);
    }
    const cum = new Float64Array(logp.length);
    let s = 0;
    let mean = 0;
    for (let k = 0; k < logp.length; k++) {
      const p = Math.exp(logp[k] - max);
      s += p;
      mean += p * (k + 1);
      cum[k] = s;
    }
    for (let k = 0; k < cum.length; k++) cum[k] /= s;
    cum[cum.length - 1] = 1;
    this.cum = cum;
    this.mean = mean / s;
  }

  cdf(x: number): number {
    if (!(x >= 1)) return 0;
    const k = Math.floor(x) - 1;
    return k >= this.cum.length ? 1 : this.cum[k];
  }

  quantile(p: number): number {
    const c = this.cum;
    if (!(p > c[0])) return 1;
    let lo = 0; // c[lo] < p
    let hi = c.length - 1; // c[hi] >= p
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (c[mid] >= p) hi = mid;
      else lo = mid;
    }
    return hi + 1;
  }
}

/**
 * The empirical law of positive sizes rescaled to a given mean: for non-integer data, and for
 * counts whose size law is too wide to tabulate (`integerSizeFits`). Counts are rescaled above 1
 * (1 + (v − 1)·f), so a demand stays at least 1. Why: rescaled as v·f, counts of about 1 beside
 * one wild value (a 10^15 among hourly counts of 1; found by QA) became sizes of 0.001, which the
 * count law rounds to 0 — every quantile 0, the demand floor undone, while the mean was 10^10.
 */
export function scaledEmpiricalSize(sizes: ArrayLike<number>, mean: number, integer = false): StepDistribution {
  const m = runningMean(sizes); // a sum of huge sizes would overflow
  if (integer && m > 1 && mean >= 1) {
    const f = (mean - 1) / (m - 1);
    return new EmpiricalStep(Array.from(sizes, (v) => 1 + (v - 1) * f), mean);
  }
  const f = m > 0 ? mean / m : 0;
  return new EmpiricalStep(Array.from(sizes, (v) => v * f), mean);
}

/** Y = B·S, B ~ Bernoulli(p), S ~ `size` (positive). */
export class HurdleStep implements StepDistribution {
  readonly mean: number;

  constructor(
    /** Probability of a demand in the period, in [0, 1]. */
    readonly p: number,
    /** Law of the size of a demand. */
    readonly size: StepDistribution,
  ) {
    this.mean = p > 0 ? p * size.mean : 0;
  }

  cdf(x: number): number {
    if (!(x >= 0)) return 0;
    return 1 - this.p + (this.p > 0 ? this.p * this.size.cdf(x) : 0);
  }

  quantile(q: number): number {
    if (!(q > 1 - this.p)) return 0;
    return this.size.quantile(Math.min(1, (q - (1 - this.p)) / this.p));
  }
}
