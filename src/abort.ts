/**
 * Listening to a call's abort signal from many pieces of work at once (a depth query waits for a
 * fit per entity and axis, up to thousands, each listening until it settles): Node warns of a
 * leak from 11 listeners on one signal, so the limit is lifted — once per signal, and only for
 * signals work actually listens to. Why not for every call's signal in the pipeline: that put a
 * property write on every call's hot path, and gRPC's warm queries measured ~7% fewer per second.
 */
import { setMaxListeners } from 'node:events';

const lifted = new WeakSet<AbortSignal>();

/** Call `listener` once when `signal` aborts; returns what stops listening (call it when the work settles). */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (!lifted.has(signal)) {
    setMaxListeners(0, signal);
    lifted.add(signal);
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}
