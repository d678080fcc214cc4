/**
 * What hierarchical reconciliation needs of one node's fitted forecast, beyond the summary a
 * depth-0 query reports: draws of the forecast step, the in-sample errors, and each backtest
 * origin's errors, draws and seasonal-naive CRPS at that step. Computed in the forecast worker
 * from the cached fit (so a depth query reuses the fits of depth-0 queries and vice versa);
 * plain arrays, safe to send between threads.
 */
import type { ForecastResult } from '../engine/index';
import { crps } from '../engine/metrics';
import { runningMean } from '../engine/math/stats';
import { baseDraws, quantileGrid } from '../engine/reconcile/index';

/**
 * A job's request for detail: `draws` stratified draws of the forecast step, `originDraws` of
 * each backtest origin's (fewer: they only feed the CRPS behind `confidence`).
 */
export interface DetailRequest {
  readonly draws: number;
  readonly originDraws: number;
}

/** One backtest origin of a node, at the forecast step. */
export interface OriginDetail {
  /** Index in the series of the origin's first forecast step. */
  readonly origin: number;
  /** Actual − mean at steps 1..h (NaN where the actual is missing or beyond the series). */
  readonly errors: Float64Array;
  /** The origin forecast's mean and draws at step h. */
  readonly mean: number;
  readonly grid: Float64Array;
  /** The actual at step h (NaN when missing). */
  readonly actual: number;
  /** CRPS of the seasonal-naive forecast from the same origin at step h (NaN without one). */
  readonly baselineCrps: number;
}

/** A node's forecast detail at step h (see the file comment). */
export interface NodeDetail {
  /** Mean and draws of the forecast at step h (`baseDraws`: a law the band floors at 0 is taken without that floor). */
  readonly mean: number;
  readonly grid: Float64Array;
  readonly residuals: Residuals;
  readonly origins: readonly OriginDetail[];
}

/**
 * In-sample one-step errors y − fitted (NaN where either is missing), from the first step with a
 * fitted value on. Why not the whole series: the engine fits at most its last `MAX_FIT_STEPS`
 * steps, so a longer series has no fitted value (an error of NaN) before them, and 200,000 steps
 * of NaN per node, sent to the reconcile worker and kept in the caches, were most of a depth
 * query's memory. Reconciliation reads only the times where every node has an error
 * (`completeRowIndices`), which the steps left out never are: its output is the same.
 */
export interface Residuals {
  /** Index in the series of `values[0]` (the series' length when no step has a fitted value). */
  readonly from: number;
  readonly values: Float64Array;
}

/** The `Residuals` of a model with in-sample values `fitted` (aligned with `series`; null: none). */
export function residualsOf(fitted: Float64Array | null, series: ArrayLike<number>): Residuals {
  let from = 0;
  while (from < series.length && (!fitted || Number.isNaN(fitted[from]))) from++;
  return { from, values: Float64Array.from({ length: series.length - from }, (_, k) => series[from + k] - fitted![from + k]) };
}

/** The detail of `result` (fitted on `series`, its errors `residuals`) at step `h`. */
export function nodeDetail(result: Pick<ForecastResult, 'distribution' | 'backtestForecasts'>, residuals: Residuals, series: ArrayLike<number>, h: number, request: DetailRequest): NodeDetail {
  const step = result.distribution.steps[h - 1];
  const origins = result.backtestForecasts.map((o) => {
    const at = (k: number) => (o.origin + k < series.length ? series[o.origin + k] : NaN);
    const actual = at(h - 1);
    const baseline = o.baseline?.steps[h - 1];
    const grid = quantileGrid(o.forecast.steps[h - 1], request.originDraws);
    return {
      origin: o.origin,
      errors: Float64Array.from({ length: h }, (_, k) => at(k) - o.forecast.mean[k]),
      // the draws' own mean, as the target step's law mean (`baseDraws`): not the point forecast,
      // a median for models in logs, on which the draws would be re-centred 3% low
      mean: runningMean(grid),
      grid,
      actual,
      baselineCrps: baseline && Number.isFinite(actual) ? crps(baseline, actual) : NaN,
    };
  });
  return { ...baseDraws(step, request.draws), residuals, origins };
}
