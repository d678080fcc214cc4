/**
 * The engine facade the service calls: `forecastSeries(y, info, options)`.
 *
 * Validates the input (naming the offending value), resolves the model (`auto` = the
 * combination the benchmark found best, see `registry.ts`), fits, forecasts, and — unless told
 * not to — runs a bounded rolling-origin backtest on the series' own history that gives
 * `confidence` (CRPS skill over seasonal naive, see `backtest.ts`) and, when the model's own
 * intervals were miscalibrated there, conformal recalibration (`calibration/conformal.ts`).
 * Every forecast is then censored to the series' plausibility band (`guard.ts`), so no model,
 * however degenerate its fit, returns an interval wider than the history can justify.
 * Pure and deterministic: same input and options → bit-identical output.
 */
import { CLOSED_CYCLES, CLOSED_MIN_OBSERVED, closedCycles, closePositions, firstClosedSteps, firstSteps, unobservedCycles } from './closed';
import { backtest, confidenceScore, MAX_ORIGINS, NO_BACKTEST_WARNING, type BacktestResult } from './backtest';
import { applyCalibration, planCalibration, type CalibrationPlan } from './calibration/conformal';
import { calibrationPrior } from './calibration/prior';
import { InsufficientDataError, InvalidSeriesError } from './errors';
import { toCountDistribution } from './distributions/count';
import { boundsText, censorToBounds, clampToBand, guardBand } from './guard';
import { widenSteps } from './distributions/widened-step';
import { countFinite } from './math/stats';
import { autoModelName, boundFamily, keepsOwnIntervals, resolveModel } from './registry';
import type { Params, PredictiveDistribution, Series, SeriesInfo } from './types';

export * from './types';
export * from './errors';
export { UnknownModelError, modelNames } from './registry';

/** Longest horizon accepted (why: bounds work per request; 10 years of hourly data is ~87,600). */
export const MAX_HORIZON = 100_000;

/**
 * Longest stretch of history a model is fitted on: the last `MAX_FIT_STEPS` grid steps (engine
 * 1.17.2). Why: the combination routes fit every step they are given, missing ones filled in, and
 * their cost grows faster than the length (found by QA: 33 hourly observations spread over
 * 200,000 hours took 25 s of CPU, the interpolated grid fitted by Theta, DOTM and ETS; 200,000
 * dense 5-minute values of season 1, 73 s; at 20,000 steps 2.8 s). The autoregressions read no
 * further back than their window (10 cycles of the longest period, 14,400 steps for 1-minute data,
 * plus its lags), and no benchmark series is this long, so no benchmark figure moves.
 */
export const MAX_FIT_STEPS = 20_000;

/** Options of `forecastSeries`. */
export interface ForecastOptions {
  /** Steps ahead, integer ≥ 1. */
  readonly horizon: number;
  /** Registry name, `a+b` combination, `select:a/b`, or `auto` (default). */
  readonly model?: string;
  /** Seed recorded with the result for sample paths (default 0). */
  readonly seed?: number;
  /** Interval level the calibration targets, default 0.95. */
  readonly level?: number;
  /** Run the backtest for `confidence` (default true). */
  readonly confidence?: boolean;
  /**
   * Interval calibration: `auto` (default), `off`, or `force`. A model with a calibration prior
   * (the `auto` routes, `calibration/prior.ts`) is always calibrated: by the prior and this
   * series' backtest, or by the prior alone when no backtest runs. Other models are recalibrated
   * from the backtest only when its coverage is off (`force`: always), so for them
   * `confidence: false` with `auto` skips calibration unless `calibrate` is given explicitly.
   */
  readonly calibrate?: 'auto' | 'off' | 'force';
  /** Backtest origins, default 3 (at most `MAX_ORIGINS`). */
  readonly origins?: number;
  /**
   * Censor the forecast to the series' plausibility band (`guard.ts`), default true. Off only to
   * reproduce a model's raw intervals (e.g. the published M4 MSIS of Naive).
   */
  readonly guard?: boolean;
}

/** What `forecastSeries` returns. */
export interface ForecastResult {
  /** The fitted model's name, e.g. `ETS(M,Ad,M)` or `combo(ETS(A,N,N), Theta)`. */
  readonly model: string;
  /** The registry name that was fitted (what `auto` resolved to). */
  readonly requestedModel: string;
  readonly params: Params;
  readonly distribution: PredictiveDistribution;
  readonly warnings: readonly string[];
  /** How the intervals were obtained (`analytic`, `simulated`, `conformal-scaled`, ...). */
  readonly intervalMethod: string;
  /** CRPS skill over seasonal naive on the series' history, in [0, 1]; null when not computed or no history. */
  readonly confidence: number | null;
  /** Backtest summary, when run. */
  readonly backtest: { readonly origins: number; readonly crps: number; readonly coverage: number; readonly baselineCrps: number } | null;
  readonly calibration: Pick<CalibrationPlan, 'method' | 'factor' | 'coverageBefore' | 'reason'> | null;
  /**
   * In-sample one-step fitted values, aligned with the input `y` (NaN where undefined), or null
   * when the model has none. `y − fitted` are the residuals MinT reconciliation estimates its
   * covariance from (`reconcile/`).
   */
  readonly fitted: Float64Array | null;
  /**
   * The backtest's forecasts, one per origin: `origin` indexes the input `y` (the first step
   * forecast), `forecast` is the model's (uncalibrated, as scored for `confidence`), `baseline`
   * the seasonal naive one when `confidence` ran. Empty without a backtest.
   */
  readonly backtestForecasts: readonly BacktestForecast[];
  readonly nobs: number;
  readonly horizon: number;
  readonly seed: number;
}

/** One backtest origin's forecasts (see `ForecastResult.backtestForecasts`). */
export interface BacktestForecast {
  readonly origin: number;
  readonly forecast: PredictiveDistribution;
  readonly baseline: PredictiveDistribution | null;
}

/** Validate and normalise the series: no ±Infinity; count data non-negative integers; leading NaN dropped. */
function checkSeries(y: Series, info: SeriesInfo): Float64Array {
  if (!y || typeof y.length !== 'number') throw new InvalidSeriesError('series must be an array of numbers');
  let start = 0;
  while (start < y.length && Number.isNaN(y[start])) start++;
  const out = new Float64Array(y.length - start);
  for (let i = start; i < y.length; i++) {
    const v = y[i];
    if (typeof v !== 'number' || v === Infinity || v === -Infinity) throw new InvalidSeriesError(`y[${i}] is ${String(v)}, not a finite number`);
    if (info.kind === 'count' && !Number.isNaN(v) && (v < 0 || !Number.isInteger(v))) {
      throw new InvalidSeriesError(`y[${i}] is ${v}; count series need non-negative integers`);
    }
    if (v < (info.bounds?.lower ?? -Infinity) || v > (info.bounds?.upper ?? Infinity)) {
      throw new InvalidSeriesError(`y[${i}] is ${v}, outside the series' bounds ${boundsText(info.bounds!)}`);
    }
    out[i - start] = v;
  }
  let largest = 0;
  for (const v of out) if (Math.abs(v) > largest) largest = Math.abs(v);
  if (largest > MAX_MAGNITUDE || (largest > 0 && largest < MIN_MAGNITUDE)) {
    throw new InvalidSeriesError(
      `its largest absolute value is ${largest.toPrecision(3)}; the engine forecasts series whose largest absolute value lies between ${MIN_MAGNITUDE} and ${MAX_MAGNITUDE} (or that are all zero): store them in another unit`,
    );
  }
  return out;
}

/**
 * The magnitudes a series' largest absolute value may have. Why, measured (the same series
 * multiplied by powers of ten; relative 95% widths at step 6): scale-free from 1e-9 (one monthly
 * shape; another to 1e-16) to 1e150; below, the ETS member's selection and fit drift (a seasonal
 * model lost at 1e-10, widths to 0 by 1e-200); above 1e150 variances overflow (zero-width
 * intervals, NaN answers at 1.7e308). The limits keep a margin of ten below and 1e50 above.
 */
export const MIN_MAGNITUDE = 1e-8;
export const MAX_MAGNITUDE = 1e100;

function checkInfo(info: SeriesInfo): SeriesInfo {
  if (!Number.isInteger(info.period) || info.period < 1) throw new InvalidSeriesError(`period must be an integer ≥ 1, got ${info.period}`);
  for (const p of info.periods ?? []) {
    if (!Number.isInteger(p) || p < 2) throw new InvalidSeriesError(`periods must be integers ≥ 2, got ${p}`);
  }
  if (info.kind !== undefined && info.kind !== 'continuous' && info.kind !== 'count') {
    throw new InvalidSeriesError(`kind must be "continuous" or "count", got ${JSON.stringify(info.kind)}`);
  }
  if (info.bounds) {
    const { lower, upper } = info.bounds;
    for (const b of [lower, upper]) {
      if (b === undefined) continue;
      if (typeof b !== 'number' || !Number.isFinite(b)) throw new InvalidSeriesError(`bounds must be finite numbers, got ${String(b)}`);
      if (info.kind === 'count' && !Number.isInteger(b)) throw new InvalidSeriesError(`the bounds of count data are whole numbers, got ${b}`);
    }
    if (lower !== undefined && upper !== undefined && !(lower < upper)) throw new InvalidSeriesError(`bounds: lower (${lower}) must be below upper (${upper})`);
  }
  return info;
}

/**
 * The model `model` (default `auto`) stands for on `y` and the observations it needs: what
 * `forecastSeries` requires, and what a caller with no series to hand it (none read yet) should
 * name. An empty series gets the model ordinary data get (`isIntermittent`). Throws
 * `UnknownModelError`.
 */
export function observationsNeeded(y: ArrayLike<number>, info: SeriesInfo, model = 'auto'): { name: string; family: ReturnType<typeof resolveModel>; need: number } {
  const name = model === 'auto' ? autoModelName(y, info) : model;
  const family = resolveModel(name);
  return { name, family, need: family.minObservations(info) };
}

/**
 * `distribution` censored to `bounds` (`censorToBounds`), and the warning to give when its 95%
 * interval reached beyond them at some step. The facade applies a series' own bounds with it; the
 * service also a node's bounds to the forecast of its leaves' sum, which the sum need not respect.
 */
export function applyBounds(distribution: PredictiveDistribution, bounds: NonNullable<SeriesInfo['bounds']>): { distribution: PredictiveDistribution; warning?: string } {
  if (bounds.lower === undefined && bounds.upper === undefined) return { distribution };
  const bounded = censorToBounds(distribution, bounds.lower ?? -Infinity, bounds.upper ?? Infinity);
  const h = distribution.steps.length;
  if (bounded.cut === 0) return { distribution: bounded.distribution };
  return {
    distribution: bounded.distribution,
    warning: `censored to the bounds ${boundsText(bounds)} at ${bounded.cut} of ${h} steps, where the 95% interval reached beyond them (the probability beyond a bound is put on the bound)`,
  };
}

/** Forecast one series (see the file comment). Throws `InsufficientDataError`, `InvalidSeriesError`, `UnknownModelError`. */
export function forecastSeries(y: Series, info: SeriesInfo, options: ForecastOptions): ForecastResult {
  const h = options.horizon;
  if (!Number.isInteger(h) || h < 1 || h > MAX_HORIZON) throw new InvalidSeriesError(`horizon must be an integer in [1, ${MAX_HORIZON}], got ${h}`);
  const seed = options.seed ?? 0;
  if (!Number.isInteger(seed)) throw new InvalidSeriesError(`seed must be an integer, got ${seed}`);
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new InvalidSeriesError(`level must be in (0, 1), got ${level}`);
  // found by QA: an unknown mode ran as `auto`, and origins of 1.5 or NaN were taken as 1 and as none, without a word
  if (options.calibrate !== undefined && !['auto', 'off', 'force'].includes(options.calibrate)) {
    throw new InvalidSeriesError(`calibrate must be auto, off or force, got ${JSON.stringify(options.calibrate)}`);
  }
  if (options.origins !== undefined && !(Number.isInteger(options.origins) && options.origins >= 0)) {
    throw new InvalidSeriesError(`origins must be a whole number ≥ 0 (at most ${MAX_ORIGINS} are used), got ${options.origins}`);
  }
  checkInfo(info);
  const checked = checkSeries(y, info);
  const notes: string[] = [];
  const series = checked.length > MAX_FIT_STEPS ? checked.subarray(checked.length - MAX_FIT_STEPS) : checked;
  if (series !== checked) notes.push(`fitted on the last ${MAX_FIT_STEPS} of the series' ${checked.length} steps (the engine's longest history)`);
  const counts = info.kind === 'count';
  if (counts && series.some((v) => v > Number.MAX_SAFE_INTEGER)) {
    // doubles have no unit steps beyond 2^53, so an integer law means nothing there (and its sums
    // overflow near 1e308): continuous models, their forecast still rounded to whole counts below
    info = { ...info, kind: 'continuous' };
    notes.push('counts beyond 2^53 forecast as continuous values');
  }
  const { name, family, need } = observationsNeeded(series, info, options.model);
  const have = countFinite(series);
  if (have < need) throw new InsufficientDataError(have, need, name, series !== checked ? MAX_FIT_STEPS : undefined);

  const fitted = family.fit(series, info, { horizon: h });
  let distribution = fitted.forecast(h);
  const warnings = [...notes, ...fitted.warnings];

  // hurdle laws of intermittent demand keep their own intervals (see `keepsOwnIntervals`)
  const mode = keepsOwnIntervals(name) && options.calibrate !== 'force' ? 'off' : (options.calibrate ?? 'auto');
  // the model's calibration prior (an `auto` route's pooled factors), if it has one
  const prior = mode === 'off' ? undefined : calibrationPrior(name, info, have);
  const wantBacktest = options.confidence !== false || (options.calibrate !== undefined && options.calibrate !== 'off');
  let bt: BacktestResult | null = null;
  let base: BacktestResult | null = null;
  let calibration: ForecastResult['calibration'] = null;
  if (wantBacktest) {
    const btOptions = { horizon: h, origins: options.origins ?? 3, level };
    // Backtest the chosen model: its structure refitted at each origin, not a new selection.
    bt = backtest(fitted.refit ?? family, series, info, { ...btOptions, fitOptions: { horizon: h } });
    if (bt.origins.length === 0) warnings.push(`${NO_BACKTEST_WARNING}: no confidence${prior ? '' : ' or calibration'}`);
    if (options.confidence !== false && bt.origins.length > 0) base = backtest(boundFamily('snaive'), series, info, btOptions);
  }
  if (mode !== 'off' && (prior || (bt && bt.origins.length > 0))) {
    // with a prior even without a backtest (it needs none); otherwise from the backtest alone
    const plan = planCalibration(bt && bt.origins.length > 0 ? bt : null, { level, force: mode === 'force', prior });
    distribution = applyCalibration(distribution, plan);
    calibration = { method: plan.method, factor: plan.factor, coverageBefore: plan.coverageBefore, reason: plan.reason };
  }
  // an error the model's intervals leave out (the AR's filled-in regressors), added after
  // calibration, which was fitted on the model's own intervals and must not scale it
  const added = fitted.addedSd?.(h);
  if (added) {
    distribution = widenSteps(distribution, added);
    warnings.push('intervals widened for the interpolated values within the model\'s lags of the end (their error measured on the series\' fully observed stretches)');
  }
  const band = options.guard === false ? null : guardBand(series, h);
  if (band) {
    const guarded = clampToBand(distribution, band);
    distribution = guarded.distribution;
    if (guarded.cut > 0) warnings.push(`intervals cut to the plausibility band of the history at ${guarded.cut} of ${h} steps`);
    // a history that never touched 0 forecast as certainly 0: say so (found by QA: a falling trend
    // from 4 values reached 0 by step 10, and from there every quantile was 0 without a word)
    const atFloor = band.positive ? distribution.steps.findIndex((s) => s.quantile(0.975) <= 0) : -1;
    if (atFloor >= 0) {
      warnings.push(`from step ${atFloor + 1} at least 97.5% of the forecast lies at or below 0, where it is censored: the model's trend carried beyond what ${have} observations, all above 0, can support`);
    }
  }
  // the series' own bounds (a utilisation's 0 and 100), whatever the guard: a statement about the data, not a heuristic
  if (info.bounds) {
    const bounded = applyBounds(distribution, info.bounds);
    distribution = bounded.distribution;
    if (bounded.warning) warnings.push(bounded.warning);
  }
  // count data: discretise (round, censor at 0) after calibration, so the integer law is what users get
  // (also counts beyond 2^53, forecast by continuous models: found by QA, quantiles of 1.0000000006 on a count axis)
  if (counts) distribution = toCountDistribution(distribution);
  // positions of a cycle the series is closed at (a shop's Sunday, its nights): a certain 0 there (`closed.ts`)
  for (const { period, positions } of closedCycles(series, info)) {
    distribution = closePositions(distribution, positions, series.length, period);
    warnings.push(`forecast as exactly 0 at steps ${firstClosedSteps(positions, series.length, period)} and every ${period} steps after: in the last ${CLOSED_CYCLES} cycles of ${period} the series was 0 at every observed value there (at least ${CLOSED_MIN_OBSERVED}) and mostly positive elsewhere`);
  }
  // positions of a cycle never observed lately (a weekday never reported): say that their forecast is filled in
  for (const { period, positions } of unobservedCycles(series, info)) {
    if (firstSteps(positions, series.length, period)[0] > h) continue;
    warnings.push(`steps ${firstClosedSteps(positions, series.length, period)} and every ${period} steps after fall on positions of the cycle of ${period} with no observation in the last ${CLOSED_CYCLES} cycles: the forecast there rests on values filled in from the neighbouring positions`);
  }
  const confidence = bt && base ? confidenceScore(bt, base) : NaN;
  // Positions in the input: checkSeries dropped the leading NaNs.
  const lead = y.length - series.length;
  const baselineAt = new Map((base?.origins ?? []).map((o) => [o.origin, o.forecast ?? null]));
  const backtestForecasts = (bt?.origins ?? []).map((o) => ({ origin: o.origin + lead, forecast: o.forecast!, baseline: baselineAt.get(o.origin) ?? null }));
  let fittedValues: Float64Array | null = null;
  if (fitted.fitted && fitted.fitted.length === series.length) {
    fittedValues = new Float64Array(y.length).fill(NaN);
    fittedValues.set(fitted.fitted, lead);
  }
  return {
    model: fitted.model,
    requestedModel: name,
    params: fitted.params,
    distribution,
    warnings,
    intervalMethod: distribution.intervalMethod,
    confidence: Number.isFinite(confidence) ? confidence : null,
    backtest: bt && bt.origins.length > 0 ? { origins: bt.origins.length, crps: bt.crps, coverage: bt.coverage, baselineCrps: base ? base.crps : NaN } : null,
    calibration,
    fitted: fittedValues,
    backtestForecasts,
    nobs: fitted.nobs,
    horizon: h,
    seed,
  };
}
