/**
 * A forecast worker thread: fits with the engine off the event loop and keeps an LRU cache of
 * fitted results by fit key, so the same series and spec are fitted once. Jobs are routed to
 * workers by fit key, so a series always meets its own cache.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, parentPort } from 'node:worker_threads';
import { applyBounds, forecastSeries, InsufficientDataError, type ForecastResult } from '../engine/index';
import { Rng } from '../engine/rng';
import { intersectBounds } from '../engine/reconcile/structure';
import { nodeDetail, residualsOf, type Residuals } from '../graph/node-detail';
import type { WorkerReply, WorkerRequest } from './forecast-job';
import { summarise } from './summary';

const CACHE_SIZE = 512;

/** Nice value of a fitting thread: below the event loop, which must stay responsive. */
export const WORKER_NICE = 10;

/**
 * Run this thread at a lower CPU priority than the event loop. Why: the pool has one worker per
 * core, so a burst of cold queries keeps every core busy fitting, and the kernel then shares
 * them evenly with the event loop — health checks and warm queries waited tens of milliseconds
 * for a core. On Linux a thread's id (from /proc/thread-self) can be given its own priority;
 * elsewhere, or without permission, this does nothing.
 */
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, WORKER_NICE);
  } catch {
    // not Linux, or not allowed: the thread keeps the default priority
  }
}
if (!isMainThread) lowerPriority();
/**
 * A fit as cached: the engine's result without its in-sample values, which are as long as the
 * series (up to `MAX_SERIES_STEPS`), and instead the errors a depth query needs, as long as the
 * stretch fitted (`residualsOf`: at most `MAX_FIT_STEPS`).
 */
interface CachedFit {
  readonly result: Omit<ForecastResult, 'fitted'>;
  readonly residuals: Residuals;
}
const cache = new Map<string, CachedFit>();

/**
 * A forecast of a fixed synthetic daily series (trend, weekly cycle, seeded noise) through the
 * service's default path. Why: the first forecast in a fresh thread runs the engine's loops
 * unoptimised and takes ~4× a warm one (measured: ~450 ms against ~100 ms for a 1,000-point daily
 * series); doing that while the worker is idle keeps it out of a user's cold query.
 */
function warmUp(): void {
  const rng = new Rng(1);
  const y = Float64Array.from({ length: 600 }, (_, i) => 100 + 0.05 * i + 10 * Math.sin((2 * Math.PI * i) / 7) + 3 * rng.normal());
  try {
    forecastSeries(y, { period: 7 }, { horizon: 14 });
  } catch {
    // a warm-up that fails only costs the speed-up
  }
}

/** What the cache keeps of `result`, fitted on `series` (`CachedFit`). */
function cachedFit({ fitted, ...result }: ForecastResult, series: Float64Array): CachedFit {
  return { result, residuals: residualsOf(fitted, series) };
}

function fit(request: WorkerRequest): WorkerReply {
  if ('warmup' in request) {
    warmUp();
    return { id: request.id };
  }
  const { id, job } = request;
  try {
    // A fresh job (forensics) neither reads nor fills the cache.
    let entry = job.fresh ? undefined : cache.get(job.fitKey);
    const fitted = entry === undefined;
    if (entry) cache.delete(job.fitKey);
    entry ??= cachedFit(forecastSeries(job.series, job.info, { horizon: job.horizon, seed: job.seed, model: job.model }), job.series);
    const { result } = entry;
    if (!job.fresh) {
      cache.set(job.fitKey, entry);
      if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    const censored = job.censor ? applyBounds(result.distribution, job.censor) : undefined;
    const bounds = intersectBounds(job.info.bounds, job.censor);
    const summary = summarise(censored?.distribution ?? result.distribution, job.horizon, job.thresholds, job.levels, job.info.kind ?? 'continuous', bounds);
    return {
      id,
      result: {
        model: result.model,
        requestedModel: result.requestedModel,
        params: result.params,
        warnings: censored?.warning ? [...result.warnings, censored.warning] : result.warnings,
        intervalMethod: result.intervalMethod,
        confidence: result.confidence,
        nobs: result.nobs,
        summary,
        fitted,
        detail: job.detail ? nodeDetail(result, entry.residuals, job.series, job.horizon, job.detail) : undefined,
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
        within: err instanceof InsufficientDataError ? err.within : undefined,
      },
    };
  }
}

parentPort?.on('message', (request: WorkerRequest) => parentPort!.postMessage(fit(request)));
