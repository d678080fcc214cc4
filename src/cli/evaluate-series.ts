/**
 * Score one benchmark series with one or more models (the unit of work of `forecast evaluate`,
 * run inside a worker thread). Each model goes through the engine facade exactly as the service
 * calls it, so the figures describe what users get.
 */
import { performance } from 'node:perf_hooks';
import { forecastSeries } from '../engine/index';
import { coverage, mase, maseScale, msis, scaledPinball, smape } from '../engine/metrics';
import type { SeriesInfo } from '../engine/types';
import type { BenchmarkSeries } from './evaluate-data';

/** How `evaluateSeries` forecasts and scores. */
export interface EvaluateOptions {
  /** Central interval level, e.g. 0.95. */
  readonly level: number;
  /** The facade's interval calibration (default `auto`, as the service). */
  readonly calibrate?: 'auto' | 'off' | 'force';
  /** Probabilities of the scaled pinball loss, default `PINBALL_PROBS`. */
  readonly quantiles?: readonly number[];
  /** Data kind when the record does not say (`count`: integer quantiles, as a count axis gets). */
  readonly kind?: 'continuous' | 'count';
}

/** Default probabilities of the scaled pinball loss: the median and the 90% and 95% service levels. */
export const PINBALL_PROBS: readonly number[] = [0.5, 0.9, 0.95];

/** One model's scores on one series. */
export interface ModelSeriesResult {
  readonly model: string;
  /** The fitted model's own name (e.g. `ETS(M,Ad,M)`), or the error message's model. */
  readonly fitted: string;
  readonly smape: number;
  readonly mase: number;
  readonly msis: number;
  readonly coverage: number;
  /** Scaled pinball loss of the `quantiles` (see `scaledPinball`). */
  readonly spl: number;
  /** Per step: 1 when the actual is inside the central interval, 0 outside, NaN when missing. */
  readonly inside: number[];
  /** Seconds spent in `forecastSeries` for this series. */
  readonly seconds: number;
  /** Set when the model failed and Naive2's forecast (zero-width intervals) was scored instead. */
  readonly error?: string;
}

/** All models' scores on one series, plus Naive2's for OWA. */
export interface SeriesResult {
  readonly id: string;
  readonly group: string;
  /** The record's forecast origin (`BenchmarkSeries.origin`), when `--origins` made it. */
  readonly origin?: number;
  readonly smapeNaive2: number;
  readonly maseNaive2: number;
  readonly models: ModelSeriesResult[];
}

/** Evaluate `series` with each of `models` at central interval `level` (e.g. 0.95). */
export function evaluateSeries(series: BenchmarkSeries, models: readonly string[], options: EvaluateOptions): SeriesResult {
  const { level, calibrate = 'auto', quantiles = PINBALL_PROBS } = options;
  const info = { period: series.period, periods: periodsFor(series), kind: series.kind ?? options.kind ?? 'continuous' };
  const h = series.horizon;
  const scale = maseScale(series.train, series.period);
  const naive2 = naive2Forecast(series.train, info, h);
  const alpha = 1 - level;
  const results: ModelSeriesResult[] = models.map((model) => {
    const t0 = performance.now();
    try {
      // as the service forecasts (calibration included), minus the confidence score, which changes no forecast
      const r = forecastSeries(series.train, info, { horizon: h, model, seed: 1, level, confidence: false, calibrate });
      const seconds = (performance.now() - t0) / 1000;
      const mean = r.distribution.mean;
      // a non-finite forecast is a failure, not a NaN hidden in the averages
      if (!mean.every(Number.isFinite)) throw new Error(`non-finite forecast from ${r.model}`);
      const lower = r.distribution.steps.map((s) => s.quantile(alpha / 2));
      const upper = r.distribution.steps.map((s) => s.quantile(1 - alpha / 2));
      const qs = quantiles.map((p) => r.distribution.steps.map((s) => s.quantile(p)));
      return {
        model,
        fitted: r.model,
        smape: smape(series.test, mean),
        mase: mase(series.test, mean, scale),
        msis: msis(series.test, lower, upper, scale, alpha),
        coverage: coverage(series.test, lower, upper),
        spl: scaledPinball(series.test, qs, quantiles, scale),
        inside: insideByStep(series.test, lower, upper),
        seconds,
      };
    } catch (err) {
      const seconds = (performance.now() - t0) / 1000;
      return {
        model,
        fitted: 'failed',
        smape: smape(series.test, naive2),
        mase: mase(series.test, naive2, scale),
        msis: msis(series.test, naive2, naive2, scale, alpha),
        coverage: coverage(series.test, naive2, naive2),
        spl: scaledPinball(series.test, quantiles.map(() => naive2), quantiles, scale),
        inside: insideByStep(series.test, naive2, naive2),
        seconds,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      };
    }
  });
  return {
    id: series.id,
    group: series.group,
    ...(series.origin !== undefined ? { origin: series.origin } : {}),
    smapeNaive2: smape(series.test, naive2),
    maseNaive2: mase(series.test, naive2, scale),
    models: results,
  };
}

/**
 * Naive2's forecast, the benchmark every model is scored against (and what a failed model is
 * scored as); for a series too short for it (one value), that value carried forward, so one such
 * series never stops the evaluation of the others.
 */
function naive2Forecast(train: ArrayLike<number>, info: SeriesInfo, h: number): Float64Array {
  try {
    return forecastSeries(train, info, { horizon: h, model: 'naive2', confidence: false }).distribution.mean;
  } catch {
    let last = NaN;
    for (let i = 0; i < train.length; i++) if (Number.isFinite(train[i])) last = train[i];
    return new Float64Array(h).fill(last);
  }
}

/** Per step: 1 inside [lower, upper], 0 outside, NaN for a missing actual. */
export function insideByStep(actual: ArrayLike<number>, lower: ArrayLike<number>, upper: ArrayLike<number>): number[] {
  return Array.from(actual, (y, i) => (Number.isNaN(y) ? NaN : y >= lower[i] && y <= upper[i] ? 1 : 0));
}

/**
 * Seasonal periods a model may use beyond the competition's one (README: "A model may use more
 * periods than this one where the frequency implies them (hourly: 24 and 168)"): hourly adds the
 * week (168) when the training data covers at least three weeks, weekly data (declared period 1)
 * the year (52) whatever the length, daily data (period 7) the year (365) whatever the length, as
 * the service gives a daily entity (`src/oracle/engine-info.ts`). Why weekly always: `auto` routes weekly data to the local
 * autoregression by this declared cycle (`registry.ts`), which uses the yearly lags only from three
 * years on and short lags before (M4 weekly, the 65 series under 156 points: OWA 0.957 with the
 * default combination → 0.94 with the AR); the models that need three cycles check it themselves.
 */
export function periodsFor(series: BenchmarkSeries): number[] {
  const out = series.period > 1 ? [series.period] : [];
  if (series.group === 'hourly' && series.period === 24 && series.train.length >= 3 * 168) out.push(168);
  if (series.group === 'weekly' && series.period === 1) out.push(52);
  if (series.group === 'daily' && series.period === 7) out.push(365);
  return out;
}
