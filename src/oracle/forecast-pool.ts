/**
 * The forecast worker pool: fitting never runs on the event loop. Jobs go to a worker chosen by
 * hashing the fit key (so each worker's fitted-model cache sees the same series again);
 * identical jobs in flight share one promise (concurrent cold queries fit once); finished
 * summaries are kept in a main-thread LRU so warm queries do not cross threads at all.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ForecastJob, ForecastJobError, ForecastJobResult, WorkerReply } from './forecast-job';
import { workerScript } from '../worker-script';

/** An engine error re-raised on the main thread. */
export class ForecastJobFailed extends Error {
  constructor(readonly error: ForecastJobError) {
    super(error.message);
    this.name = 'ForecastJobFailed';
  }
}

interface Slot {
  readonly worker: Worker;
  readonly pending: Map<number, { resolve: (r: ForecastJobResult) => void; reject: (e: Error) => void }>;
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
}

const SUMMARY_CACHE_SIZE = 2048;

export class ForecastPool {
  private slots: Slot[] | undefined;
  private readonly inflight = new Map<string, Promise<ForecastJobResult>>();
  private readonly summaries = new Map<string, ForecastJobResult>();
  private nextId = 1;
  readonly stats: PoolStats = { fits: 0, summaryHits: 0, joined: 0, warmups: 0 };

  /** `size` workers (default: one per core), started on first use. */
  constructor(private readonly size: number = availableParallelism()) {}

  private spawn(): Slot {
    const worker = new Worker(workerScript(__dirname, 'forecast-worker'));
    const slot: Slot = { worker, pending: new Map() };
    worker.on('message', (reply: WorkerReply) => {
      if (reply.id === 0) {
        this.stats.warmups++;
        return;
      }
      const p = slot.pending.get(reply.id);
      if (!p) return;
      slot.pending.delete(reply.id);
      if (reply.error) p.reject(new ForecastJobFailed(reply.error));
      else p.resolve(reply.result!);
    });
    worker.on('error', (err) => {
      for (const p of slot.pending.values()) p.reject(err);
      slot.pending.clear();
    });
    worker.unref();
    return slot;
  }

  /** Forecast a job; see the class comment for caching and de-duplication (none for a `fresh` job). */
  run(job: ForecastJob): Promise<ForecastJobResult> {
    if (job.fresh) {
      return this.dispatch(job).then((result) => {
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
      return running.then((r) => ({ ...r, fitted: false }));
    }
    const promise = this.dispatch(job).then(
      (result) => {
        this.inflight.delete(key);
        if (result.fitted) this.stats.fits++;
        this.summaries.set(key, result);
        if (this.summaries.size > SUMMARY_CACHE_SIZE) this.summaries.delete(this.summaries.keys().next().value!);
        return result;
      },
      (err) => {
        this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, promise);
    return promise;
  }

  private dispatch(job: ForecastJob): Promise<ForecastJobResult> {
    const fresh = this.slots === undefined;
    this.slots ??= Array.from({ length: Math.max(1, this.size) }, () => this.spawn());
    const slot = this.slots[hash(job.fitKey) % this.slots.length];
    // the other fresh workers warm up (see forecast-worker.ts) while this one takes the job
    if (fresh) for (const other of this.slots) if (other !== slot) other.worker.postMessage({ id: 0, warmup: true });
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.ref(); // keep the process alive while work is pending
      slot.worker.postMessage({ id, job });
    }).finally(() => {
      if (slot.pending.size === 0) slot.worker.unref();
    }) as Promise<ForecastJobResult>;
  }

  /** Stop the workers. */
  async close(): Promise<void> {
    await Promise.all((this.slots ?? []).map((s) => s.worker.terminate()));
    this.slots = undefined;
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
