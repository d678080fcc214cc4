/**
 * Worker thread of `forecast evaluate`: loads the benchmark file itself (cheaper than cloning
 * thousands of arrays through the message port), then scores the batches of series indices the
 * main thread sends until it receives `null`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { evaluationSeries, type SeriesReshape, type SeriesSelection } from './evaluate-data';
import { evaluateSeries, type EvaluateOptions } from './evaluate-series';
import { serveBatches } from './worker-batches';

/** What the main thread passes as `workerData`. */
export interface WorkerInput extends EvaluateOptions {
  readonly file: string;
  readonly select: SeriesSelection;
  readonly reshape?: SeriesReshape;
  readonly models: readonly string[];
}

if (parentPort) {
  const port = parentPort;
  const input = workerData as WorkerInput;
  const series = evaluationSeries(input.file, input.select, input.reshape);
  serveBatches(port, (i) => evaluateSeries(series[i], input.models, input));
}
