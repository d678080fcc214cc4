/**
 * Worker thread of `forecast evaluate`: loads the benchmark file itself (cheaper than cloning
 * thousands of arrays through the message port), then scores the batches of series indices the
 * main thread sends until it receives `null`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadBenchmark } from './evaluate-data';
import { evaluateSeries, type SeriesResult } from './evaluate-series';

/** What the main thread passes as `workerData`. */
export interface WorkerInput {
  readonly file: string;
  readonly limit?: number;
  readonly models: readonly string[];
  readonly level: number;
  readonly calibrate: 'auto' | 'off' | 'force';
}

/** Messages from a worker. */
export type WorkerMessage = { readonly kind: 'ready' } | { readonly kind: 'results'; readonly results: SeriesResult[] };

if (parentPort) {
  const port = parentPort;
  const input = workerData as WorkerInput;
  const series = loadBenchmark(input.file, input.limit);
  port.on('message', (batch: number[] | null) => {
    if (batch === null) {
      port.close();
      return;
    }
    const results = batch.map((i) => evaluateSeries(series[i], input.models, input.level, input.calibrate));
    port.postMessage({ kind: 'results', results } satisfies WorkerMessage);
  });
  port.postMessage({ kind: 'ready' } satisfies WorkerMessage);
}
