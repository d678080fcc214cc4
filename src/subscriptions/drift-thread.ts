/**
 * The drift scoring thread: fits and steps the one-step models (`engine/drift`) off the event
 * loop, so scoring never competes with requests for it. Pure computation: the state comes in with
 * the job and goes back with the result.
 */
import { scoreDrift, startDrift } from '../engine/drift/score';
import { serveThreadRpc } from '../thread-rpc';
import type { DriftJob, DriftJobResult } from './drift-job';

/** Score every item of a job. */
export function runDriftJob(job: DriftJob): DriftJobResult[] {
  const series = { values: job.values, firstIndex: job.firstIndex };
  return job.items.map((item) => {
    const state = item.state ?? startDrift(series, job.info, item.frontier);
    const r = scoreDrift(state, series, job.info, item.level);
    return { key: item.key, state: r.state, scored: r.scored, misses: r.misses, transitions: r.transitions };
  });
}

serveThreadRpc(runDriftJob);
