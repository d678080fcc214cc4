/**
 * The worker pool and progress line of the evaluation commands (`forecast evaluate`,
 * `forecast evaluate-hierarchy`): items are numbered 0..n−1, handed to worker threads in small
 * batches of indices, and their results gathered in input order.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { workerScript } from '../worker-script';
import { UsageError } from './args';

/**
 * Most worker threads `--workers` may ask for. Each holds its own engine and heap (about 30 MB):
 * found by QA, `--workers 100` took 3.3 GB, and a thousand would take more than a machine has.
 */
export const MAX_WORKERS = 64;

/** The worker threads to start: as many as `--workers` asks (at most `MAX_WORKERS`), else one per core up to it. */
export function workerCount(asked: number | undefined): number {
  if (asked !== undefined && asked > MAX_WORKERS) throw new UsageError(`--workers must be at most ${MAX_WORKERS}, got ${asked}`);
  return asked ?? Math.min(availableParallelism(), MAX_WORKERS);
}

/** Indices per message: small, so the threads stay evenly loaded to the end. */
const BATCH = 4;

/** What an evaluation worker posts: once `ready`, then one `results` message per batch. */
export type BatchMessage<R> = { readonly kind: 'ready' } | { readonly kind: 'results'; readonly results: R[] };

/**
 * Run `n` items on `count` threads of the worker script `script` (beside `dir`, see
 * `workerScript`), which receives `input` as its workerData, then arrays of indices until `null`.
 */
export function runWorkers<R>(dir: string, script: string, input: unknown, n: number, count: number, progress: (done: number) => void): Promise<R[]> {
  const out = new Array<R>(n);
  let next = 0;
  let done = 0;
  return new Promise((resolvePromise, reject) => {
    let live = count;
    for (let w = 0; w < count; w++) {
      const worker = new Worker(workerScript(dir, script), { workerData: input });
      let pending: number[] = [];
      const feed = () => {
        pending = [];
        while (pending.length < BATCH && next < n) pending.push(next++);
        worker.postMessage(pending.length > 0 ? pending : null);
      };
      worker.on('message', (msg: BatchMessage<R>) => {
        if (msg.kind === 'results') {
          msg.results.forEach((r, j) => (out[pending[j]] = r));
          done += msg.results.length;
          progress(done);
        }
        feed();
      });
      worker.on('error', reject);
      worker.on('exit', (code) => {
        if (code !== 0) reject(new Error(`evaluation worker exited with code ${code}`));
        else if (--live === 0) resolvePromise(out);
      });
    }
  });
}

/**
 * The worker side of `runWorkers`: answer each batch of indices with `work(index)` for each,
 * and close on `null`.
 */
export function serveBatches<R>(port: import('node:worker_threads').MessagePort, work: (index: number) => R): void {
  port.on('message', (batch: number[] | null) => {
    if (batch === null) {
      port.close();
      return;
    }
    port.postMessage({ kind: 'results', results: batch.map(work) } satisfies BatchMessage<R>);
  });
  port.postMessage({ kind: 'ready' } satisfies BatchMessage<R>);
}

/** `[done/total] elapsed, eta` on stderr when it is a TTY; `-1` clears the line. */
export function progressPrinter(total: number): (done: number) => void {
  if (!process.stderr.isTTY) return () => {};
  const start = performance.now();
  let last = 0;
  return (done) => {
    if (done < 0) {
      process.stderr.write('\r\x1b[K');
      return;
    }
    const now = performance.now();
    if (now - last < 200 && done < total) return;
    last = now;
    const el = (now - start) / 1000;
    const eta = done > 0 ? (el * (total - done)) / done : 0;
    process.stderr.write(`\r\x1b[K[${done}/${total}] ${el.toFixed(0)} s elapsed, ~${eta.toFixed(0)} s left`);
  };
}
