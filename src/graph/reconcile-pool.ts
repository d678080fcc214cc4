/**
 * The reconciliation thread (`reconcile-worker.ts`): a 425-node MinT with its draws is a few
 * hundred milliseconds of arithmetic, kept off the event loop; one thread, started on first use.
 */
import { ThreadRpc } from '../thread-rpc';
import { workerScript } from '../worker-script';
import type { AxisReconcileInput, AxisReconcileOutput } from './hierarchy-reconcile';

export class ReconcilePool extends ThreadRpc<AxisReconcileInput, AxisReconcileOutput> {
  constructor() {
    super(workerScript(__dirname, 'reconcile-worker'), 'reconciliation');
  }
}
