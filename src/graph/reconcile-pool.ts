/**
 * One worker thread for reconciliation, started on first use and kept unreferenced while idle
 * (so it never holds the process open). Requests queue in the thread; replies match by id.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../worker-script';
import type { AxisReconcileInput, AxisReconcileOutput } from './hierarchy-reconcile';
import type { ReconcileReply } from './reconcile-worker';

export class ReconcilePool {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (o: AxisReconcileOutput) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private start(): Worker {
    const worker = new Worker(workerScript(__dirname, 'reconcile-worker'));
    worker.on('message', (reply: ReconcileReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.error !== undefined) p.reject(new Error(`reconciliation failed: ${reply.error}`));
      else p.resolve(reply.output!);
    });
    worker.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      this.worker = undefined;
    });
    worker.unref();
    return worker;
  }

  /** Reconcile one axis in the worker thread. */
  run(input: AxisReconcileInput): Promise<AxisReconcileOutput> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, input });
    });
  }

  /** Stop the thread. */
  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
