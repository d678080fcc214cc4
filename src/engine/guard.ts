/**
 * Guards against degenerate fits: a plausibility band derived from the series' own history that
 * every forecast must stay within (see `guardBand` for the rule). Used twice:
 * - a combination drops a member whose forecast leaves the band (`isDegenerate`, `ensemble.ts`),
 *   so one blown-up member (an ETS whose multiplicative variance explodes) cannot poison it;
 * - the facade clamps the final distribution into the band (`clampToBand`), so no forecast the
 *   service returns has an interval wider than the band, whatever model was asked for.
 */
import { quantileGridMean } from './distributions/moments';
import { CountStep } from './distributions/count';
import type { PredictiveDistribution, Series, SeriesInfo, StepDistribution } from './types';

/**
 * Band reach per step, in units of the series' mean absolute one-step change (`guardBand`).
 * Why 6, measured with the default (`auto`, calibrated) on every series of M4 weekly and hourly
 * and every third of M3 (K = 4 / 6 / 8 / no band): M3 MSIS 11.92 / 11.83 / 11.85 / 12.01 at
 * unchanged coverage 91.8% from K = 6; M4 weekly 16.48 / 15.26 / 15.22 / 15.48 (coverage
 * 95.5 / 95.7 / 95.8 / 95.8%); hourly 5.69 / 5.69 / 5.69 / 5.70. A reach growing with √k instead
 * of k cut the intervals of trending series (M3 coverage 91.4% at K = 6).
 */
export const GUARD_WIDTHS = 6;

/** Fewest recent changes the band's step size may be taken from (`guardBand`). */
export const RECENT_CHANGES = 20;

/** The band of a horizon: per step, the lowest and highest plausible value. */
export interface GuardBand {
  readonly lower: Float64Array;
  readonly upper: Float64Array;
  /** True when the history has no negative value: forecasts are also censored at 0 (`clampToBand`). */
  readonly nonNegative: boolean;
  /** True when every value of the history is above 0 (it never touched the floor). */
  readonly positive: boolean;
}

/**
 * The plausibility band for `h` steps after `y`: at step k (1-based)
 *   [min(y) − K·d·(g + k), max(y) + K·d·(g + k)],
 * g the missing values at the end of `y` (step k lies g + k steps after the last observation:
 * found by QA, a trend whose last 10 values were missing had its first steps cut to a single
 * value below the truth, 95% coverage 0.76 where the models' own intervals held 0.94),
 * with d the mean absolute change between consecutive observations — over the whole history or
 * over its last max(`RECENT_CHANGES`, 2h) changes, whichever is larger (why: a trend that has
 * accelerated, M4 weekly W211 rising 180 a week after decades of 27) — and K = `widths`; forecasts
 * are also censored at 0 when the history has no negative value (`nonNegative`). Why this shape:
 * the history's range holds its seasonal swings and level; a trend continuing at K times the
 * typical step for k steps is more than any series has shown, while a blow-up (growth by orders
 * of magnitude, an exploding multiplicative variance) is far outside.
 * Null when the history has fewer than 2 finite values (nothing to judge by).
 */
export function guardBand(y: Series, h: number, widths = GUARD_WIDTHS): GuardBand | null {
  let lo = Infinity;
  let hi = -Infinity;
  const changes: number[] = [];
  let prev = NaN;
  let last = -1;
  for (let t = 0; t < y.length; t++) {
    const v = y[t];
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
    if (Number.isFinite(prev)) changes.push(Math.abs(v - prev));
    prev = v;
    last = t;
  }
  const gap = y.length - 1 - last;
  if (changes.length === 0) return null;
  const mean = (from: number) => changes.slice(from).reduce((a, b) => a + b, 0) / (changes.length - from);
  const d = Math.max(mean(0), mean(Math.max(0, changes.length - Math.max(RECENT_CHANGES, 2 * h))));
  const lower = new Float64Array(h);
  const upper = new Float64Array(h);
  for (let k = 0; k < h; k++) {
    const reach = widths * d * (gap + k + 1);
    lower[k] = lo - reach;
    upper[k] = hi + reach;
  }
  return { lower, upper, nonNegative: lo >= 0, positive: lo > 0 };
}

/**
 * True when forecasts of `y` are censored at 0: the band exists (2 or more finite values) and the
 * history has no negative value (`guardBand`'s `nonNegative`). One rule for a depth-0 forecast
 * and for the leaves of a reconciled one (`reconcile/probabilistic.ts`), so both floor alike.
 */
export function floorsAtZero(y: Series): boolean {
  return guardBand(y, 1)?.nonNegative === true;
}

/**
 * True when a forecast is degenerate against the band: a non-finite mean or quantile, a mean
 * outside the band, or a central 95% interval wider than the band itself (at any step).
 */
export function isDegenerate(pd: PredictiveDistribution, band: GuardBand): boolean {
  const h = Math.min(pd.steps.length, band.lower.length);
  for (let k = 0; k < h; k++) {
    const s = pd.steps[k];
    const lo = s.quantile(0.025);
    const hi = s.quantile(0.975);
    if (!Number.isFinite(s.mean) || !Number.isFinite(lo) || !Number.isFinite(hi)) return true;
    if (s.mean < band.lower[k] || s.mean > band.upper[k]) return true;
    if (hi - lo > band.upper[k] - band.lower[k]) return true;
  }
  return false;
}

/**
 * A step whose distribution is censored to [lo, hi] (point masses at the ends). `mean` is the
 * point forecast clamped into [lo, hi] (not the censored distribution's mean: the point forecast
 * of the model, kept where it is plausible).
 */
export class ClampedStep implements StepDistribution {
  readonly mean: number;
  constructor(
    private readonly base: StepDistribution,
    readonly lo: number,
    readonly hi: number,
    /** The band's own lower end, when `lo` is the 0 floor of a non-negative history above it. */
    private readonly bandLower = lo,
  ) {
    this.mean = clamp(base.mean, lo, hi);
  }
  /**
   * The same law without the 0 floor (censored to the band proper). Reconciliation joins these
   * and sets its non-negative leaves to ≥ 0 after (`reconcile/probabilistic.ts`): the floor of a
   * sum is not the sum of floors, and the atom at 0 is no draw of the model's to combine.
   */
  unfloored(): ClampedStep {
    return this.bandLower < this.lo ? new ClampedStep(this.base, this.bandLower, this.hi) : this;
  }
  quantile(p: number): number {
    return clamp(this.base.quantile(p), this.lo, this.hi);
  }
  cdf(x: number): number {
    if (x < this.lo) return 0;
    if (x >= this.hi) return 1;
    return this.base.cdf(x);
  }
  /**
   * The atom at `lo` is not below `lo`; within (lo, hi] the base law's own P(Y < x), so an atom
   * of the base at `hi` (a band censored to a single value, then a bound at it) is not counted
   * below it (found by QA: a utilisation flat at its bound of 100 put all its mass in the bin
   * below 100).
   */
  cdfBelow(x: number): number {
    if (x <= this.lo) return 0;
    if (x > this.hi) return 1;
    return this.base.cdfBelow ? this.base.cdfBelow(x) : this.base.cdf(x);
  }
}

/**
 * The forecast censored to the band at every step (samples clamped likewise). When no step's
 * 0.1%–99.9% range reaches outside, only the far tails are censored (quantiles at levels below
 * 0.001 or above 0.999, probabilities beyond the band) and the means and sample paths are left as
 * they are, so ordinary forecasts keep their distributions where any summary reads them. `cut`
 * counts the steps whose central 95% interval reached outside the band proper (the 0 floor of a
 * non-negative series not counted): what a warning should report.
 */
export function clampToBand(pd: PredictiveDistribution, band: GuardBand): { distribution: PredictiveDistribution; clamped: number; cut: number } {
  const h = pd.steps.length;
  const floor = band.nonNegative ? 0 : -Infinity;
  const at = (v: Float64Array, k: number) => v[Math.min(k, v.length - 1)];
  const lo = (k: number) => Math.max(floor, at(band.lower, k));
  const hi = (k: number) => at(band.upper, k);
  let clamped = 0;
  let cut = 0;
  for (let k = 0; k < h; k++) {
    const s = pd.steps[k];
    if (!(s.quantile(0.001) >= lo(k) && s.quantile(0.999) <= hi(k))) clamped++;
    if (!(s.quantile(0.025) >= at(band.lower, k) && s.quantile(0.975) <= hi(k))) cut++;
  }
  const steps = pd.steps.map((s, k) => new ClampedStep(s, lo(k), hi(k), at(band.lower, k)));
  // only the far tails reach out: means and paths stay as they were
  const tailsOnly = clamped === 0;
  return {
    clamped,
    cut,
    distribution: {
      model: pd.model,
      mean: tailsOnly ? pd.mean : Float64Array.from(steps, (s) => s.mean),
      steps,
      intervalMethod: pd.intervalMethod,
      samplePaths: (n: number, seed: number) => (tailsOnly ? pd.samplePaths(n, seed) : pd.samplePaths(n, seed).map((path) => path.map((v, k) => Math.min(hi(k), Math.max(lo(k), v))))),
    },
  };
}

/** `v` held within [lo, hi]. */
export function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

/**
 * A step censored to a series' own bounds [lo, hi] (`censorToBounds`): the probability beyond a
 * bound put on the bound (quantiles, cdf and P(Y < x) as `ClampedStep`). Unlike the band's
 * `ClampedStep`, `mean` is E[min(max(Y, lo), hi)], the censored law's own (on the quantile grid,
 * when first read; a count base's exact mean less its excess above `hi`, plus its shortfall
 * below `lo`), never the base's `mean`, a median for models in logs: so a bound that cannot bind
 * changes no answer (found by QA: +3.4% with a bound of 100,000), and one that binds moves the
 * mean by what lies beyond it (found by review: a count axis bounded at 20 reported the
 * unbounded mean).
 */
export class CensoredStep implements StepDistribution {
  private readonly clamped: ClampedStep;
  private known?: number;
  constructor(
    private readonly base: StepDistribution,
    lo: number,
    hi: number,
  ) {
    this.clamped = new ClampedStep(base, lo, hi);
  }
  get mean(): number {
    if (this.known === undefined) {
      const { lo, hi } = this.clamped;
      // a count law's exact mean less its excess; any other law's censored values straight on the grid
      // (comparisons, not max(0, q − hi): an infinite quantile against an infinite bound is no excess)
      const excess = () => quantileGridMean(this.base, (q) => (q > hi ? q - hi : 0) - (q < lo ? lo - q : 0));
      this.known = this.base instanceof CountStep ? clamp(this.base.mean - excess(), lo, hi) : quantileGridMean(this);
    }
    return this.known;
  }
  /**
   * The model's law as reconciliation takes it: without the bounds and without the band's 0 floor
   * (`ClampedStep.unfloored`). Reconciliation joins these and censors the reconciled draws to the
   * bounds after (`reconcile/probabilistic.ts`), as it does with the floor: re-centring a censored
   * law, whose atom sits at the bound, on another mean moved the atom past it (found by review: a
   * bounded leaf's reconciled median 0.6 above its depth-0 one).
   */
  uncensored(): StepDistribution {
    return this.base instanceof ClampedStep ? this.base.unfloored() : this.base;
  }
  quantile(p: number): number {
    return this.clamped.quantile(p);
  }
  cdf(x: number): number {
    return this.clamped.cdf(x);
  }
  cdfBelow(x: number): number {
    return this.clamped.cdfBelow(x);
  }
}

/**
 * The forecast censored to the series' own bounds [lo, hi] (`SeriesInfo.bounds`; either may be
 * infinite) at every step (`CensoredStep`): quantiles and sample paths clamped, the point
 * forecast too. Unlike `clampToBand`, paths are clamped even when only the far tails reach out:
 * a bound is a fact about the data, so no draw may cross it. `cut` counts the steps whose central
 * 95% interval reached beyond a bound.
 */
export function censorToBounds(pd: PredictiveDistribution, lo: number, hi: number): { distribution: PredictiveDistribution; cut: number } {
  let cut = 0;
  for (const s of pd.steps) if (s.quantile(0.025) < lo || s.quantile(0.975) > hi) cut++;
  let mean: Float64Array | undefined;
  return {
    cut,
    distribution: {
      model: pd.model,
      // when first read: a count forecast's means cost a sum per step (`toCountDistribution`)
      get mean(): Float64Array {
        mean ??= Float64Array.from(pd.mean, (v) => clamp(v, lo, hi));
        return mean;
      },
      steps: pd.steps.map((s) => new CensoredStep(s, lo, hi)),
      intervalMethod: pd.intervalMethod,
      samplePaths: (n: number, seed: number) => pd.samplePaths(n, seed).map((path) => path.map((v) => clamp(v, lo, hi))),
    },
  };
}

/** Bounds from their two ends, either unset; undefined when both are. */
export function boundsFrom(lower: number | undefined, upper: number | undefined): SeriesInfo['bounds'] {
  if (lower === undefined && upper === undefined) return undefined;
  return { ...(lower === undefined ? {} : { lower }), ...(upper === undefined ? {} : { upper }) };
}

/** Bounds in words, for messages: `[0, 100]`, `≥ 0`, `≤ 50` (empty without either). */
export function boundsText(b: NonNullable<SeriesInfo['bounds']>): string {
  if (b.lower !== undefined && b.upper !== undefined) return `[${b.lower}, ${b.upper}]`;
  if (b.lower !== undefined) return `≥ ${b.lower}`;
  return b.upper !== undefined ? `≤ ${b.upper}` : '';
}
