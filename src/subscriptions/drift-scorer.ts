/**
 * The main thread's handle on the drift scoring thread (`drift-thread.ts`): one thread, started
 * on first use, jobs answered in order. Why one: scoring an observation costs microseconds and a
 * fit a few milliseconds, so one thread keeps up with ingest many times over (bench/drift.ts), and
 * the forecast workers keep the other cores.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../worker-script';
import type { DriftJob, DriftJobResult, DriftReply } from './drift-job';

/** See the file comment. */
export class DriftScorer {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (r: readonly DriftJobResult[]) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  /** Score a job in the thread. */
  score(job: DriftJob): Promise<readonly DriftJobResult[]> {
    const worker = (this.worker ??= this.spawn());
    const id = this.nextId++;
    return new Promise<readonly DriftJobResult[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, job }, [job.values.buffer as ArrayBuffer]);
    }).finally(() => {
      if (this.pending.size === 0) this.worker?.unref();
    });
  }

  private spawn(): Worker {
    const worker = new Worker(workerScript(__dirname, 'drift-thread'));
    worker.on('message', (reply: DriftReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (reply.error !== undefined) p.reject(new Error(`drift scoring failed: ${reply.error}`));
      else p.resolve(reply.results ?? []);
    });
    worker.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.worker = undefined;
    });
    worker.unref();
    return worker;
  }

  /** Stop the thread. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}
