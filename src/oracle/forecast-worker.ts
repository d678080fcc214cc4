/**
 * A forecast worker thread: fits with the engine off the event loop and keeps an LRU cache of
 * fitted results by fit key, so the same series and spec are fitted once. Jobs are routed to
 * workers by fit key, so a series always meets its own cache.
 */
import { parentPort } from 'node:worker_threads';
import { forecastSeries, InsufficientDataError, type ForecastResult } from '../engine/index';
import type { WorkerReply, WorkerRequest } from './forecast-job';
import { summarise } from './summary';

const CACHE_SIZE = 512;
const cache = new Map<string, ForecastResult>();

function fit(request: WorkerRequest): WorkerReply {
  const { id, job } = request;
  try {
    let result = cache.get(job.fitKey);
    const fitted = result === undefined;
    if (result) cache.delete(job.fitKey);
    result ??= forecastSeries(job.series, job.info, { horizon: job.horizon, seed: job.seed, model: job.model });
    cache.set(job.fitKey, result);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    const summary = summarise(result.distribution, job.horizon, job.thresholds, job.levels, job.info.kind ?? 'continuous');
    return {
      id,
      result: {
        model: result.model,
        requestedModel: result.requestedModel,
        params: result.params,
        warnings: result.warnings,
        intervalMethod: result.intervalMethod,
        confidence: result.confidence,
        nobs: result.nobs,
        summary,
        fitted,
      },
    };
  } catch (err) {
    const e = err as Error;
    return {
      id,
      error: {
        name: e?.name ?? 'Error',
        message: e?.message ?? String(err),
        have: err instanceof InsufficientDataError ? err.have : undefined,
        need: err instanceof InsufficientDataError ? err.need : undefined,
      },
    };
  }
}

parentPort?.on('message', (request: WorkerRequest) => parentPort!.postMessage(fit(request)));
