/**
 * Forecast jobs for the nodes of a graph query, built exactly as the oracle builds a depth-0
 * job (same fit key, `fitKeyOf`: series digest, model, horizon, seed, periods, kind, bounds), so the worker's fit
 * cache serves both: a depth query after depth-0 queries of its nodes refits nothing, and the
 * other way round.
 */
import type { AxisKind, AxisRecord, EntityRecord } from '../entities/entity-store';
import type { SeriesInfo } from '../engine/types';
import type { Hierarchy } from './hierarchy-graph';
import type { ForecastJob, ForecastJobResult } from '../oracle/forecast-job';
import { ForecastJobFailed, type ForecastPool, type RunOptions } from '../oracle/forecast-pool';
import { axisInfo, boundsOf, fitKeyOf, seedOf, type AxisShape } from '../oracle/engine-info';
import type { LoadedSeries } from '../oracle/series-loader';
import { withinText } from '../oracle/axis-forecast';
import { MAX_MAGNITUDE, MIN_MAGNITUDE } from '../engine/index';

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

/**
 * Run a node job (`run`: whose, and when to give it up); an engine refusal (too little data, an
 * invalid series) is an outcome, anything else throws. Stored values are finite, so a value that
 * is not is a sum of leaves beyond a double's range (two leaves at 1e308): said so, where the
 * engine would report `y[0] is Infinity` of a series the caller never sent (found by QA).
 */
export async function runNodeJob(pool: ForecastPool, job: ForecastJob, run: RunOptions): Promise<NodeOutcome> {
  let overflows = 0;
  for (const v of job.series) if (v === Infinity || v === -Infinity) overflows++;
  if (overflows > 0) {
    return { ok: false, reason: `the sum of its leaves overflows (beyond ±${Number.MAX_VALUE.toPrecision(3)}) at ${overflows} of its steps; the engine forecasts series whose largest absolute value lies between ${MIN_MAGNITUDE} and ${MAX_MAGNITUDE}: store the leaves in another unit` };
  }
  try {
    return { ok: true, result: await pool.run(job, run), seed: job.seed };
  } catch (err) {
    if (!(err instanceof ForecastJobFailed)) throw err;
    const e = err.error;
    if (e.name === 'InsufficientDataError') return { ok: false, reason: `${e.have} observations${withinText(e.within)}; at least ${e.need} are needed` };
    if (e.name === 'InvalidSeriesError') return { ok: false, reason: e.message };
    throw err;
  }
}

/** What a replay (forensics) recorded of a depth query's nodes. */
export interface NodeReplay {
  readonly specOf: (entity: string, axis: string) => string | undefined;
  /** The bounds recorded for the node (a node without data of its own may have had others then). */
  readonly boundsOf: (entity: string, axis: string) => SeriesInfo['bounds'];
  /** The seasons recorded for the node (its entity's `season_length` may have changed since). */
  readonly seasonsOf: (entity: string, axis: string) => Pick<SeriesInfo, 'period' | 'periods'> | undefined;
  /** Grid steps of the series the query read (its manifest's inputs, first to last observation each). */
  readonly steps: number;
}

/** Axis `name` of `entity` as the entity defines it (undefined: it has none, its node is a sum). */
export function ownAxis(hierarchy: Pick<Hierarchy, 'records'>, entity: string, name: string): AxisRecord | undefined {
  return hierarchy.records.get(entity)!.axes.find((a) => a.name === name);
}

/**
 * The bounds node `entity`'s answer is censored to: its axis's, or in a replay those recorded
 * (a node without data of its own may have changed them since; one with data cannot).
 */
export function nodeBounds(hierarchy: Pick<Hierarchy, 'records'>, replay: NodeReplay | undefined, axis: string, entity: string): SeriesInfo['bounds'] {
  if (replay) return replay.boundsOf(entity, axis);
  const own = ownAxis(hierarchy, entity, axis);
  return own ? boundsOf(own) : undefined;
}

/**
 * What a node's model is told of its axis: its kind, and its bounds (`nodeBounds`) when the node
 * is forecast from its own data; the kind alone when it is forecast from the sum of its leaves,
 * which its bounds do not describe (a sum of shares is no share; its reconciled forecast is still
 * censored to them, `censorToNodeBounds`).
 */
export function fittedShape(hierarchy: Pick<Hierarchy, 'records'>, replay: NodeReplay | undefined, axis: { readonly axis: string; readonly kind: AxisKind }, node: { readonly entity: string; readonly own: boolean }): AxisShape {
  const bounds = node.own ? nodeBounds(hierarchy, replay, axis.axis, node.entity) : undefined;
  // a replay fits with the recorded seasons (found by QA: a depth query's replay used the current `season_length`)
  const seasons = replay?.seasonsOf(node.entity, axis.axis);
  return { kind: axis.kind, lowerBound: bounds?.lower, upperBound: bounds?.upper, ...(seasons ? { seasons } : {}) };
}
