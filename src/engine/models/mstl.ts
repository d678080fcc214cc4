/**
 * MSTL forecasting (Bandara, Hyndman & Bergmeir 2021; R forecast's `forecast(mstl(y))` /
 * `stlf`): decompose with MSTL, forecast each seasonal component by the seasonal naive of its
 * last cycle, forecast the seasonally adjusted series (trend + remainder) with a non-seasonal
 * inner model, and add the two. The predictive distribution is the inner model's shifted by the
 * (deterministic) seasonal forecast, so intervals come from the inner model, as in R.
 *
 * Periods: `options.periods`, else `info.periods`, else `[info.period]` (hourly data: pass
 * [24, 168]); periods with fewer than two full cycles in the data are dropped with a warning.
 * Default inner model: the dynamic optimised Theta (DOTM) without its own seasonal adjustment; why:
 * on M4 hourly it gave the best OWA of the inner models tried (DOTM 0.604, standard Theta 0.615,
 * OTM 0.609, random walk with drift 0.622, naive 0.643; periods [24, 168]).
 */
import { mstl as mstlDecompose } from '../decompose/mstl';
import { InsufficientDataError } from '../errors';
import { countFinite } from '../math/stats';
import type { Fitted, ModelFamily, PredictiveDistribution, Series, SeriesInfo, StepDistribution } from '../types';
import { expForecast } from './autoreg/exp-step';
import { checkFinite } from './naive';
import { theta } from './theta';

/** Options of the MSTL family. */
export interface MstlModelOptions {
  /** Model for the seasonally adjusted series; default `theta` with `{ variant: 'dynamic', seasonal: false }`. */
  readonly inner?: ModelFamily<any>;
  /** Options passed to the inner model. Default `{ variant: 'dynamic', seasonal: false }` for the default inner. */
  readonly innerOptions?: Record<string, unknown>;
  /** Seasonal periods to use (overrides `info`). */
  readonly periods?: readonly number[];
  /** MSTL passes, default 2. */
  readonly iterate?: number;
  /** Seasonal STL windows, default 11, 15, ... (R). */
  readonly sWindow?: number | readonly number[];
  /**
   * Decompose and model log y when every observed value is positive (a cycle whose swing scales
   * with the level; R's `stlf(lambda = 0)`), the forecast mapped back by exp (quantiles exactly,
   * point forecast = median, as the AR in logs); series with a value ≤ 0 stay on their own scale.
   */
  readonly log?: boolean;
}

/** `base` shifted by a constant. */
class ShiftedStep implements StepDistribution {
  readonly mean: number;
  constructor(
    private readonly base: StepDistribution,
    private readonly shift: number,
  ) {
    this.mean = base.mean + shift;
  }
  quantile(p: number): number {
    return this.base.quantile(p) + this.shift;
  }
  cdf(x: number): number {
    return this.base.cdf(x - this.shift);
  }
}

/** A forecast plus a deterministic per-step offset (the seasonal forecast). */
export function shiftForecast(pd: PredictiveDistribution, offset: Float64Array, model: string): PredictiveDistribution {
  return {
    model,
    mean: Float64Array.from(pd.mean, (v, k) => v + offset[k]),
    steps: pd.steps.map((s, k) => new ShiftedStep(s, offset[k])),
    intervalMethod: pd.intervalMethod,
    samplePaths: (n: number, seed: number) => pd.samplePaths(n, seed).map((p) => p.map((v, k) => v + offset[k])),
  };
}

/** Inner options when none are given: DOTM without seasonal adjustment for the default inner, none otherwise. */
function defaultInnerOptions(options: MstlModelOptions | undefined): Record<string, unknown> | undefined {
  return options?.innerOptions ?? (options?.inner ? undefined : { variant: 'dynamic', seasonal: false });
}

function periodsFor(info: SeriesInfo, options: MstlModelOptions): number[] {
  const p = options.periods ?? info.periods ?? (info.period > 1 ? [info.period] : []);
  return p.filter((v) => v > 1);
}

function fitMstl(y: Series, info: SeriesInfo, options: MstlModelOptions = {}): Fitted {
  checkFinite(y, 'MSTL');
  const inner = options.inner ?? theta;
  const innerOptions = defaultInnerOptions(options);
  const innerInfo: SeriesInfo = { period: 1 };
  const have = countFinite(y);
  const need = Math.max(2, inner.minObservations(innerInfo, innerOptions));
  if (have < need) throw new InsufficientDataError(have, need, 'MSTL');
  const n = y.length;
  let useLog = options.log === true;
  for (let t = 0; t < n && useLog; t++) if (y[t] <= 0) useLog = false;
  const x = useLog ? Float64Array.from(y, Math.log) : y;
  const requested = periodsFor(info, options);
  const dec = mstlDecompose(x, requested, { iterate: options.iterate, sWindow: options.sWindow });
  const warnings: string[] = [];
  const dropped = requested.filter((p) => !dec.periods.includes(Math.round(p)));
  if (dropped.length > 0) warnings.push(`periods ${dropped.join(', ')} dropped: fewer than two full cycles`);
  // As R: the adjusted series keeps the original gaps, for the inner model to handle.
  const adjusted = Float64Array.from(dec.adjusted, (v, t) => (Number.isFinite(x[t]) ? v : NaN));
  const innerFit = inner.fit(adjusted, innerInfo, innerOptions);
  for (const w of innerFit.warnings) warnings.push(`inner: ${w}`);
  const seasonalTotal = new Float64Array(n);
  for (const s of dec.seasonals) for (let t = 0; t < n; t++) seasonalTotal[t] += s[t];
  const back = (v: number): number => (useLog ? Math.exp(v) : v);
  const fitted = innerFit.fitted ? Float64Array.from(innerFit.fitted, (v, t) => back(v + seasonalTotal[t])) : undefined;
  const name = `MSTL(${innerFit.model})${useLog ? '[log]' : ''}`;
  return {
    model: name,
    params: { periods: [...dec.periods], inner: innerFit.model, innerParams: innerFit.params, log: useLog },
    nobs: have,
    fitted,
    warnings,
    forecast(h: number) {
      const offset = new Float64Array(h);
      dec.seasonals.forEach((s, i) => {
        const p = dec.periods[i];
        for (let k = 0; k < h; k++) offset[k] += s[n - p + (k % p)];
      });
      const shifted = shiftForecast(innerFit.forecast(h), offset, name);
      return useLog ? expForecast(shifted) : shifted;
    },
    // With an inner model that selects (ETS, ARIMA), backtests refit its chosen structure.
    refit: innerFit.refit
      ? { name: `mstl:${innerFit.model}`, minObservations: mstl.minObservations, fit: (yy, ii, more) => fitMstl(yy, ii, { ...options, ...(more as MstlModelOptions), inner: innerFit.refit, innerOptions: options.innerOptions }) }
      : undefined,
  };
}

/** MSTL decomposition forecaster (`mstl`). */
export const mstl: ModelFamily<MstlModelOptions> = {
  name: 'mstl',
  minObservations: (_info: SeriesInfo, options?: MstlModelOptions) => {
    const inner = options?.inner ?? theta;
    return Math.max(2, inner.minObservations({ period: 1 }, defaultInnerOptions(options)));
  },
  fit: fitMstl,
};
