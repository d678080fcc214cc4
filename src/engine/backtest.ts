/**
 * Rolling-origin evaluation of a model family on a series' own history (Tashman 2000,
 * "Out-of-sample tests of forecasting accuracy"; the `tsCV` idea of R forecast, bounded so it is
 * cheap enough to run per query). For each origin t the family is refitted to y[0..t) and its
 * h-step forecast is scored on y[t..t+h): CRPS, interval coverage, pinball losses, and the raw
 * errors and spreads that `calibration/conformal.ts` needs.
 *
 * `confidence = max(0, 1 − CRPS_model / CRPS_baseline)` with the baseline the seasonal naive
 * forecast on the same origins: the CRPS skill score (Gneiting & Raftery 2007, §2.2). 0 means
 * "no better than repeating last season"; values near 1 mean far better. It is a statement about
 * this series' recent history, not a guarantee.
 */
import { crps, pinball } from './metrics';
import type { ModelFamily, PredictiveDistribution, SeriesInfo } from './types';

/** How a forecast's warning begins where its history was too short for any backtest origin (`forecastSeries`; so callers can tell). */
export const NO_BACKTEST_WARNING = 'too little history for a backtest';

/** Upper bound on origins, whatever is asked: each origin is one refit. */
export const MAX_ORIGINS = 8;

/** Options of `backtest`. */
export interface BacktestOptions {
  /** Steps scored per origin (the forecast horizon). */
  readonly horizon: number;
  /** Number of origins; default 3, at most `MAX_ORIGINS`. Fewer when the history is short. */
  readonly origins?: number;
  /** Distance between consecutive origins; default ceil(horizon / 2). */
  readonly step?: number;
  /** Central interval level for coverage, default 0.95. */
  readonly level?: number;
  /** Probabilities for the pinball losses, default [0.05, 0.25, 0.5, 0.75, 0.95]. */
  readonly quantiles?: readonly number[];
  /** Options passed to the family's `fit`. */
  readonly fitOptions?: unknown;
}

/** Scores of one origin. */
export interface OriginScore {
  /** Index of the first forecast step (= length of the training prefix). */
  readonly origin: number;
  /** Mean CRPS over the scored steps. */
  readonly crps: number;
  /** Share of scored actuals inside the central `level` interval. */
  readonly coverage: number;
  /** Mean pinball loss per requested probability. */
  readonly pinball: number[];
  /** Per step: actual − mean (NaN where the actual is missing). */
  readonly errors: Float64Array;
  /** Per step: the forecast's spread, (q(0.8413) − q(0.1587)) / 2 (= sd for a Normal step). */
  readonly spreads: Float64Array;
  /** Per step: the point forecast. */
  readonly means: Float64Array;
  /** The forecast scored (set by `backtest`; hierarchical reconciliation re-scores it reconciled). */
  readonly forecast?: PredictiveDistribution;
  /**
   * Per step: the distance from the mean to the central `level` interval's end on the actual's
   * side (NaN where the actual is missing). |error| / reach ≤ f exactly when the actual lies in
   * the interval scaled by f around the mean, also for skewed steps (used by `conformal-prior`).
   */
  readonly reaches: Float64Array;
}

/** The result of `backtest`. */
export interface BacktestResult {
  readonly model: string;
  readonly origins: OriginScore[];
  /** Means over origins (NaN when no origin could be scored). */
  readonly crps: number;
  readonly coverage: number;
  readonly pinball: number[];
  /** Fits that threw (skipped), with the message. */
  readonly failures: string[];
}

const P_LO = 0.15865525393145707; // Φ(−1)
const P_HI = 1 - P_LO;

/** The origins `backtest` would use for a series of length n (oldest first). */
export function originsFor(n: number, minTrain: number, options: BacktestOptions): number[] {
  const h = Math.max(1, Math.floor(options.horizon));
  const count = Math.max(0, Math.min(MAX_ORIGINS, Math.floor(options.origins ?? 3)));
  const step = Math.max(1, Math.floor(options.step ?? Math.ceil(h / 2)));
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const t = n - h - k * step;
    if (t < Math.max(1, minTrain)) break;
    out.unshift(t);
  }
  return out;
}

/** Score one predictive distribution against actuals (used for every origin and by `select`). */
export function scoreForecast(
  pd: PredictiveDistribution,
  actual: ArrayLike<number>,
  level: number,
  quantiles: readonly number[],
  origin = 0,
): OriginScore {
  const h = actual.length;
  const alpha = 1 - level;
  const errors = new Float64Array(h);
  const spreads = new Float64Array(h);
  const means = new Float64Array(h);
  const reaches = new Float64Array(h).fill(NaN);
  const pin = new Array<number>(quantiles.length).fill(0);
  let sumCrps = 0;
  let inside = 0;
  let n = 0;
  for (let i = 0; i < h; i++) {
    const step = pd.steps[i];
    const y = actual[i];
    means[i] = step.mean;
    spreads[i] = (step.quantile(P_HI) - step.quantile(P_LO)) / 2;
    errors[i] = y - step.mean;
    if (Number.isNaN(y)) continue;
    sumCrps += crps(step, y);
    const lo = step.quantile(alpha / 2);
    const hi = step.quantile(1 - alpha / 2);
    reaches[i] = y >= step.mean ? hi - step.mean : step.mean - lo;
    if (y >= lo && y <= hi) inside++;
    for (let j = 0; j < quantiles.length; j++) pin[j] += pinball(y, step.quantile(quantiles[j]), quantiles[j]);
    n++;
  }
  return {
    origin,
    crps: n > 0 ? sumCrps / n : NaN,
    coverage: n > 0 ? inside / n : NaN,
    pinball: pin.map((v) => (n > 0 ? v / n : NaN)),
    errors,
    spreads,
    means,
    reaches,
  };
}

/**
 * Rolling-origin evaluation of `family` on `y`. Origins whose fit throws are skipped and listed
 * in `failures` (why: a per-query check must degrade, not fail the forecast).
 */
export function backtest(
  family: ModelFamily<never> | ModelFamily,
  y: ArrayLike<number>,
  info: SeriesInfo,
  options: BacktestOptions,
): BacktestResult {
  const fam = family as ModelFamily<unknown>;
  const level = options.level ?? 0.95;
  const quantiles = options.quantiles ?? [0.05, 0.25, 0.5, 0.75, 0.95];
  const h = Math.max(1, Math.floor(options.horizon));
  const minTrain = fam.minObservations(info, options.fitOptions);
  const origins: OriginScore[] = [];
  const failures: string[] = [];
  let model = fam.name;
  const all = Float64Array.from(y);
  for (const t of originsFor(all.length, minTrain, options)) {
    const actual = all.subarray(t, t + h);
    try {
      // slice, not subarray: a family may keep (or transform) the array it is given
      const fitted = fam.fit(all.slice(0, t), info, options.fitOptions);
      model = fitted.model;
      const forecast = fitted.forecast(h);
      origins.push({ ...scoreForecast(forecast, actual, level, quantiles, t), forecast });
    } catch (err) {
      failures.push(`origin ${t}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const avg = (f: (o: OriginScore) => number): number => {
    let s = 0;
    let n = 0;
    for (const o of origins) {
      const v = f(o);
      if (Number.isFinite(v)) {
        s += v;
        n++;
      }
    }
    return n > 0 ? s / n : NaN;
  };
  return {
    model,
    origins,
    crps: avg((o) => o.crps),
    coverage: avg((o) => o.coverage),
    pinball: quantiles.map((_, j) => avg((o) => o.pinball[j])),
    failures,
  };
}

/**
 * CRPS skill against a baseline backtest on the same origins: max(0, 1 − CRPS / CRPS_baseline).
 * Only origins scored by both count. NaN when there is none (too little history). When the
 * baseline is perfect (zero CRPS): 1 if the model is perfect too, else 0 — why: a perfect baseline
 * leaves nothing to be skilful about. (A reconciled node's draws are never exactly a constant
 * series' value, so at depth ≥ 1 such a series gets 0 where its depth-0 answer gets 1: found by QA.)
 */
export function confidenceScore(model: BacktestResult, baseline: BacktestResult): number {
  const base = new Map(baseline.origins.map((o) => [o.origin, o.crps]));
  let sm = 0;
  let sb = 0;
  let n = 0;
  for (const o of model.origins) {
    const b = base.get(o.origin);
    if (b === undefined || !Number.isFinite(b) || !Number.isFinite(o.crps)) continue;
    sm += o.crps;
    sb += b;
    n++;
  }
  if (n === 0) return NaN;
  if (!(sb > 0)) return sm > 0 ? 0 : 1;
  return Math.max(0, 1 - sm / sb);
}
