/**
 * Forecast jobs for the nodes of a graph query, built exactly as the oracle builds a depth-0
 * job (same fit key, `fitKeyOf`: series digest, model, horizon, seed, periods, kind, bounds), so the worker's fit
 * cache serves both: a depth query after depth-0 queries of its nodes refits nothing, and the
 * other way round.
 */
import type { EntityRecord } from '../entities/entity-store';
import type { ForecastJob, ForecastJobResult } from '../oracle/forecast-job';
import { ForecastJobFailed, type ForecastPool, type RunOptions } from '../oracle/forecast-pool';
import { axisInfo, fitKeyOf, seedOf, type AxisShape } from '../oracle/engine-info';
import type { LoadedSeries } from '../oracle/series-loader';

/** The model the service fits: the engine's automatic selection. */
export const NODE_MODEL = 'auto';

/** The job forecasting `series` of `entity` `horizon` steps ahead. */
export function nodeJob(
  entity: EntityRecord,
  /** The axis's kind, and its bounds where the series is the entity's own data (not a sum of its leaves). */
  axis: AxisShape,
  series: LoadedSeries,
  horizon: number,
  /** What to report; `fresh` and `model` (forensics) fit anew with a recorded specification. */
  report: Pick<ForecastJob, 'thresholds' | 'levels' | 'detail' | 'fresh' | 'censor'> & { readonly model?: string },
): ForecastJob {
  const info = axisInfo(entity, axis);
  const seed = seedOf(series.digest);
  const fitKey = fitKeyOf(series.digest, NODE_MODEL, horizon, seed, info);
  return { fitKey, series: series.values, info, horizon, seed, model: NODE_MODEL, ...report };
}

/** A node job's outcome: the result, or the engine's reason it could not forecast. */
export type NodeOutcome = { readonly ok: true; readonly result: ForecastJobResult; readonly seed: number } | { readonly ok: false; readonly reason: string };

/** Run a node job (`run`: whose, and when to give it up); an engine refusal (too little data, an invalid series) is an outcome, anything else throws. */
export async function runNodeJob(pool: ForecastPool, job: ForecastJob, run: RunOptions): Promise<NodeOutcome> {
  try {
    return { ok: true, result: await pool.run(job, run), seed: job.seed };
  } catch (err) {
    if (!(err instanceof ForecastJobFailed)) throw err;
    const e = err.error;
    if (e.name === 'InsufficientDataError') return { ok: false, reason: `${e.have} observations; at least ${e.need} are needed` };
    if (e.name === 'InvalidSeriesError') return { ok: false, reason: e.message };
    throw err;
  }
}
