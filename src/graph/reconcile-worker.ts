/**
 * The reconcile worker thread: runs `reconcileAxis` off the event loop (a 425-node MinT with its
 * draws is a few hundred milliseconds of arithmetic). One message in, one out, by id.
 */
import { parentPort } from 'node:worker_threads';
import { reconcileAxis, type AxisReconcileInput, type AxisReconcileOutput } from './hierarchy-reconcile';

/** A request to the worker. */
export interface ReconcileRequest {
  readonly id: number;
  readonly input: AxisReconcileInput;
}

/** The worker's answer: the output, or an error message. */
export interface ReconcileReply {
  readonly id: number;
  readonly output?: AxisReconcileOutput;
  readonly error?: string;
}

parentPort?.on('message', ({ id, input }: ReconcileRequest) => {
  try {
    parentPort!.postMessage({ id, output: reconcileAxis(input) } satisfies ReconcileReply);
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) } satisfies ReconcileReply);
  }
});
