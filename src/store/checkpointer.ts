/**
 * WAL checkpoints of a SQLite file database, run on a thread of their own.
 *
 * Why: in WAL mode each commit only appends pages to the `-wal` file (no fsync with
 * `synchronous = NORMAL`); the costly part is the checkpoint, which copies those pages back into
 * the database and fsyncs both files. SQLite runs it automatically inside the commit that takes
 * the WAL past 1,000 pages — on the event loop. Under a steady stream of oracle queries (each
 * commits its audit record) that was one commit in ~250 taking 6–8 ms instead of ~0.1 ms, and
 * every call queued behind it waited too (measured; the largest part of the warm-query p99).
 * Here the writer connection's automatic checkpoints are turned off and this thread, with its own
 * connection, checkpoints every `CHECKPOINT_INTERVAL_MS` in two steps:
 * 1. PASSIVE: copies everything committed so far without blocking the writer or readers — the
 *    bulk of the work (2–4 ms for ~2 MB here);
 * 2. RESTART, without waiting: copies the few pages committed during step 1 and makes the next
 *    commit start the WAL again from the beginning, which keeps the file small. It holds the write
 *    lock for about a millisecond at most; if the lock is taken, or a reader still uses the WAL,
 *    it gives up until the next round (the writer commits in ~0.1 ms, so most rounds find the
 *    lock free even under heavy writing).
 * Why both: with PASSIVE alone, a commit lands during nearly every checkpoint, so the WAL is
 * never found fully copied back, and only a fully copied WAL is restarted — under the service's
 * commits and reads it grew without bound (measured: 40 MB in one benchmark run).
 *
 * Durability is unchanged: a commit is durable exactly as before (WAL, `synchronous = NORMAL`);
 * only where the copy-back happens moves. If the thread fails, the writer turns its automatic
 * checkpoints back on.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { workerScript } from '../worker-script';

/**
 * How often the thread checkpoints. A checkpoint with nothing new to copy does no I/O; at 200
 * oracle queries/s about 2 MB of WAL accumulates in this time.
 */
export const CHECKPOINT_INTERVAL_MS = 500;

export interface Checkpointer {
  /** Stop the thread (after a checkpoint in progress finishes) and close its connection. */
  close(): Promise<void>;
}

/**
 * Start checkpointing the SQLite file at `path` on a worker thread. `onFailure` runs (once) if
 * the thread cannot open the file or a checkpoint throws; the caller should then turn automatic
 * checkpoints back on.
 */
export function startCheckpointer(path: string, onFailure: (err: unknown) => void): Checkpointer {
  const worker = new Worker(workerScript(__dirname, 'checkpointer'), { workerData: { path } });
  let failed = false;
  const fail = (err: unknown) => {
    if (failed) return;
    failed = true;
    onFailure(err);
  };
  worker.on('error', fail);
  worker.on('message', (m: { error?: string; ready?: boolean }) => {
    if (m.error) fail(new Error(m.error));
    // Once it works, the thread must never keep the process alive on its own (until then, the
    // process waits to hear whether it does).
    if (m.ready) worker.unref();
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    close: async () => {
      failed = true; // a failure while stopping needs no fallback
      // Asked to stop, the thread closes its connection and ends; the process waits for that.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

function runThread(path: string): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const BetterSqlite3 = require('better-sqlite3') as typeof import('better-sqlite3');
  let db: import('better-sqlite3').Database;
  try {
    db = new BetterSqlite3(path, { fileMustExist: true });
    // Never wait for a lock. Why: RESTART holds the write lock while it waits (for readers
    // still using the WAL), and every commit of the service would wait with it.
    db.pragma('busy_timeout = 0');
  } catch (err) {
    parentPort!.postMessage({ error: `checkpointer cannot open the database: ${String(err)}` });
    return;
  }
  const copy = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
  const stop = () => {
    clearInterval(timer);
    db.close();
    parentPort!.close();
  };
  const timer = setInterval(() => {
    try {
      // A busy database is reported in the result (`busy: 1`), not thrown: the next round retries.
      const copied = copy.get() as { busy: number; log: number; checkpointed: number };
      // A reader still on an older snapshot (a long CLI read) kept part of the WAL: it cannot restart yet.
      if (copied.checkpointed === copied.log) restart.run();
    } catch (err) {
      parentPort!.postMessage({ error: `checkpoint failed: ${String(err)}` });
      stop();
    }
  }, CHECKPOINT_INTERVAL_MS);
  parentPort!.once('message', stop);
  parentPort!.postMessage({ ready: true });
}

if (!isMainThread && (workerData as { path?: string } | null)?.path && parentPort) runThread((workerData as { path: string }).path);
