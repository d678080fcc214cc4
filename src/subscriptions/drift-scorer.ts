/**
 * The main thread's handle on the drift scoring thread (`drift-thread.ts`): one thread, started
 * on first use, jobs answered in order. Why one: scoring an observation costs microseconds and a
 * fit a few milliseconds, so one thread keeps up with ingest many times over (bench/drift.ts), and
 * the forecast workers keep the other cores.
 */
import { ThreadRpc } from '../thread-rpc';
import { workerScript } from '../worker-script';
import type { DriftJob, DriftJobResult } from './drift-job';

/** See the file comment. */
export class DriftScorer extends ThreadRpc<DriftJob, readonly DriftJobResult[]> {
  constructor() {
    super(workerScript(__dirname, 'drift-thread'), 'drift scoring');
  }

  /**
   * Score `owner`'s (an account's) job in the thread; accounts take turns. `move`: its values are
   * moved there, not copied (the caller's array is then emptied); `signal`: drop it when aborted.
   */
  score(job: DriftJob, options: { readonly owner: string; readonly move: boolean; readonly signal?: AbortSignal }): Promise<readonly DriftJobResult[]> {
    return this.call(job, { transfer: options.move ? [job.values.buffer as ArrayBuffer] : [], owner: options.owner, signal: options.signal });
  }
}
