/**
 * Baseline families: naive, seasonal naive, random walk with drift (R forecast `naive`,
 * `snaive`, `rwf(drift = TRUE)`, i.e. `rw_model` + `forecast.rw_model`), and M4's Naive2
 * (Makridakis, Spiliotis & Assimakopoulos 2020): naive on the series seasonally adjusted by
 * classical multiplicative decomposition when the 90% ACF test says seasonal, reseasonalised.
 *
 * Intervals as R: residual mse × the number of seasonal steps (plus (k·se(b))² with drift).
 * Missing values: a missing y[t] is replaced by the value one lag earlier, as R does, before
 * the last cycle is read; residuals skip missing pairs. Unlike R, missing values at the end count
 * as steps: the walk is forecast from the last observation and its steps up to the series' end
 * dropped, so the drift and the spread of step k are those of the steps since the last value
 * (found by QA: R's way, a drift from a trend whose last 10 values were missing started 10 steps
 * behind, 95% coverage 0).
 */
import { multiplicativeSeasonalFigure } from '../decompose/classical';
import { InsufficientDataError, InvalidSeriesError } from '../errors';
import { countFinite } from '../math/stats';
import type { Fitted, ModelFamily, Series, SeriesInfo } from '../types';
import { dropLeading, linearGaussianForecast } from './naive-forecast';

/** Options of the random-walk family. */
export interface RandomWalkOptions {
  /** Lag of the walk: 1 (naive) or the seasonal period (snaive). Default 1. */
  readonly lag?: number;
  /** Estimate a drift (mean of the lag-differences). Default false. */
  readonly drift?: boolean;
}

/** Throw `InvalidSeriesError` on ±Infinity; NaN is "missing" and allowed. */
export function checkFinite(y: Series, model: string): void {
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (v === Infinity || v === -Infinity) throw new InvalidSeriesError(`${model}: y[${i}] is ${v}`);
  }
}

/** Fit a (seasonal) random walk, optionally with drift, as R's `rw_model`. */
export function fitRandomWalk(y: Series, lag: number, drift: boolean, name: string): Fitted {
  checkFinite(y, name);
  const n = y.length;
  const have = countFinite(y);
  const need = drift ? lag + 2 : lag + 1;
  if (have < need) throw new InsufficientDataError(have, need, name);
  // R: y[i] missing → filled with the filled value one lag earlier (chains through gaps).
  const filled = Float64Array.from(y);
  for (let i = lag; i < n; i++) if (!Number.isFinite(filled[i])) filled[i] = filled[i - lag];
  const fitted = new Float64Array(n).fill(NaN);
  for (let t = lag; t < n; t++) fitted[t] = filled[t - lag];
  let sum = 0;
  let count = 0;
  for (let t = lag; t < n; t++) {
    const r = y[t] - fitted[t];
    if (Number.isFinite(r)) {
      sum += r;
      count++;
    }
  }
  if (count < (drift ? 2 : 1)) throw new InsufficientDataError(count + lag, need, name);
  const b = drift ? sum / count : 0;
  let ss = 0;
  for (let t = lag; t < n; t++) {
    const r = y[t] - fitted[t] - b;
    if (Number.isFinite(r)) ss += r * r;
    fitted[t] += b;
  }
  // R forecast.rw_model: mse = Σres² / (count − [drift ≠ 0]); se(b) = sd(res)/√count.
  const mse = ss / (count - (b !== 0 ? 1 : 0));
  const bSe = drift && count > 1 ? Math.sqrt(ss / (count - 1) / count) : 0;
  // the walk starts at the last observation; the missing values after it are steps already taken
  let end = n;
  while (!Number.isFinite(y[end - 1])) end--;
  const gap = n - end;
  const future = filled.slice(end - lag, end);
  const warnings: string[] = [];
  for (let i = 0; i < lag; i++) {
    if (!Number.isFinite(future[i])) {
      // Why: a cycle position never observed; use the last observed value rather than fail.
      let last = NaN;
      for (let t = n - 1; t >= 0 && Number.isNaN(last); t--) if (Number.isFinite(y[t])) last = y[t];
      future[i] = last;
      warnings.push(`no observation at cycle position ${i}; used the last observed value`);
    }
  }
  const sigma = Math.sqrt(mse);
  return {
    model: name,
    params: { lag, drift: b, driftSe: bSe, sigma },
    nobs: have,
    fitted,
    warnings,
    forecast(h: number) {
      const mean = new Float64Array(gap + h);
      const extra = new Float64Array(gap + h);
      for (let k = 0; k < gap + h; k++) {
        const steps = Math.floor(k / lag) + 1;
        mean[k] = future[k % lag] + steps * b;
        extra[k] = steps * bSe;
      }
      return dropLeading(linearGaussianForecast({ model: name, mean, sigma, psi: (j) => (j % lag === 0 ? 1 : 0), extra }), gap);
    },
  };
}

/** Naive (random walk) forecasts: the last observation, intervals widening as √h. */
export const naive: ModelFamily<Record<string, never>> = {
  name: 'naive',
  minObservations: () => 2,
  fit: (y: Series) => fitRandomWalk(y, 1, false, 'Naive'),
};

/** Seasonal naive: the value one period earlier; falls back to naive when period is 1. */
export const seasonalNaive: ModelFamily<Record<string, never>> = {
  name: 'snaive',
  minObservations: (info: SeriesInfo) => Math.max(1, Math.round(info.period)) + 1,
  fit: (y: Series, info: SeriesInfo) => {
    const m = Math.max(1, Math.round(info.period));
    return fitRandomWalk(y, m, false, m > 1 ? 'SeasonalNaive' : 'Naive');
  },
};

/** Random walk with drift (R `rwf(drift = TRUE)`), intervals including the drift's standard error. */
export const rwDrift: ModelFamily<Record<string, never>> = {
  name: 'rwdrift',
  minObservations: () => 3,
  fit: (y: Series) => fitRandomWalk(y, 1, true, 'RandomWalkDrift'),
};

/**
 * M4's Naive2: naive on the multiplicatively seasonally adjusted series (when the M4 test at
 * lag `period` says seasonal and n ≥ 3m), reseasonalised; the interval sd is multiplied by the
 * seasonal index too (the error lives on the adjusted scale).
 */
export const naive2: ModelFamily<Record<string, never>> = {
  name: 'naive2',
  minObservations: () => 2,
  fit: (y: Series, info: SeriesInfo) => {
    checkFinite(y, 'Naive2');
    const m = Math.round(info.period);
    const figure = m >= 2 ? multiplicativeSeasonalFigure(y, m, 'm4') : null;
    if (!figure) {
      const base = fitRandomWalk(y, 1, false, 'Naive2');
      return { ...base, params: { ...base.params, seasonal: false } };
    }
    const n = y.length;
    const adj = new Float64Array(n);
    for (let t = 0; t < n; t++) adj[t] = y[t] / figure[t % m];
    const base = fitRandomWalk(adj, 1, false, 'Naive2');
    const fitted = base.fitted ? Float64Array.from(base.fitted, (v, t) => v * figure[t % m]) : undefined;
    return {
      ...base,
      params: { ...base.params, seasonal: true, seasonalIndices: Array.from(figure) },
      fitted,
      forecast(h: number) {
        const f = base.forecast(h);
        const mean = new Float64Array(h);
        const scale = new Float64Array(h);
        for (let k = 0; k < h; k++) {
          scale[k] = figure[(n + k) % m];
          mean[k] = f.mean[k] * scale[k];
        }
        return linearGaussianForecast({ model: 'Naive2', mean, sigma: base.params.sigma as number, psi: () => 1, scale });
      },
    };
  },
};
