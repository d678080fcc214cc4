/**
 * The reconcile worker thread: runs `reconcileAxis` off the event loop (a 425-node MinT with its
 * draws is a few hundred milliseconds of arithmetic). One request in, one reply out, by id.
 */
import { serveThreadRpc } from '../thread-rpc';
import { reconcileAxis } from './hierarchy-reconcile';

serveThreadRpc(reconcileAxis);
