/**
 * ARIMA / SARIMA, following R `forecast::auto.arima` / `forecast::Arima` over
 * `stats::arima` (Hyndman & Khandakar 2008; Gardner, Harvey & Phillips 1980).
 *
 * `arima.fit(y, info)` is R's `auto.arima(y)` (stepwise, AICc); with
 * `{ order: [p,d,q], seasonal: [P,D,Q], drift? }` it is `Arima(y, order, seasonal, include.drift)`.
 * Forecasts are Gaussian from the state-space form; sample paths are simulated
 * from the same model. Differences from R are noted where they happen; the main
 * ones: the seasonal test's STL fills gaps linearly, the stepwise search follows
 * forecast 8.20 (which does not apply max.order), and when no model passes R's
 * checks the plain differencing model is used instead of an error. Speed: the
 * likelihood of complete series runs on the differenced data with the O(r)
 * Chandrasekhar recursions (state-space.ts), reported at R's diffuse likelihood.
 * `info.kind = 'count'` is not used: ARIMA marginals are Gaussian (continuous).
 */
import { InsufficientDataError, InvalidSeriesError } from '../../errors';
import type { Fitted, ModelFamily, Params, Series, SeriesInfo } from '../../types';
import { type AutoOptions, autoArima } from './auto';
import { type ArimaFit, ArimaFitFailure, fitArima } from './fit';
import { arimaForecast } from './forecast';
import { isConstant } from './unit-root';
import { NormalStep } from '../../distributions/normal-step';

/** Options: automatic search when `order` is absent, otherwise a fixed model. */
export interface ArimaOptions extends AutoOptions {
  /** Non-seasonal order [p, d, q]. */
  readonly order?: readonly [number, number, number];
  /** Seasonal order [P, D, Q] at `info.period` (default [0,0,0]). */
  readonly seasonal?: readonly [number, number, number];
  /** Linear drift term (R's include.drift; ignored with 2+ differences, as R). Default false. */
  readonly drift?: boolean;
  /** Intercept when undifferenced (R's include.mean). Default true. */
  readonly mean?: boolean;
  /** Estimation method for a fixed order (R default 'CSS-ML'). */
  readonly method?: 'CSS-ML' | 'ML' | 'CSS';
}

/** R's `arima.string` without padding. */
function modelName(f: ArimaFit): string {
  const o = f.order;
  let s = `ARIMA(${o.p},${o.d},${o.q})`;
  if (o.m > 1 && o.P + o.D + o.Q > 0) s += `(${o.P},${o.D},${o.Q})[${o.m}]`;
  if (f.xregNames.includes('drift')) s += ' with drift';
  else if (f.xregNames.includes('intercept')) s += ' with non-zero mean';
  else if (o.d === 0 && o.D === 0) s += ' with zero mean';
  return s;
}

function validate(y: Series): { x: Float64Array; lead: number; nobs: number } {
  const arr = Float64Array.from(y as ArrayLike<number>);
  for (let i = 0; i < arr.length; i++)
    if (arr[i] === Infinity || arr[i] === -Infinity) throw new InvalidSeriesError(`arima: y[${i}] is ${arr[i]}`);
  let lead = 0;
  while (lead < arr.length && !(arr[lead] === arr[lead])) lead++;
  let nobs = 0;
  for (let i = lead; i < arr.length; i++) if (arr[i] === arr[i]) nobs++;
  return { x: arr.slice(lead), lead, nobs };
}

/** Power-of-two scale bringing huge/tiny series to unit order (exact in floating point). */
function scaleOf(x: Float64Array): number {
  let mx = 0;
  for (const v of x) if (v === v) mx = Math.max(mx, Math.abs(v));
  if (mx === 0 || (mx < 1e30 && mx > 1e-30)) return 1;
  return Math.pow(2, Math.round(Math.log2(mx)));
}

/** A point-mass forecast for constant series (R: `fit$constant`, forecast = x[1], se = 0). */
function constantFitted(value: number, nobs: number, n: number, lead: number): Fitted {
  return {
    model: 'ARIMA(0,0,0) with non-zero mean',
    params: { order: [0, 0, 0], seasonal: [0, 0, 0], intercept: value, sigma2: 0, constant: true },
    nobs,
    fitted: Float64Array.from({ length: n + lead }, (_, i) => (i < lead ? NaN : value)),
    warnings: ['constant series: point-mass forecast'],
    forecast(h: number) {
      checkH(h);
      const mean = new Float64Array(h).fill(value);
      return {
        model: this.model,
        mean,
        steps: Array.from({ length: h }, () => new NormalStep(value, 0)),
        intervalMethod: 'analytic',
        samplePaths: (k: number) => Array.from({ length: k }, () => new Float64Array(h).fill(value)),
      };
    },
  };
}

function checkH(h: number): void {
  if (!Number.isInteger(h) || h < 1) throw new InvalidSeriesError(`arima: forecast horizon h must be an integer >= 1, got ${h}`);
}

function toFitted(fit: ArimaFit, x: Float64Array, lead: number, scale: number, warnings: string[]): Fitted {
  const model = modelName(fit);
  const narma = fit.coef.length - fit.xregNames.length;
  const params: Record<string, Params[string]> = {
    order: [fit.order.p, fit.order.d, fit.order.q],
    seasonal: [fit.order.P, fit.order.D, fit.order.Q],
    period: fit.order.m,
  };
  fit.names.forEach((nm, i) => (params[nm] = i >= narma ? fit.coef[i] * scale : fit.coef[i]));
  params.sigma2 = fit.sigma2 * scale * scale;
  const fitted = new Float64Array(x.length + lead).fill(NaN);
  for (let i = 0; i < x.length; i++) fitted[lead + i] = (x[i] - fit.residuals[i]) * scale;
  const shift = fit.nobs * Math.log(scale); // loglik of y = loglik of y/scale - n log(scale)
  return {
    model,
    params,
    nobs: fit.nobs,
    loglik: fit.loglik - shift,
    aic: fit.aic + 2 * shift,
    aicc: fit.aicc + 2 * shift,
    bic: fit.bic + 2 * shift,
    fitted,
    warnings: [...warnings, ...fit.warnings],
    forecast(h: number) {
      checkH(h);
      return arimaForecast(fit, h, model, scale);
    },
    // The chosen order as a family (backtests refit it instead of searching orders again).
    refit: fixedOrder(fit),
  };
}

/** The ARIMA model family (`arima` in specs). */
export const arima: ModelFamily<ArimaOptions> = {
  name: 'arima',
  minObservations(info: SeriesInfo, options?: ArimaOptions): number {
    if (!options?.order) return 1;
    const [p, d] = options.order;
    const [P, D] = options.seasonal ?? [0, 0, 0];
    const m = Math.max(1, Math.round(info.period));
    return d + D * m + p + m * P + 1;
  },
  fit(y: Series, info: SeriesInfo, options: ArimaOptions = {}): Fitted {
    const period = Math.round(info.period);
    if (!(period >= 1)) throw new InvalidSeriesError(`arima: period must be >= 1, got ${info.period}`);
    const { x: raw, lead, nobs } = validate(y);
    const need = arima.minObservations(info, options);
    if (nobs < need) throw new InsufficientDataError(nobs, need, 'arima');
    if (!options.order && isConstant(raw)) {
      return constantFitted(raw.find((u) => u === u) ?? NaN, nobs, raw.length, lead);
    }
    const scale = scaleOf(raw);
    const x = scale === 1 ? raw : raw.map((v) => v / scale);
    const warnings: string[] = [];
    if (scale !== 1) warnings.push(`series rescaled by 2^${Math.log2(scale)} for numerical range`);
    try {
      if (options.order) {
        const [p, d, q] = options.order;
        const [P, D, Q] = period > 1 ? (options.seasonal ?? [0, 0, 0]) : [0, 0, 0];
        for (const v of [p, d, q, P, D, Q])
          if (!Number.isInteger(v) || v < 0) throw new InvalidSeriesError(`arima: orders must be non-negative integers, got ${options.order} ${options.seasonal ?? ''}`);
        let drift = options.drift ?? false;
        if (drift && d + D > 1) {
          warnings.push('no drift term fitted as the order of difference is 2 or more');
          drift = false;
        }
        const spec = { order: { p, d, q, P, D, Q, m: period }, mean: options.mean ?? true, drift, method: options.method ?? 'CSS-ML', checkVariance: false } as const;
        let fit: ArimaFit;
        try {
          fit = fitArima(x, spec);
        } catch (e) {
          // Why: R stops on a non-stationary CSS start; plain ML from zero is the useful answer.
          if (!(e instanceof ArimaFitFailure) || spec.method !== 'CSS-ML') throw e;
          warnings.push(`CSS start failed (${e.message}): fitted by ML from zero`);
          fit = fitArima(x, { ...spec, method: 'ML' });
        }
        return toFitted(fit, x, lead, scale, warnings);
      }
      const res = autoArima(x, period, options);
      return toFitted(res.fit, x, lead, scale, [...warnings, ...res.warnings]);
    } catch (e) {
      if (e instanceof ArimaFitFailure) throw new InvalidSeriesError(`arima: ${e.message}`);
      throw e;
    }
  },
};

/** The order (and drift / mean terms) of a fit, as a family that estimates only that model. */
function fixedOrder(fit: ArimaFit): ModelFamily<ArimaOptions> {
  const o = fit.order;
  const fixed: ArimaOptions = {
    order: [o.p, o.d, o.q],
    seasonal: [o.P, o.D, o.Q],
    drift: fit.xregNames.includes('drift'),
    mean: fit.xregNames.includes('intercept'),
  };
  return {
    name: `arima:${modelName(fit)}`,
    minObservations: (info, options) => arima.minObservations(info, { ...options, ...fixed }),
    fit: (y, info, options) => arima.fit(y, info, { ...options, ...fixed }),
  };
}
