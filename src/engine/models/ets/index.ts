/**
 * ETS: exponential smoothing state-space models (Hyndman, Koehler, Ord & Snyder 2008,
 * *Forecasting with Exponential Smoothing: The State Space Approach*), automatic and
 * probabilistic, following R `forecast::ets` + `forecast.ets` (8.x).
 *
 * `ets.fit(y, info)` is R's `ets(y)`: every admissible model fitted by maximum likelihood, the
 * best by AICc kept. `ets.fit(y, info, { model: 'MAM' })` fits one model. Differences from R are
 * listed where they happen; the main ones: missing values are predict-only steps (R cuts to the
 * longest contiguous stretch), class 3 intervals are simulated (R: analytic), and the series too
 * short for any model fall back to SES/Holt like R's `HoltWintersZZ` path but never seasonal.
 */
import { InsufficientDataError, InvalidSeriesError } from '../../errors';
import type { Fitted, ModelFamily, Params, SeriesInfo, Series } from '../../types';
import { buildProblem, type EtsFit, type FixedParams } from './fit-model';
import { etsForecast } from './forecast';
import { fitHoltWinters, type HwFit } from './hw-fallback';
import { refineFrom, WARM_EVALUATIONS, type FitControl } from './optimise';
import { resolveOptions, type EtsOptions } from './options';
import { candidates, selectEts } from './select';
import type { SimModel } from './simulate';
import { code, rNpars, specName, type EtsPattern, type EtsSpec } from './spec';

export type { EtsOptions } from './options';

/** Fewest observations `ets` accepts: 3 (shorter series have no usable error variance). */
const MIN_OBS = 3;

/** Longest seasonal period ETS models (as R's `ets`): a longer one is ignored, with a warning. */
export const ETS_MAX_PERIOD = 24;

function prepare(y: Series): { ys: Float64Array; lead: number; nobs: number } {
  const arr = Float64Array.from(y as ArrayLike<number>);
  for (let i = 0; i < arr.length; i++) {
    if (arr[i] === Infinity || arr[i] === -Infinity) throw new InvalidSeriesError(`ets: y[${i}] is ${arr[i]}`);
  }
  let lead = 0;
  while (lead < arr.length && arr[lead] !== arr[lead]) lead++;
  const ys = arr.slice(lead);
  let nobs = 0;
  for (let i = 0; i < ys.length; i++) if (ys[i] === ys[i]) nobs++;
  return { ys, lead, nobs };
}

/** Linear interpolation of interior gaps, last value carried forward (initial states only). */
function fillGaps(y: Float64Array): Float64Array {
  const out = Float64Array.from(y);
  let last = -1;
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== out[i]) continue;
    if (last >= 0 && i - last > 1) for (let j = last + 1; j < i; j++) out[j] = out[last] + ((out[i] - out[last]) * (j - last)) / (i - last);
    last = i;
  }
  for (let j = last + 1; j < out.length; j++) out[j] = out[last];
  return out;
}

interface Built {
  name: string;
  /** Likelihood optimum in search coordinates (absent for least-squares and constant fits). */
  x?: Float64Array;
  sim: SimModel;
  params: Record<string, Params[string]>;
  fitted: Float64Array;
  loglik?: number;
  aic?: number;
  aicc?: number;
  bic?: number;
}

function fromEts(f: EtsFit): Built {
  const params: Record<string, Params[string]> = { alpha: f.alpha };
  if (f.spec.trend !== 'N') params.beta = f.beta;
  if (f.spec.season !== 'N') params.gamma = f.gamma;
  if (f.spec.damped) params.phi = f.phi;
  params.initialState = Array.from(f.initState);
  params.sigma2 = f.sigma2;
  return {
    name: f.name,
    sim: { lastState: f.lastState, m: f.m, error: code(f.spec.error), trend: code(f.spec.trend), season: code(f.spec.season), alpha: f.alpha, beta: f.beta, gamma: f.gamma, phi: f.phi, sigma2: f.sigma2 },
    params,
    fitted: f.fitted,
    x: f.x,
    loglik: f.loglik,
    aic: f.aic,
    aicc: f.aicc,
    bic: f.bic,
  };
}

function fromHw(f: HwFit, note: string): Built {
  const params: Record<string, Params[string]> = { alpha: f.alpha };
  if (f.trend) params.beta = f.beta;
  params.initialState = Array.from(f.initState);
  params.sigma2 = f.sigma2;
  params.estimation = note;
  return {
    name: f.trend ? 'ETS(A,A,N)' : 'ETS(A,N,N)',
    sim: { lastState: f.lastState, m: 1, error: 1, trend: f.trend ? 1 : 0, season: 0, alpha: f.alpha, beta: f.beta, gamma: 0, phi: 1, sigma2: f.sigma2 },
    params,
    fitted: f.fitted,
  };
}

/** R's short-series path: SES/Holt by least squares (seasonality dropped). */
function shortSeries(ys: Float64Array, pattern: EtsPattern, period: number, warnings: string[]): Built {
  if (pattern.season === 'A' || pattern.season === 'M') warnings.push('too few observations for a seasonal ETS model: seasonality dropped');
  if (pattern.damped) warnings.push('not enough data to use damping');
  if (pattern.trend === 'M') warnings.push('too few observations for a multiplicative trend: additive (Holt) trend used');
  const note = 'least squares (HoltWinters), too few observations for likelihood';
  const ses = pattern.trend === 'A' || pattern.trend === 'M' ? null : fitHoltWinters(ys, false, period);
  const holt = pattern.trend === 'N' ? null : fitHoltWinters(ys, true, period);
  const pick = holt && (!ses || holt.sigma2 < ses.sigma2) ? holt : ses;
  if (!pick) throw new InsufficientDataError(0, MIN_OBS, 'ets');
  return fromHw(pick, note);
}

function constantFit(ys: Float64Array, value: number): Built {
  // R: ets() on a constant series returns ses(y, alpha = 0.99999, initial = "simple")$model
  const fitted = new Float64Array(ys.length).fill(value);
  return {
    name: 'ETS(A,N,N)',
    sim: { lastState: Float64Array.of(value), m: 1, error: 1, trend: 0, season: 0, alpha: 0.99999, beta: 0, gamma: 0, phi: 1, sigma2: 0 },
    params: { alpha: 0.99999, initialState: [value], sigma2: 0, estimation: 'constant series' },
    fitted,
  };
}

/** A likelihood optimum of model `name` (search coordinates), the start of a refit. */
interface WarmStart {
  name: string;
  x: Float64Array;
}

/**
 * `warm`: the optimum of the same single model on nearly the same data (a refit at a backtest
 * origin); used as the start of one short optimiser run instead of R's cold start.
 */
function fitEts(y: Series, info: SeriesInfo, options?: EtsOptions, warm?: WarmStart): Fitted {
  const o = resolveOptions(options);
  const period = info.period;
  if (!Number.isInteger(period) || period < 1) throw new InvalidSeriesError(`ets: period must be an integer >= 1, got ${period}`);
  const { ys, lead, nobs } = prepare(y);
  if (nobs < MIN_OBS) throw new InsufficientDataError(nobs, MIN_OBS, 'ets');
  const warnings: string[] = [];
  if (lead > 0) warnings.push(`${lead} leading missing values skipped`);
  if (nobs < ys.length) warnings.push(`${ys.length - nobs} missing values treated as predict-only steps`);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < ys.length; i++) if (ys[i] === ys[i]) (min = Math.min(min, ys[i])), (max = Math.max(max, ys[i]));
  const pattern: EtsPattern = { ...o.pattern };
  const isZZZ = pattern.error === 'Z' && pattern.trend === 'Z' && pattern.season === 'Z' && options?.model === undefined;

  let built: Built;
  if (min === max && isZZZ) {
    built = constantFit(ys, min);
  } else {
    // seasonality checks, in R's order
    if (nobs <= period) pattern.season = 'N';
    if (period === 1 && (pattern.season === 'A' || pattern.season === 'M')) throw new InvalidSeriesError('ets: seasonal model requested for non-seasonal data (period 1)');
    if (period === 1) pattern.season = 'N';
    if (period > ETS_MAX_PERIOD) {
      if (pattern.season === 'A' || pattern.season === 'M') throw new InvalidSeriesError(`ets: period ${period} is too high for seasonal ETS (max ${ETS_MAX_PERIOD})`);
      if (pattern.season === 'Z') warnings.push(`period ${period} > ${ETS_MAX_PERIOD}: seasonality ignored (ETS handles at most ${ETS_MAX_PERIOD})`);
      pattern.season = 'N';
    }
    const positive = min > 0;
    const explicitMult = pattern.error === 'M' || pattern.trend === 'M' || pattern.season === 'M';
    if (explicitMult && !positive) throw new InvalidSeriesError(`ets: multiplicative components need strictly positive data (minimum is ${min})`);
    if (o.restrict) {
      const e = pattern.error;
      const bad = (e === 'A' && (pattern.trend === 'M' || pattern.season === 'M')) || (e === 'M' && pattern.trend === 'M' && pattern.season === 'A');
      if (bad) throw new InvalidSeriesError(`ets: forbidden model combination ${pattern.error}${pattern.trend}${pattern.season} (restrict = true)`);
    }
    const npars = rNpars(pattern.trend, pattern.season, pattern.damped, period);
    if (nobs <= npars + 4) {
      built = shortSeries(ys, pattern, period, warnings);
    } else {
      const specs = candidates(pattern, { allowMultiplicativeTrend: o.allowMultiplicativeTrend, additiveOnly: o.additiveOnly, restrict: o.restrict, positive });
      const control = { bounds: o.bounds, maxEvaluations: o.maxEvaluations, tolerance: Math.sqrt(2.220446049250313e-16), restarts: 3 };
      const filled = fillGaps(ys);
      const best = (warm && specs.length === 1 ? warmFit(ys, filled, period, specs[0], o.fixed, control, warm) : null) ?? selectEts(ys, filled, period, specs, o.fixed, control, o.ic, !o.exhaustive).best;
      if (best) built = fromEts(best);
      else {
        warnings.push('no ETS model could be fitted by likelihood: least-squares SES/Holt used');
        built = shortSeries(ys, pattern, period, warnings);
      }
    }
  }
  const fitted = new Float64Array(lead + ys.length).fill(NaN);
  fitted.set(built.fitted, lead);
  const settings = { npaths: o.npaths, seed: o.seed };
  const params: Params = { ...built.params, intervalSeed: o.seed, npaths: o.npaths };
  const { name, sim } = built;
  return {
    model: name,
    params,
    nobs,
    loglik: built.loglik,
    aic: built.aic,
    aicc: built.aicc,
    bic: built.bic,
    fitted,
    warnings,
    forecast: (h: number) => etsForecast(name, sim, h, settings),
    refit: refitFamily(name, options, built.x ? { name, x: built.x } : undefined),
  };
}

/**
 * The chosen structure as a family: `ETS(A,Ad,M)` → error A, damped additive trend, season M,
 * refitted with the caller's other options. Used by backtests, which assess the chosen model.
 */
function refitFamily(name: string, options: EtsOptions | undefined, warm: WarmStart | undefined): ModelFamily<EtsOptions> {
  const m = /^ETS\(([AM]),([NAM])(d?),([NAM])\)$/.exec(name);
  const structure: EtsOptions = m
    ? { error: m[1] as 'A' | 'M', trend: m[2] as 'N' | 'A' | 'M', damped: m[3] === 'd', season: m[4] as 'N' | 'A' | 'M' }
    : {};
  const { model: _selected, ...rest } = options ?? {};
  return {
    name: `ets:${name}`,
    minObservations: () => MIN_OBS,
    fit: (y, info, more) => fitEts(y, info, { ...rest, ...more, ...structure }, warm),
  };
}

/**
 * `spec` fitted by a short run from `warm` (see `refineFrom`); null when that start does not apply
 * (another model, e.g. seasonality dropped on a short prefix, or a start outside the bounds).
 */
function warmFit(y: Float64Array, filled: Float64Array, period: number, spec: EtsSpec, fixed: FixedParams, control: FitControl, warm: WarmStart): EtsFit | null {
  if (specName(spec) !== warm.name) return null;
  const p = buildProblem(y, filled, period, spec, fixed, control.bounds);
  const r = p ? refineFrom(p, warm.x, Math.min(WARM_EVALUATIONS, control.maxEvaluations), control.tolerance) : null;
  return p && r ? p.finish(r.x, r.evaluations) : null;
}

/** The ETS model family (R `forecast::ets`). */
export const ets: ModelFamily<EtsOptions> = {
  name: 'ets',
  minObservations: () => MIN_OBS,
  fit: fitEts,
};
