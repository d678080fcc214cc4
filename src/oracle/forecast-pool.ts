/**
 * The forecast worker pool: fitting never runs on the event loop. Jobs go to a worker chosen by
 * hashing the fit key (so each worker's fitted-model cache sees the same series again); each
 * worker takes at most `IN_FLIGHT_PER_WORKER` at a time, the rest wait on the main thread in a
 * `FairQueue` by account, so one account's depth query (a fit per entity) does not hold back
 * another account's fit. A job whose every caller went away (`signal`) is dropped before it runs
 * (one that runs finishes: its fit is cached for the next asker). Identical jobs of one account in
 * flight share one fit (concurrent cold queries fit once; another account's waits its own turn and
 * fits on its own: every cache is per account, see `run`); finished summaries are kept in a
 * main-thread LRU so warm queries do not cross threads at all.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { onAbort } from '../abort';
import { FairQueue } from '../fair-queue';
import type { ForecastJob, ForecastJobError, ForecastJobResult, WorkerReply } from './forecast-job';
import { workerScript } from '../worker-script';
import { boundsKey } from './engine-info';

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
  /** Its key in the in-flight map (shared jobs; undefined for a `fresh` one). */
  key?: string;
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
  /** Undefined after its worker died, until work comes for a new one. */
  worker: Worker | undefined;
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
  /** Worker threads started (one per slot, and one more after each death with work waiting). */
  starts: number;
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
  readonly stats: PoolStats = { fits: 0, summaryHits: 0, joined: 0, warmups: 0, dropped: 0, starts: 0 };

  /** `size` workers (default: one per core), started on first use; `script`: the worker's file (tests give others). */
  constructor(
    private readonly size: number = availableParallelism(),
    private readonly script?: string,
  ) {}

  /** A slot with its worker started. */
  private slot(): Slot {
    const s: Slot = { worker: undefined, running: new Map(), queue: new FairQueue(), closed: false };
    s.worker = this.start(s);
    return s;
  }

  /** A worker for `s`. */
  private start(s: Slot): Worker {
    const worker = new Worker(this.script ?? workerScript(__dirname, 'forecast-worker'));
    this.stats.starts++;
    let answered = false;
    worker.on('message', (reply: WorkerReply) => {
      answered = true;
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
    // A worker that dies fails the jobs it held, and a new one takes the queue when there is one.
    // One that dies before answering anything (it cannot start) fails the queue too, so a worker
    // that cannot start is tried again once per new job, never in a loop (found by review).
    const died = (err: Error) => {
      if (s.worker !== worker || s.closed) return;
      s.worker = undefined;
      for (const e of s.running.values()) e.reject(err);
      s.running.clear();
      if (!answered) for (let e = s.queue.shift(); e; e = s.queue.shift()) e.reject(err);
      this.pump(s);
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`a forecast worker exited (code ${code})`)));
    worker.unref();
    return worker;
  }

  /** Forecast a job; see the class comment for caching and de-duplication (none for a `fresh` job). */
  run(job: ForecastJob, options: RunOptions = {}): Promise<ForecastJobResult> {
    const { signal } = options;
    const owner = options.owner ?? '';
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (job.fresh) {
      return this.wait(this.dispatch(job, owner), signal).then((result) => {
        this.stats.fits++;
        return result;
      });
    }
    // Every cache is one account's: the worker's fits (by a fit key scoped to the owner) and the
    // summaries here. Why: a warm answer is 10–20× faster than a cold one, so an account that
    // knows a series (shared or public data) could tell by timing that another account had just
    // forecast it, and with which horizon, thresholds and levels (found by QA). Identical data in
    // two accounts is fitted once per account.
    job = { ...job, fitKey: `${owner}\u0000${job.fitKey}` };
    const censor = job.censor ? `|c${boundsKey(job.censor)}` : '';
    const key = `${job.fitKey}|${job.thresholds?.join(',') ?? 'default'}|${job.levels.join(',')}|${job.detail ? `d${job.detail.draws}/${job.detail.originDraws}` : ''}${censor}`;
    const cached = this.summaries.get(key);
    if (cached) {
      this.stats.summaryHits++;
      this.summaries.delete(key);
      this.summaries.set(key, cached);
      return Promise.resolve({ ...cached, fitted: false });
    }
    // Joined only within one account (the key holds the owner): another account's identical job
    // would wait in the first account's place in the queue (behind the rest of its depth query,
    // say) instead of its own.
    const running = this.inflight.get(key);
    if (running) {
      this.stats.joined++;
      return this.wait(running, signal).then((r) => ({ ...r, fitted: false }));
    }
    const entry = this.dispatch(job, owner);
    entry.key = key;
    this.inflight.set(key, entry);
    // settled before any caller hears of it (registered first), so a caller's next query hits the cache
    const done = () => {
      if (this.inflight.get(key) === entry) this.inflight.delete(key);
    };
    entry.promise.then(
      (result) => {
        done();
        if (result.fitted) this.stats.fits++;
        this.summaries.set(key, result);
        if (this.summaries.size > SUMMARY_CACHE_SIZE) this.summaries.delete(this.summaries.keys().next().value!);
      },
      done,
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
    await Promise.all(slots.map((s) => s.worker?.terminate()));
  }

  /** Queue `job` on its worker's slot. */
  private dispatch(job: ForecastJob, owner: string): Entry {
    const fresh = this.slots === undefined;
    this.slots ??= Array.from({ length: Math.max(1, this.size) }, () => this.slot());
    const slot = this.slots[hash(job.fitKey) % this.slots.length];
    // the other fresh workers warm up (see forecast-worker.ts) while this one takes the job
    if (fresh) for (const other of this.slots) if (other !== slot) other.worker?.postMessage({ id: 0, warmup: true });
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

  /** Hand the slot's worker (a new one if it died) its next jobs, up to `IN_FLIGHT_PER_WORKER`. */
  private pump(slot: Slot): void {
    while (slot.running.size < IN_FLIGHT_PER_WORKER && slot.queue.size > 0 && !slot.closed) {
      const worker = (slot.worker ??= this.start(slot));
      const e = slot.queue.shift()!;
      try {
        worker.postMessage({ id: e.id, job: e.job });
        slot.running.set(e.id, e);
      } catch (err) {
        // a job that cannot be sent fails alone (found by review: it held its place for ever)
        e.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    // keep the process alive while work is pending
    if (slot.running.size > 0) slot.worker?.ref();
    else slot.worker?.unref();
  }

  /** A caller's promise for `entry`: its result, or the caller's signal's reason once it aborts. */
  private wait(entry: Entry, signal: AbortSignal | undefined): Promise<ForecastJobResult> {
    if (!signal) {
      entry.pinned = true;
      return entry.promise;
    }
    entry.waiting++;
    return new Promise((resolve, reject) => {
      const stop = onAbort(signal, () => {
        reject(signal.reason);
        this.leave(entry);
      });
      entry.promise.then(
        (r) => {
          stop();
          resolve(r);
        },
        (e: unknown) => {
          stop();
          reject(e);
        },
      );
    });
  }

  /** A caller of `entry` went away: drop the job if it waits and nobody else does. */
  private leave(entry: Entry): void {
    entry.waiting--;
    if (entry.waiting > 0 || entry.pinned || !entry.slot.queue.delete(entry.owner, entry)) return;
    // out of the in-flight map at once: a caller joining in this same turn gets a new fit, not this failure
    if (entry.key !== undefined && this.inflight.get(entry.key) === entry) this.inflight.delete(entry.key);
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
