/**
 * Work that callers asking the same thing share while it runs (identical depth queries in flight:
 * found by QA, twelve identical cold queries over 800 leaves each reconciled on their own, one after
 * another, and the last waited 3.4 times as long as one reconciliation takes). The work runs once,
 * with a signal of its own that aborts when every caller has gone away — so its fits and its
 * reconciliation are dropped or stopped as one caller's would be — or when the work itself fails,
 * so what it queued for other parts (fits of other nodes) is dropped rather than run for nobody.
 * Each caller still leaves alone: its promise fails with its own signal's reason at once, while the
 * others keep waiting. A caller without a signal pins the work (it always finishes). A run whose
 * callers all left is out of the map at once: a caller arriving later starts it afresh.
 */
import { onAbort } from './abort';

interface Run<T> {
  readonly promise: Promise<T>;
  readonly controller: AbortController;
  waiting: number;
  pinned: boolean;
}

/** What the runs did: works started, callers that joined one already running, runs abandoned by every caller. */
export interface SharedRunStats {
  started: number;
  joined: number;
  abandoned: number;
}

export class SharedRuns<T> {
  private readonly running = new Map<string, Run<T>>();
  readonly stats: SharedRunStats = { started: 0, joined: 0, abandoned: 0 };

  /** Runs in progress (for tests and stats). */
  get size(): number {
    return this.running.size;
  }

  /**
   * `work`'s result for `key`, shared with every caller of the same key while it runs; `key`
   * undefined runs it for this caller alone (with the same abort-on-failure signal).
   */
  run(key: string | undefined, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let run = key === undefined ? undefined : this.running.get(key);
    if (run) this.stats.joined++;
    else {
      this.stats.started++;
      const controller = new AbortController();
      const promise = Promise.resolve()
        .then(() => work(controller.signal))
        .catch((err: unknown) => {
          controller.abort(err);
          throw err;
        })
        .finally(() => {
          if (key !== undefined && this.running.get(key) === run) this.running.delete(key);
        });
      // every caller handles the outcome through its own promise; this one only must not go unhandled
      promise.catch(() => undefined);
      run = { promise, controller, waiting: 0, pinned: false };
      if (key !== undefined) this.running.set(key, run);
    }
    return this.wait(key, run, signal);
  }

  private wait(key: string | undefined, run: Run<T>, signal: AbortSignal | undefined): Promise<T> {
    if (!signal) {
      run.pinned = true;
      return run.promise;
    }
    run.waiting++;
    return new Promise<T>((resolve, reject) => {
      const stop = onAbort(signal, () => {
        reject(signal.reason);
        run.waiting--;
        if (run.waiting > 0 || run.pinned) return;
        if (key !== undefined && this.running.get(key) === run) this.running.delete(key);
        this.stats.abandoned++;
        run.controller.abort(signal.reason);
      });
      run.promise.then(
        (value) => {
          stop();
          resolve(value);
        },
        (err: unknown) => {
          stop();
          reject(err);
        },
      );
    });
  }
}
