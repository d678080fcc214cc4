/**
 * Worker thread of `forecast evaluate-hierarchy`: loads the hierarchy file itself, then fits the
 * base forecast of each node index it is sent, through the engine facade exactly as the service
 * forecasts a series (`auto`, backtest, calibration), and returns what reconciliation needs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { forecastSeries, type ForecastResult } from '../engine/index';
import { baseDraws, quantileGrid } from '../engine/reconcile/index';
import { loadHierarchy } from './evaluate-hierarchy-data';
import { serveBatches } from './worker-batches';

/** What the main thread passes as `workerData`. */
export interface HierarchyWorkerInput {
  readonly file: string;
  readonly horizon: number;
  /** Draws per node and step. */
  readonly draws: number;
}

/** One node's base forecast. */
export interface BaseForecast {
  /** The fitted model, or `failed: …` when `auto` failed and seasonal naive stood in. */
  readonly model: string;
  /** Per step, the mean (the point forecast a depth-0 query reports). */
  readonly means: Float64Array;
  /** Per step, the mean and draws reconciliation takes (`baseDraws`: a law the band floors at 0 without that floor), as `grid`. */
  readonly baseMeans: Float64Array;
  readonly baseGrid: Float64Array;
  /** Per step, `draws` stratified draws (step-major). */
  readonly grid: Float64Array;
  /** In-sample one-step errors over the training part (NaN where the model has none). */
  readonly residuals: Float64Array;
  /** The backtest's errors: per origin (index in the training part), steps 1..h. */
  readonly backtest: { readonly origin: number; readonly errors: Float64Array }[];
}

/** Fit node `train` and describe its forecast (see `BaseForecast`). */
export function baseForecast(train: Float64Array, period: number, horizon: number, draws: number): BaseForecast {
  let result: ForecastResult;
  let model: string;
  try {
    result = forecastSeries(train, { period }, { horizon, seed: 1 });
    model = result.model;
  } catch (err) {
    result = forecastSeries(train, { period }, { horizon, seed: 1, model: 'snaive', confidence: false });
    model = `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  const grid = new Float64Array(horizon * draws);
  // as the service takes a node's base forecast to reconcile (`node-detail.ts`)
  const baseGrid = new Float64Array(horizon * draws);
  const baseMeans = new Float64Array(horizon);
  result.distribution.steps.forEach((step, k) => {
    grid.set(quantileGrid(step, draws), k * draws);
    const base = baseDraws(step, draws);
    baseGrid.set(base.grid, k * draws);
    baseMeans[k] = base.mean;
  });
  const residuals = Float64Array.from(train, (y, t) => (result.fitted ? y - result.fitted[t] : NaN));
  const backtest = result.backtestForecasts.map((o) => ({ origin: o.origin, errors: Float64Array.from(o.forecast.mean, (m, k) => (train[o.origin + k] ?? NaN) - m) }));
  return { model, means: Float64Array.from(result.distribution.mean), grid, baseMeans, baseGrid, residuals, backtest };
}

if (parentPort) {
  const input = workerData as HierarchyWorkerInput;
  const data = loadHierarchy(input.file, input.horizon);
  serveBatches(parentPort, (i) => baseForecast(data.nodes[i].values.slice(0, data.trainLength), data.period, input.horizon, input.draws));
}
