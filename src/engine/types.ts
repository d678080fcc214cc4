/**
 * The forecasting engine's public contract.
 *
 * The engine is pure: arrays and specs in, plain objects out. Nothing under
 * `src/engine` reads the clock, calls `Math.random`, or imports storage or
 * transport code. Randomness comes from a seeded PRNG (`rng.ts`) whose seed is
 * recorded, so the same data and spec give bit-identical output.
 *
 * One interface for every model family (after R forecast's `forecast` class and
 * statsforecast's `_TS`): `fit(y, options) -> Fitted`, and
 * `Fitted.forecast(h) -> PredictiveDistribution`.
 */

/** A numeric series, oldest first. `NaN` marks a missing observation. */
export type Series = ArrayLike<number>;

/** What the data is, as far as a model needs to know. */
export interface SeriesInfo {
  /** Primary seasonal period (1 = no seasonality). */
  readonly period: number;
  /**
   * All seasonal periods, ascending, for multi-seasonal models (hourly: [24, 168]).
   * Defaults to `[period]` when period > 1, else `[]`.
   */
  readonly periods?: readonly number[];
  /** `count` data is non-negative and integer; distributions respect that. Default `continuous`. */
  readonly kind?: 'continuous' | 'count';
  /**
   * The values the series can take, either end optional (a utilisation in percent: 0 and 100):
   * a series beyond them is refused, and forecasts are censored to them (`censorToBounds`).
   * Whole numbers for `count` data; `lower` below `upper`.
   */
  readonly bounds?: { readonly lower?: number; readonly upper?: number };
}

/** The predictive distribution of one forecast step. */
export interface StepDistribution {
  /** Expected value. */
  readonly mean: number;
  /** Inverse CDF; `p` in (0, 1); non-decreasing in `p`. */
  quantile(p: number): number;
  /** P(Y <= x); non-decreasing in `x`, in [0, 1]. */
  cdf(x: number): number;
  /** P(Y < x), where it differs from `cdf` (a point mass at x: a censored law's atom at its floor). */
  cdfBelow?(x: number): number;
}

/** The forecast of a fitted model over `h` steps. */
export interface PredictiveDistribution {
  /** Model name that produced it, e.g. `ETS(M,Ad,M)`. */
  readonly model: string;
  /** Point forecast (mean) per step, length h. */
  readonly mean: Float64Array;
  /** Marginal distribution per step, length h. */
  readonly steps: readonly StepDistribution[];
  /**
   * How intervals were obtained: `analytic`, `simulated`, `empirical`,
   * `conformal`, `mixture`, ... (recorded in the audit manifest).
   */
  readonly intervalMethod: string;
  /**
   * `n` joint sample paths of length h, drawn with a PRNG seeded by `seed`.
   * Same seed → identical paths; different seed → different paths.
   */
  samplePaths(n: number, seed: number): Float64Array[];
}

/** A JSON-serialisable record of fitted parameters (for the audit manifest). */
export type Params = { readonly [name: string]: number | string | boolean | null | readonly number[] | Params };

/** A fitted model. */
export interface Fitted {
  /** Model name, e.g. `ETS(A,N,N)`, `ARIMA(0,1,1)(0,1,1)[12]`, `Theta`. */
  readonly model: string;
  /** Fitted parameters, JSON-serialisable. */
  readonly params: Params;
  /** Number of (non-missing) observations used. */
  readonly nobs: number;
  /** Log-likelihood, where the family defines one. */
  readonly loglik?: number;
  /** Information criteria where defined. */
  readonly aic?: number;
  readonly aicc?: number;
  readonly bic?: number;
  /** In-sample one-step fitted values (NaN where undefined), same length as y. */
  readonly fitted?: Float64Array;
  /** Degradations worth recording ("too short for damping"), never console output. */
  readonly warnings: readonly string[];
  /** Forecast `h` >= 1 steps ahead. */
  forecast(h: number): PredictiveDistribution;
  /**
   * The standard deviation per step (length `h`, original scale) of an error the last `forecast`
   * leaves out of its own intervals and calibration must not scale: the forecasting facade adds it
   * after calibration (`widenSteps`). The AR's filled-in regressors (`models/autoreg/filled.ts`);
   * absent or null when there is none. Call after `forecast(h)` with the same `h`.
   */
  addedSd?(h: number): Float64Array | null;
  /**
   * A family that fits this model's chosen structure again (parameters re-estimated, no model
   * re-selection): what a rolling-origin backtest of *the chosen model* refits at each origin.
   * Absent when the family has no selection step (refitting the family is the same).
   */
  readonly refit?: ModelFamily;
}

/** A model family: one per file under `models/`. */
export interface ModelFamily<O = Record<string, unknown>> {
  /** Family name as used in specs (`ets`, `arima`, `theta`, `naive`, ...). */
  readonly name: string;
  /** Fewest non-missing observations this family needs for the given info/options. */
  minObservations(info: SeriesInfo, options?: O): number;
  /** Fit to `y`. Throws `InsufficientDataError` / `InvalidSeriesError` (errors.ts). */
  fit(y: Series, info: SeriesInfo, options?: O): Fitted;
}
