/**
 * Worker thread of `forecast evaluate`: loads the benchmark file itself (cheaper than cloning
 * thousands of arrays through the message port), then scores the batches of series indices the
 * main thread sends until it receives `null`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadBenchmark } from './evaluate-data';
import { evaluateSeries } from './evaluate-series';
import { serveBatches } from './worker-batches';

/** What the main thread passes as `workerData`. */
export interface WorkerInput {
  readonly file: string;
  readonly limit?: number;
  readonly models: readonly string[];
  readonly level: number;
  readonly calibrate: 'auto' | 'off' | 'force';
}

if (parentPort) {
  const input = workerData as WorkerInput;
  const series = loadBenchmark(input.file, input.limit);
  serveBatches(parentPort, (i) => evaluateSeries(series[i], input.models, input.level, input.calibrate));
}
