/**
 * Worker thread of `forecast evaluate`: loads the benchmark file itself (cheaper than cloning
 * thousands of arrays through the message port), then scores the batches of series indices the
 * main thread sends until it receives `null`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadBenchmark, selectSeries, type SeriesSelection } from './evaluate-data';
import { evaluateSeries, type EvaluateOptions, type SeriesResult } from './evaluate-series';

/** What the main thread passes as `workerData`. */
export interface WorkerInput extends EvaluateOptions {
  readonly file: string;
  readonly select: SeriesSelection;
  readonly models: readonly string[];
}

/** Messages from a worker. */
export type WorkerMessage = { readonly kind: 'ready' } | { readonly kind: 'results'; readonly results: SeriesResult[] };

if (parentPort) {
  const port = parentPort;
  const input = workerData as WorkerInput;
  const series = selectSeries(loadBenchmark(input.file), input.select);
  port.on('message', (batch: number[] | null) => {
    if (batch === null) {
      port.close();
      return;
    }
    const results = batch.map((i) => evaluateSeries(series[i], input.models, input));
    port.postMessage({ kind: 'results', results } satisfies WorkerMessage);
  });
  port.postMessage({ kind: 'ready' } satisfies WorkerMessage);
}
