/**
 * The drift scoring thread: fits and steps the one-step models (`engine/drift`) off the event
 * loop, so scoring never competes with requests for it. Pure computation: the state comes in with
 * the job and goes back with the result.
 */
import { parentPort } from 'node:worker_threads';
import { scoreDrift, startDrift } from '../engine/drift/score';
import type { DriftJob, DriftJobResult, DriftReply, DriftRequest } from './drift-job';

/** Score every item of a job. */
export function runDriftJob(job: DriftJob): DriftJobResult[] {
  const series = { values: job.values, firstIndex: job.firstIndex };
  return job.items.map((item) => {
    const state = item.state ?? startDrift(series, job.info, item.frontier);
    const r = scoreDrift(state, series, job.info, item.level);
    return { key: item.key, state: r.state, scored: r.scored, misses: r.misses, transitions: r.transitions };
  });
}

if (parentPort) {
  parentPort.on('message', (request: DriftRequest) => {
    let reply: DriftReply;
    try {
      reply = { id: request.id, results: runDriftJob(request.job) };
    } catch (err) {
      reply = { id: request.id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
    }
    parentPort!.postMessage(reply);
  });
}
