/**
 * Forecasting a query's series and assembling its `Forecast`: one code path for the oracle
 * (live queries) and forensics (replays of recorded ones), so a replay computes exactly what
 * the query computed.
 */
import type { Forecast } from '../../gen/forecast/v1/oracle_service.pb';
import { formatTime } from '../clock';
import type { AxisRecord, EntityRecord } from '../entities/entity-store';
import { timeOf, type Frequency } from '../entities/frequency';
import { NO_BACKTEST_WARNING } from '../engine/backtest';
import type { SeriesInfo } from '../engine/types';
import { ServiceError } from '../rpc/errors';
import type { ForecastJobResult } from './forecast-job';
import { ForecastJobFailed, type ForecastPool, type RunOptions } from './forecast-pool';
import type { LoadedSeries } from './series-loader';
import { fitKeyOf } from './engine-info';

/** One series to forecast: its data and the model specification to fit. */
export interface AxisPlan {
  readonly entity: EntityRecord;
  readonly axis: AxisRecord;
  readonly series: LoadedSeries;
  /** Seasonal periods and kind given to the engine. */
  readonly info: SeriesInfo;
  /** Engine model specification (`auto` for live queries, the recorded one for replays). */
  readonly model: string;
  readonly seed: number;
}

/** A planned series with the engine's answer. */
export interface AxisOutcome extends AxisPlan {
  readonly result: ForecastJobResult;
}

/** What the forecast reports, from the request. */
export interface ReportSpec {
  readonly horizon: number;
  /** Thresholds for the first axis; undefined = default. */
  readonly thresholds: readonly number[] | undefined;
  /** Quantile levels for the first axis. */
  readonly levels: readonly number[];
}

/** Where the engine counted only the last steps of a series (`MAX_FIT_STEPS`), words that say so. */
export function withinText(within: number | undefined): string {
  return within === undefined ? '' : ` in its last ${within} steps (the longest history the engine fits)`;
}

/** Engine failures in a worker → the contract's errors, naming the axis. */
function jobError(err: unknown, entity: string, axis: string): unknown {
  if (!(err instanceof ForecastJobFailed)) return err;
  const e = err.error;
  if (e.name === 'InsufficientDataError') {
    return new ServiceError('insufficient_data', `axis ${axis} of ${entity} has ${e.have} observations${withinText(e.within)}; at least ${e.need} are needed to forecast it`, {
      axis,
      have: e.have,
      need: e.need,
    });
  }
  if (e.name === 'UnknownModelError') return new ServiceError('failed_precondition', `axis ${axis} of ${entity}: ${e.message}`, { axis });
  // Data the engine cannot use is the data's problem (422), not a server fault (500).
  if (e.name === 'InvalidSeriesError' || e.name === 'EngineError') return new ServiceError('insufficient_data', `axis ${axis} of ${entity} cannot be forecast: ${e.message}`, { axis });
  return new ServiceError('internal', 'internal error', undefined, undefined, { cause: new Error(`${e.name}: ${e.message}`) });
}

/**
 * Forecast every planned series in the worker pool; the first reports `spec`'s thresholds and
 * levels. `fresh`: fit anew, bypassing every cache (forensics), instead of reusing fits; `owner`
 * and `signal`: whose fits they are and when to give them up (`RunOptions`).
 */
export function forecastAxes(pool: ForecastPool, plans: readonly AxisPlan[], spec: ReportSpec, options: RunOptions & { readonly fresh?: boolean } = {}): Promise<AxisOutcome[]> {
  const { fresh = false, ...run } = options;
  return Promise.all(
    plans.map(async (plan, i) => {
      const { info, series } = plan;
      const fitKey = fitKeyOf(series.digest, plan.model, spec.horizon, plan.seed, info);
      try {
        const result = await pool.run({
          fitKey,
          series: series.values,
          info,
          horizon: spec.horizon,
          seed: plan.seed,
          model: plan.model,
          thresholds: i === 0 ? spec.thresholds : undefined,
          levels: i === 0 ? spec.levels : [],
          fresh,
        }, run);
        return { ...plan, result };
      } catch (err) {
        throw jobError(err, plan.entity.entity, plan.axis.name);
      }
    }),
  );
}

/** The `Forecast` of a query from its outcomes (the first is the reported axis). */
export function assembleForecast(outcomes: readonly AxisOutcome[], spec: ReportSpec, frequency: Frequency): Forecast {
  const first = outcomes[0];
  const summary = first.result.summary;
  const forecast: Forecast = {
    distribution: summary.distribution,
    confidence: first.result.confidence ?? 0,
    axesResolved: Object.fromEntries(outcomes.map((o) => [o.axis.name, o.result.summary.mean])),
    thresholds: summary.thresholds,
    quantiles: Object.fromEntries(spec.levels.map((p, i) => [String(p), summary.quantiles[i]])),
    horizon: spec.horizon,
    targetTime: formatTime(timeOf(frequency, first.series.lastIndex + spec.horizon)),
    model: first.result.model,
    warnings: outcomes.flatMap((o) => o.result.warnings.map((w) => `${o.axis.name}: ${w}`)),
    models: Object.fromEntries(outcomes.map((o) => [o.axis.name, o.result.model])),
  };
  // said once: the engine's own warning names a history too short to backtest (found by QA: both wordings in one answer)
  const said = first.result.warnings.some((w) => w.startsWith(NO_BACKTEST_WARNING));
  if (first.result.confidence === null && !said) forecast.warnings.push(`${first.axis.name}: confidence is 0 because the history is too short to backtest`);
  return forecast;
}
