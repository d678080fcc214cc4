/**
 * The forecast worker pool: fitting never runs on the event loop. Jobs go to a worker chosen by
 * hashing the fit key (so each worker's fitted-model cache sees the same series again); each
 * worker takes at most `IN_FLIGHT_PER_WORKER` at a time, the rest wait on the main thread in a
 * `FairQueue` by account, so one account's depth query (a fit per entity) does not hold back
 * another account's fit. A job whose every caller went away (`signal`) is dropped before it runs
 * (one that runs finishes: its fit is cached for the next asker). Identical jobs in flight share
 * one fit (concurrent cold queries fit once); finished summaries are kept in a main-thread LRU
 * so warm queries do not cross threads at all.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { FairQueue } from '../fair-queue';
import type { ForecastJob, ForecastJobError, ForecastJobResult, WorkerReply } from './forecast-job';
import { workerScript } from '../worker-script';

/** An engine error re-raised on the main thread. */
export class ForecastJobFailed extends Error {
  constructor(readonly error: ForecastJobError) {
    super(error.message);
    this.name = 'ForecastJobFailed';
  }
}

/** Whose job it is (fair turns between accounts) and when its answer is no longer wanted. */
export interface RunOptions {
  /** An account id; accounts are served in turn. Default: one shared owner. */
  readonly owner?: string;
  /** Aborted when the caller went away: its promise rejects with the reason at once. */
  readonly signal?: AbortSignal;
}

/** One fit queued or running, and the callers waiting for it. */
interface Entry {
  readonly id: number;
  readonly job: ForecastJob;
  readonly owner: string;
  readonly slot: Slot;
  readonly promise: Promise<ForecastJobResult>;
  readonly resolve: (r: ForecastJobResult) => void;
  readonly reject: (e: Error) => void;
  /** Callers waiting that may go away; a caller without a signal pins the entry (it always runs). */
  waiting: number;
  pinned: boolean;
}

interface Slot {
  worker: Worker;
  readonly running: Map<number, Entry>;
  readonly queue: FairQueue<Entry>;
  /** Set by `close`: the worker's exit is then no death to recover from. */
  closed: boolean;
}

export interface PoolStats {
  /** Jobs that fitted a model in a worker. */
  fits: number;
  /** Jobs answered from the main-thread summary cache. */
  summaryHits: number;
  /** Jobs that joined an identical job in flight. */
  joined: number;
  /** Idle workers that finished their warm-up (see forecast-worker.ts). */
  warmups: number;
  /** Jobs dropped before they ran because every caller went away. */
  dropped: number;
}

const SUMMARY_CACHE_SIZE = 2048;
/**
 * Jobs a worker holds at once: one fitting and one ready behind it (no idle gap between jobs),
 * so a job queued by another account waits for at most two fits of this worker.
 */
const IN_FLIGHT_PER_WORKER = 2;

export class ForecastPool {
  private slots: Slot[] | undefined;
  private readonly inflight = new Map<string, Entry>();
  private readonly summaries = new Map<string, ForecastJobResult>();
  private nextId = 1;
  readonly stats: PoolStats = { fits: 0, summaryHits: 0, joined: 0, warmups: 0, dropped: 0 };

  /** `size` workers (default: one per core), started on first use. */
  constructor(private readonly size: number = availableParallelism()) {}

  private spawn(slot?: Slot): Slot {
    const worker = new Worker(workerScript(__dirname, 'forecast-worker'));
    const s: Slot = slot ?? { worker, running: new Map(), queue: new FairQueue(), closed: false };
    s.worker = worker;
    worker.on('message', (reply: WorkerReply) => {
      if (reply.id === 0) {
        this.stats.warmups++;
        return;
      }
      const e = s.running.get(reply.id);
      if (!e) return;
      s.running.delete(reply.id);
      if (reply.error) e.reject(new ForecastJobFailed(reply.error));
      else e.resolve(reply.result!);
      this.pump(s);
    });
    // a worker that dies fails the jobs it held; a new one takes the queue
    const died = (err: Error) => {
      if (s.worker !== worker || s.closed) return;
      for (const e of s.running.values()) e.reject(err);
      s.running.clear();
      this.spawn(s);
      this.pump(s);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`a forecast worker exited (code ${code})`)));
    worker.unref();
    return s;
  }

  /** Forecast a job; see the class comment for caching and de-duplication (none for a `fresh` job). */
  run(job: ForecastJob, options: RunOptions = {}): Promise<ForecastJobResult> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (job.fresh) {
      return this.wait(this.dispatch(job, options.owner ?? ''), signal).then((result) => {
        this.stats.fits++;
        return result;
      });
    }
    const key = `${job.fitKey}|${job.thresholds?.join(',') ?? 'default'}|${job.levels.join(',')}|${job.detail ? `d${job.detail.draws}/${job.detail.originDraws}` : ''}`;
    const cached = this.summaries.get(key);
    if (cached) {
      this.stats.summaryHits++;
      this.summaries.delete(key);
      this.summaries.set(key, cached);
      return Promise.resolve({ ...cached, fitted: false });
    }
    const running = this.inflight.get(key);
    if (running) {
      this.stats.joined++;
      return this.wait(running, signal).then((r) => ({ ...r, fitted: false }));
    }
    const entry = this.dispatch(job, options.owner ?? '');
    this.inflight.set(key, entry);
    // settled before any caller hears of it (registered first), so a caller's next query hits the cache
    entry.promise.then(
      (result) => {
        this.inflight.delete(key);
        if (result.fitted) this.stats.fits++;
        this.summaries.set(key, result);
        if (this.summaries.size > SUMMARY_CACHE_SIZE) this.summaries.delete(this.summaries.keys().next().value!);
      },
      () => this.inflight.delete(key),
    );
    return this.wait(entry, signal);
  }

  /** Stop the workers; jobs queued or running fail. */
  async close(): Promise<void> {
    const slots = this.slots ?? [];
    this.slots = undefined;
    const closed = new Error('the forecast pool was closed');
    for (const s of slots) {
      s.closed = true;
      for (const e of s.running.values()) e.reject(closed);
      s.running.clear();
      for (let e = s.queue.shift(); e; e = s.queue.shift()) e.reject(closed);
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** Queue `job` on its worker's slot. */
  private dispatch(job: ForecastJob, owner: string): Entry {
    const fresh = this.slots === undefined;
    this.slots ??= Array.from({ length: Math.max(1, this.size) }, () => this.spawn());
    const slot = this.slots[hash(job.fitKey) % this.slots.length];
    // the other fresh workers warm up (see forecast-worker.ts) while this one takes the job
    if (fresh) for (const other of this.slots) if (other !== slot) other.worker.postMessage({ id: 0, warmup: true });
    let resolve!: (r: ForecastJobResult) => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<ForecastJobResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const entry: Entry = { id: this.nextId++, job, owner, slot, promise, resolve, reject, waiting: 0, pinned: false };
    slot.queue.push(owner, entry);
    this.pump(slot);
    return entry;
  }

  /** Hand the slot's worker its next jobs, up to `IN_FLIGHT_PER_WORKER`. */
  private pump(slot: Slot): void {
    while (slot.running.size < IN_FLIGHT_PER_WORKER) {
      const e = slot.queue.shift();
      if (!e) break;
      slot.running.set(e.id, e);
      slot.worker.postMessage({ id: e.id, job: e.job });
    }
    // keep the process alive while work is pending
    if (slot.running.size > 0) slot.worker.ref();
    else slot.worker.unref();
  }

  /** A caller's promise for `entry`: its result, or the caller's signal's reason once it aborts. */
  private wait(entry: Entry, signal: AbortSignal | undefined): Promise<ForecastJobResult> {
    if (!signal) {
      entry.pinned = true;
      return entry.promise;
    }
    entry.waiting++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        reject(signal.reason);
        this.leave(entry);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      entry.promise.then(
        (r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  /** A caller of `entry` went away: drop the job if it waits and nobody else does. */
  private leave(entry: Entry): void {
    entry.waiting--;
    if (entry.waiting > 0 || entry.pinned || !entry.slot.queue.delete(entry.owner, entry)) return;
    this.stats.dropped++;
    entry.reject(new Error('every caller of this forecast went away before it ran'));
  }
}

/** FNV-1a of a string: a stable worker choice per fit key. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
