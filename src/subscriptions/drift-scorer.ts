/**
 * The main thread's handle on the drift scoring thread (`drift-thread.ts`): one thread, started
 * on first use, requests answered one at a time with accounts in turn (`ThreadRpc`). Why one:
 * scoring an observation costs microseconds and a fit a few milliseconds, so one thread keeps up
 * with ingest many times over (bench/drift.ts), and the forecast workers keep the other cores.
 */
import { onAbort } from '../abort';
import { ThreadRpc } from '../thread-rpc';
import { workerScript } from '../worker-script';
import type { DriftJob, DriftJobItem, DriftJobResult } from './drift-job';

/**
 * Subscription-observations one request to the thread covers at most (about a quarter of a
 * second: QA measured 14 s for 300 subscriptions × 10,000 values), so another account's request
 * waits for one such slice, not for a whole entity's scoring.
 */
export const SCORING_TURN = 50_000;

/** See the file comment. */
export class DriftScorer extends ThreadRpc<DriftJob, readonly DriftJobResult[]> {
  constructor() {
    super(workerScript(__dirname, 'drift-thread'), 'drift scoring');
  }

  /**
   * Score `owner`'s (an account's) job. Subscriptions in the same state (stored state, level and,
   * without a state, start) are scored once — scoring is deterministic, so their results are the
   * same (found by QA: 300 subscriptions of one entity each scored the same 10,000 values) — and
   * the rest in requests of at most SCORING_TURN subscription-observations, queued together so
   * other accounts' requests take turns with them. One request moves the values to the thread;
   * several have them copied as each is sent. A request that fails drops the job's others (found
   * by review: they ran on for nobody); `signal` drops them all.
   */
  async scoreJob(job: DriftJob, owner: string, signal: AbortSignal): Promise<DriftJobResult[]> {
    const signatureOf = new Map<string, string>();
    const unique = new Map<string, DriftJobItem>();
    for (const item of job.items) {
      const signature = JSON.stringify([item.state, item.state ? null : item.frontier, item.level]);
      signatureOf.set(item.key, signature);
      if (!unique.has(signature)) unique.set(signature, item);
    }
    const last = job.firstIndex + job.values.length - 1;
    const slices: DriftJobItem[][] = [];
    let cost = Infinity;
    for (const item of unique.values()) {
      const c = Math.max(1, last - (item.state?.lastIndex ?? item.frontier));
      if (cost + c > SCORING_TURN) {
        slices.push([]);
        cost = 0;
      }
      slices[slices.length - 1].push(item);
      cost += c;
    }
    const dropped = new AbortController();
    const stop = signal.aborted ? (dropped.abort(signal.reason), () => {}) : onAbort(signal, () => dropped.abort(signal.reason));
    const options = { owner, transfer: slices.length === 1 ? [job.values.buffer as ArrayBuffer] : [], signal: dropped.signal };
    let answers: DriftJobResult[];
    try {
      answers = (await Promise.all(slices.map((items) => this.call({ ...job, items }, options)))).flat();
    } catch (error) {
      dropped.abort(error);
      throw error;
    } finally {
      stop();
    }
    const bySignature = new Map(answers.map((r) => [signatureOf.get(r.key)!, r]));
    return job.items.map((item) => ({ ...bySignature.get(signatureOf.get(item.key)!)!, key: item.key }));
  }
}
