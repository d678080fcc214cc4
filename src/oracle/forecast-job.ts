/** The messages between the oracle and its forecast workers (structured-clone safe). */
import type { Params, SeriesInfo } from '../engine/types';
import type { DetailRequest, NodeDetail } from '../graph/node-detail';
import type { StepSummary } from './summary';

/** One series to forecast and what to report about it. */
export interface ForecastJob {
  /** Identifies the fit: series digest + model spec (model, horizon, seed, info). */
  readonly fitKey: string;
  readonly series: Float64Array;
  readonly info: SeriesInfo;
  readonly horizon: number;
  readonly seed: number;
  readonly model: string;
  /** Thresholds (undefined = default) and quantile levels for the summary. */
  readonly thresholds?: readonly number[];
  readonly levels: readonly number[];
  /**
   * Fit anew and answer from nothing cached (forensics replays): no summary or fit cache is
   * read or written and no identical job in flight is joined. Default false.
   */
  readonly fresh?: boolean;
  /** Also answer the detail hierarchical reconciliation needs (`graph/node-detail.ts`). */
  readonly detail?: DetailRequest;
  /**
   * Bounds to censor the answer to that the series itself need not respect (a node forecast from
   * its leaves' sum: the node's own bounds; `applyBounds`). The fit is the same without them.
   */
  readonly censor?: SeriesInfo['bounds'];
}

/** What a worker answers. */
export interface ForecastJobResult {
  readonly model: string;
  readonly requestedModel: string;
  readonly params: Params;
  readonly warnings: readonly string[];
  readonly intervalMethod: string;
  readonly confidence: number | null;
  readonly nobs: number;
  readonly summary: StepSummary;
  /** True when this job fitted the model (false: the worker's fit cache had it). */
  readonly fitted: boolean;
  /** When the job asked for it. */
  readonly detail?: NodeDetail;
}

/** An engine error carried across the thread boundary (classes do not survive structured clone). */
export interface ForecastJobError {
  readonly name: string;
  readonly message: string;
  readonly have?: number;
  readonly need?: number;
  /** With `have`: the observations counted are those of the last `within` steps (the longest history the engine fits). */
  readonly within?: number;
}

/**
 * A job, or a warm-up: a throw-away forecast that gets the engine's hot loops compiled before the
 * first real job reaches this worker (answered with a bare `{ id }`, nothing cached).
 */
export type WorkerRequest = { readonly id: number; readonly job: ForecastJob } | { readonly id: number; readonly warmup: true };
export type WorkerReply = { readonly id: number; readonly result?: ForecastJobResult; readonly error?: ForecastJobError };
