/**
 * Intermittent demand: Croston (1972), SBA (Syntetos & Boylan 2005) and TSB (Teunter,
 * Syntetos & Babai 2011).
 *
 * - Croston: SES (α) of the non-zero demand sizes z and of the intervals between them p, both
 *   started at their first value, forecast z/p, as R forecast's `croston` (α = 0.1 default).
 * - SBA: Croston × (1 − α/2), removing Croston's bias (Syntetos & Boylan 2005).
 * - TSB: the demand probability d is smoothed every period (β) towards 1[y_t > 0], the size z
 *   only when a demand occurs (α); forecast d·z. d starts at the share of periods with demand,
 *   z at the first size.
 * - SES rate (`ses`): the demand per period is smoothed every period, simple exponential
 *   smoothing started at the first observation, its α chosen by in-sample one-step squared error
 *   on a grid of 0.01..`SES_MAX_ALPHA` (unless given); the size z is smoothed as TSB's (`sizeAlpha`,
 *   started at the mean size), and the demand probability is the rate over the size. Why started
 *   cold, at the first value, and not at a mean of the history: the warm-up then costs squared
 *   error wherever demand moved away from where it began (a part introduced or going obsolete),
 *   so the fit picks a faster α exactly there and a slow one where demand is steady; started at
 *   the history's mean, every series looks steady (evidence in `registry.ts`, `AUTO_COUNT_INTERMITTENT_MODEL`).
 *
 * The predictive distribution of each period is a hurdle law (see `croston-distribution.ts`):
 * demand with probability 1/p (Croston), (1 − α/2)/p (SBA) or d (TSB), size with mean z.
 * Periods are iid under these models, so the distribution is the same for every step and
 * sample paths draw each period independently. Parameter uncertainty is not included (as in R).
 * Missing values are dropped before fitting (why: the methods count periods between demands,
 * and an unobserved period can be neither).
 */
import { InsufficientDataError, InvalidSeriesError } from '../errors';
import { nelderMead } from '../optim/nelder-mead';
import { nanVariance, runningMean } from '../math/stats';
import { Rng } from '../rng';
import type { Fitted, ModelFamily, PredictiveDistribution, Series, SeriesInfo, StepDistribution } from '../types';
import { HurdleStep, IntegerSizeStep, integerSizeFits, scaledEmpiricalSize } from './croston-distribution';

/** Options of the intermittent-demand family. */
export interface CrostonOptions {
  /** `croston` (default), `sba`, `tsb` or `ses`. */
  readonly method?: Method;
  /** Smoothing of sizes (and intervals for Croston/SBA); for `ses` the smoothing of the rate, chosen on a grid when absent. Default 0.1, as R. */
  readonly alpha?: number;
  /** `ses`: smoothing of the demand size. Default 0.1. */
  readonly sizeAlpha?: number;
  /** TSB smoothing of the demand probability. Default 0.1. */
  readonly beta?: number;
  /** Choose α (and β) by in-sample one-step MSE with the bounded Nelder–Mead in [0.01, 0.99]. Default false. */
  readonly optimise?: boolean;
}

type Method = 'croston' | 'sba' | 'tsb' | 'ses';

/**
 * Largest rate smoothing the `ses` method chooses. Chosen on the car parts' two validation windows
 * (see `AUTO_COUNT_INTERMITTENT_MODEL` in `registry.ts`), by the sum of the two windows' MASE:
 * cap 0.1: 1.408 + 0.834; 0.15: 1.400 + 0.813; 0.2: 1.401 + 0.804; 0.3: 1.409 + 0.800;
 * 0.5: 1.423 + 0.805; 0.99: 1.441 + 0.812. With cap 0.99 and started at the mean of the first 12
 * values instead of the first value, the SES level scored 1.506 + 0.873, at the whole history's
 * mean 1.528 + 0.861 (see the module comment).
 */
export const SES_MAX_ALPHA = 0.2;

interface Smoothed {
  /** Probability of a demand next period. */
  prob: number;
  /** Mean demand size. */
  size: number;
  /** In-sample one-step forecasts (NaN before the first demand for Croston/SBA). */
  fitted: Float64Array;
  /** Sum of squared one-step errors where fitted is defined. */
  sse: number;
}

/** Simple exponential smoothing of `x` started at x[0]: the final level and the in-sample one-step squared error. */
function sesLevel(x: Float64Array, alpha: number, fitted?: Float64Array): { level: number; sse: number } {
  let level = x[0];
  let sse = 0;
  for (let t = 0; t < x.length; t++) {
    if (fitted) fitted[t] = level;
    sse += (x[t] - level) ** 2;
    level += alpha * (x[t] - level);
  }
  return { level, sse };
}

/** The `ses` rate smoothing with the least in-sample squared error on the grid 0.01, 0.02, …, `SES_MAX_ALPHA` (the smallest on ties). */
function chooseSesAlpha(x: Float64Array): number {
  // scaled by a power of two (exact, so the choice is unchanged) to keep squares of huge values finite
  let max = 0;
  for (let t = 0; t < x.length; t++) max = Math.max(max, x[t]);
  const unit = max > 0 ? 2 ** -Math.ceil(Math.log2(max)) : 1;
  const scaled = x.map((v) => v * unit);
  let best = Infinity;
  let alpha = 0.01;
  for (let k = 1; k <= Math.round(SES_MAX_ALPHA * 100); k++) {
    const a = k / 100;
    const { sse } = sesLevel(scaled, a);
    if (sse < best) {
      best = sse;
      alpha = a;
    }
  }
  return alpha;
}

/** Run the chosen recursion over the observed values `x` (no NaN). */
function smooth(x: Float64Array, method: Method, alpha: number, beta: number, fitted: Float64Array): Smoothed {
  const n = x.length;
  let sse = 0;
  if (method === 'ses') {
    // beta is the size smoothing here
    const rate = sesLevel(x, alpha, fitted);
    const sizes = x.filter((v) => v > 0);
    if (sizes.length === 0) return { prob: 0, size: 0, fitted, sse: rate.sse };
    let z = runningMean(sizes);
    for (const v of sizes) z += beta * (v - z);
    // a rate above the size (demand every period, growing) keeps p at 1 and raises the size to the rate
    const size = Math.max(z, rate.level);
    return { prob: size > 0 ? rate.level / size : 0, size, fitted, sse: rate.sse };
  }
  if (method === 'tsb') {
    let demands = 0;
    let z = NaN;
    for (let t = 0; t < n; t++) {
      if (x[t] > 0) {
        demands++;
        if (Number.isNaN(z)) z = x[t];
      }
    }
    let d = demands / n;
    for (let t = 0; t < n; t++) {
      fitted[t] = Number.isNaN(z) ? 0 : d * z;
      sse += (x[t] - fitted[t]) ** 2;
      d += beta * ((x[t] > 0 ? 1 : 0) - d);
      if (x[t] > 0) z += alpha * (x[t] - z);
    }
    return { prob: d, size: Number.isNaN(z) ? 0 : z, fitted, sse };
  }
  const coeff = method === 'sba' ? 1 - alpha / 2 : 1;
  let z = NaN;
  let p = NaN;
  let since = 0;
  for (let t = 0; t < n; t++) {
    fitted[t] = Number.isNaN(z) ? NaN : (coeff * z) / p;
    if (!Number.isNaN(fitted[t])) sse += (x[t] - fitted[t]) ** 2;
    since++;
    if (x[t] > 0) {
      if (Number.isNaN(z)) {
        z = x[t];
        p = since;
      } else {
        z += alpha * (x[t] - z);
        p += alpha * (since - p);
      }
      since = 0;
    }
  }
  if (Number.isNaN(z)) return { prob: 0, size: 0, fitted, sse };
  return { prob: Math.min(1, coeff / p), size: z, fitted, sse };
}

function fitCroston(y: Series, _info: SeriesInfo, options: CrostonOptions = {}): Fitted {
  const method = options.method ?? 'croston';
  const name = { croston: 'Croston', sba: 'SBA', tsb: 'TSB', ses: 'SES rate' }[method];
  const values: number[] = [];
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (Number.isNaN(v)) continue;
    if (!Number.isFinite(v) || v < 0) throw new InvalidSeriesError(`${name} needs non-negative finite values; y[${i}] is ${v}`);
    values.push(v);
  }
  if (values.length < 2) throw new InsufficientDataError(values.length, 2, name);
  const warnings: string[] = [];
  if (values.length < y.length) warnings.push(`${y.length - values.length} missing values dropped`);
  const ses = method === 'ses';
  const x = Float64Array.from(values);
  let alpha = options.alpha ?? (ses ? chooseSesAlpha(x) : 0.1);
  // `ses` smooths the size with `sizeAlpha`, carried in the recursion's beta
  let beta = (ses ? options.sizeAlpha : options.beta) ?? 0.1;
  for (const [k, v] of [['alpha', alpha], [ses ? 'sizeAlpha' : 'beta', beta]] as const) {
    if (!(v >= 0 && v <= 1)) throw new InvalidSeriesError(`${name}: ${k} must be in [0, 1], got ${v}`);
  }
  const work = new Float64Array(x.length);
  if (options.optimise && !ses) {
    const tsb = method === 'tsb';
    const res = nelderMead(
      (q) => smooth(x, method, q[0], tsb ? q[1] : beta, work).sse,
      tsb ? [alpha, beta] : [alpha],
      { lower: tsb ? [0.01, 0.01] : [0.01], upper: tsb ? [0.99, 0.99] : [0.99], maxEvaluations: 400 },
    );
    alpha = res.x[0];
    if (tsb) beta = res.x[1];
  }
  const s = smooth(x, method, alpha, beta, new Float64Array(x.length));
  const sizes = values.filter((v) => v > 0);
  if (sizes.length === 0) warnings.push('no demand observed: forecasting zero');
  const integer = values.every(Number.isInteger);
  let sizeLaw: StepDistribution;
  if (sizes.length === 0) sizeLaw = new IntegerSizeStep(0, 0);
  else {
    const mu = Math.max(0, s.size - 1);
    const variance = sizes.length > 1 ? nanVariance(sizes) : 0;
    // huge counts: the rescaled empirical law, rounded by the facade's count law
    sizeLaw = integer && integerSizeFits(mu, variance) ? new IntegerSizeStep(mu, variance) : scaledEmpiricalSize(sizes, s.size, integer);
  }
  const step = new HurdleStep(sizes.length === 0 ? 0 : s.prob, sizeLaw);
  const fitted = new Float64Array(y.length).fill(NaN);
  for (let i = 0, j = 0; i < y.length; i++) if (!Number.isNaN(y[i])) fitted[i] = s.fitted[j++];
  return {
    model: name,
    params: { method, alpha, beta: method === 'tsb' ? beta : null, ...(ses ? { sizeAlpha: beta } : {}), demandProbability: step.p, demandSize: s.size, integerSizes: integer },
    nobs: x.length,
    fitted,
    warnings,
    forecast: (h: number) => hurdleForecast(name, step, h),
  };
}

/** The same hurdle law for each of h periods; paths draw periods independently by inversion. */
function hurdleForecast(model: string, step: HurdleStep, h: number): PredictiveDistribution {
  const steps = new Array<StepDistribution>(h).fill(step);
  return {
    model,
    mean: new Float64Array(h).fill(step.mean),
    steps,
    intervalMethod: 'analytic',
    samplePaths(n: number, seed: number): Float64Array[] {
      const rng = new Rng(seed);
      const out: Float64Array[] = [];
      for (let i = 0; i < n; i++) {
        const path = new Float64Array(h);
        for (let k = 0; k < h; k++) path[k] = step.quantile(rng.uniform());
        out.push(path);
      }
      return out;
    },
  };
}

/** Croston / SBA / TSB intermittent-demand family (`croston`). */
export const croston: ModelFamily<CrostonOptions> = {
  name: 'croston',
  minObservations: () => 2,
  fit: fitCroston,
};
