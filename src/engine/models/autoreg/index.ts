/**
 * `autoreg`: a local seasonal autoregression, fitted to the one series by (ridge) least squares
 * on its own lags (`lags.ts`, `fit.ts`) and forecast recursively — the classic linear AR for
 * high-frequency data with several cycles (hourly lags: 1–3, 23–25, 167–169).
 * Local linear AR models of this kind were among the strongest on M4 hourly (Makridakis,
 * Spiliotis & Assimakopoulos 2020, §5; Smyl's and Doornik et al.'s entries both regress on lags).
 *
 * Positive series are modelled in logs (`transform: 'auto'`), so seasonal swings scale with the
 * level; the point forecast is then the back-transformed median, as R forecast does for Box–Cox
 * models with its default `biasadj = FALSE` (why: the median suits absolute-error measures).
 * Intervals: Gaussian on the modelling scale with σ²Σψ² from the AR's MA(∞) weights, mapped back.
 * Gaps: interpolated for the regressors, never used as targets; trailing gaps are forecast over.
 * Long series are fitted on their last `WINDOW_CYCLES` cycles; an explosive least-squares fit is
 * refitted with a ridge penalty (`stableFit`). A cycle seen fewer than 3 times is not modelled,
 * at any horizon (`periodsOf`).
 */
import { seasonalPeriods } from '../../periods';
import { InsufficientDataError } from '../../errors';
import { countFinite, isConstant, lastFiniteIndex, nanSd } from '../../math/stats';
import type { Fitted, ModelFamily, PredictiveDistribution, Series, SeriesInfo } from '../../types';
import { checkFinite } from '../naive';
import { dropLeading, linearGaussianForecast } from '../naive-forecast';
import { arPsi, dominantGrowth, fitSubsetAr, forecastSubsetAr, type ArFit } from './fit';
import { autoregLags, type LagOptions } from './lags';
import { filledRegressorSd, GapFill } from './filled';
import { expForecast } from './exp-step';

/** Options of the `autoreg` family. */
export interface AutoregOptions extends LagOptions {
  /** `auto` (default: log when every value is positive), `log`, or `none`. */
  readonly transform?: 'auto' | 'log' | 'none';
  /**
   * Ridge constant relative to rows × variance; default 0 (plain least squares). Why 0: on M4
   * hourly even 0.001 shrank the seasonal coefficients enough to cost OWA (0.449 → 0.465 on a
   * dense lag set); the penalty is used only to tame an explosive fit (see `stableFit`).
   */
  readonly ridge?: number;
  /** Fit the AR to first differences (an ARI model; forecasts integrate back). Default false. */
  readonly difference?: boolean;
  /**
   * Fit on the last `window` observations only; default `WINDOW_CYCLES` × the longest period
   * (all data when non-seasonal).
   */
  readonly window?: number;
  /** Seasonal periods (override `info.periods`). */
  readonly periods?: readonly number[];
}

/** Default ridge constant (see `AutoregOptions.ridge`). */
export const DEFAULT_RIDGE = 0;

/**
 * Default window in cycles of the longest period. Why: long weekly histories (M4 weekly runs to
 * 2,600 points, 50 years) hold structural changes that a fixed-coefficient AR averages over;
 * ten years of weekly data fit better (M4 weekly OWA, log AR: all data 0.760, 10 cycles 0.749,
 * 15 cycles 0.745, 8 cycles 0.762, 5 cycles 0.836). Hourly series (≤ 960 points < 10 weeks) are unaffected.
 */
export const WINDOW_CYCLES = 10;

/** Fewest observations: a few rows for the shortest lag set. */
const MIN_OBS = 10;

/**
 * The seasonal periods with at least 3 cycles in `n` observations. Why 3 (as `withPeriod` and
 * `auto` in `registry.ts`): seasonal lags fitted on fewer cycles overfit — M4 weekly series under
 * 156 points with lags 51–53: OWA 1.18; with lags 1–3 only: 0.94. And daily web traffic of two
 * years (engine 1.11.0): the yearly lags 364–366, which engines 1.8.0–1.10.1 used beyond a 70-day
 * horizon where the yearly cycle visibly repeated, copy single days of one earlier year (a spike
 * comes back a year later). On the 61 of 1,000 series where they were used, 73 days ahead from
 * day 730 (into the file's test part: a diagnostic; the benchmark forecasts 59 days from day 744,
 * where no engine used them): MASE 1.715 against 0.737 without them, MSIS 24.65 against 7.45; used
 * at every horizon, 14 days ahead (training parts only): MASE 2.689 against 0.809; used at every
 * horizon only where the cycle's correlation was at least 0.5 (11 series): MASE 14–21% worse at 7,
 * 14 and 73 days. The cost: a clean yearly sine seen twice is forecast a year ahead by the last 70
 * days' AR (README, "Not yet at its best"). And one model at every horizon: those engines forecast
 * the same day 120 asked 70 days ahead and 157 asked 71 days ahead.
 */
function periodsOf(info: SeriesInfo, options: AutoregOptions, n: number): number[] {
  return seasonalPeriods(info.period, options.periods ?? info.periods).filter((v) => n >= 3 * v);
}

function fitAutoreg(y: Series, info: SeriesInfo, options: AutoregOptions = {}): Fitted {
  checkFinite(y, 'AR');
  const have = countFinite(y);
  if (have < MIN_OBS) throw new InsufficientDataError(have, MIN_OBS, 'AR');
  const warnings: string[] = [];
  const last = lastFiniteIndex(y);
  const trailing = y.length - 1 - last;
  const periods = periodsOf(info, options, last + 1);
  const window = options.window ?? (periods.length > 0 ? WINDOW_CYCLES * periods[periods.length - 1] : Infinity);
  let start = Math.max(0, last + 1 - Math.max(MIN_OBS, Math.round(window)));
  // a window that gaps leave with too few observations reaches back until it has enough (the
  // series has them: `have` was checked), instead of refusing a series for its recent gap
  let inWindow = 0;
  for (let t = start; t <= last; t++) if (Number.isFinite(y[t])) inWindow++;
  while (inWindow < MIN_OBS && start > 0) if (Number.isFinite(y[--start])) inWindow++;
  const obs = Array.from({ length: last + 1 - start }, (_, t) => y[start + t]);
  let positive = true;
  for (const v of obs) if (Number.isFinite(v) && v <= 0) positive = false;
  // a history with negative values anywhere is a signed quantity, whatever the window shows: a
  // log model could never forecast the negative half again (found by QA: 800 days of a yearly
  // cycle down to −11.4, whose last 70 days were positive, forecast at 15 with [9, 25] for 1,000 days)
  for (let t = 0; t < start; t++) if (y[t] < 0) positive = false;
  const mode = options.transform ?? 'auto';
  if (mode === 'log' && !positive) warnings.push('log transform skipped: series has values ≤ 0');
  const useLog = positive && mode !== 'none';
  const raw = Float64Array.from(obs, (v) => (Number.isFinite(v) ? (useLog ? Math.log(v) : v) : NaN));
  const used = countFinite(raw);
  if (used < MIN_OBS) throw new InsufficientDataError(used, MIN_OBS, 'AR');
  if (used < raw.length) warnings.push(`${raw.length - used} missing values interpolated for the lags`);
  // gaps in the window filled along the shortest cycle or by straight lines, whichever fits the
  // series, over the whole history (`filled.ts`; values a log cannot take, before the window:
  // left out); a complete window needs none of it
  const gaps = used === raw.length ? null : new GapFill(modelScale(y, start, last, raw, useLog), periods[0] ?? 1);
  const level = gaps ? gaps.filled.slice(start) : Float64Array.from(raw);
  const observed = gaps ? gaps.observed.slice(start) : new Uint8Array(raw.length).fill(1);
  const diff = options.difference ?? false;
  // the series the AR is fitted to: the (log) level, or its first differences
  const x = diff ? level.subarray(1).map((v, t) => v - level[t]) : level;
  const xObserved = diff ? observed.subarray(1).map((o, t) => o & observed[t]) : observed;
  const honest = leakFree(xObserved, autoregLags(periods, x.length, options));
  const lags = honest.lags;
  if (honest.dropped.length > 0) {
    warnings.push(`lags ${honest.dropped.join(', ')} left out: the values they reach back to are mostly missing, and filling them in would use the very values they predict`);
  }
  const constant = isConstant(x);
  const back = (v: number): number => (useLog ? Math.exp(v) : v);
  const ridge = options.ridge ?? DEFAULT_RIDGE;
  const accepts = stabilityCheck(x, lags, diff ? (v) => v : back);
  const fitted0 = constant ? null : stableFit(x, honest.rows, lags, ridge, warnings, accepts);
  // Without a fit (a constant series aside) the flat forecast keeps the data's own spread: a
  // sparse series (a few observations a year) is not known to the last digit (found by QA: every
  // quantile equal, a 100% certain forecast).
  const flatSigma = constant || fitted0 ? 0 : nanSd(x.map((v, t) => (xObserved[t] ? v : NaN)));
  let fit = fitted0;
  const name = `AR${diff ? 'I' : ''}(${lags.join(',')})${useLog ? '[log]' : ''}`;
  if (constant) warnings.push(`constant ${diff ? 'differences' : 'series'}: ${diff ? 'linear' : 'flat'} forecast`);
  const fitted = new Float64Array(y.length).fill(NaN);
  const lastX = x[x.length - 1];
  // the last forecast's mean in the scale of x (levels; null in differences), for `addedSd`
  let lastMean: Float64Array | null = null;
  if (fitted0) for (let t = 0; t < x.length; t++) fitted[start + t + (diff ? 1 : 0)] = back(fitted0.fitted[t] + (diff ? level[t] : 0));
  return {
    model: name,
    // the fit the last forecast used (see `forecast`)
    get params() {
      return fit
        ? { lags: [...fit.lags], phi: [...fit.phi], intercept: fit.intercept, sigma: fit.sigma, log: useLog, difference: diff }
        : { lags: [], phi: [], intercept: lastX, sigma: 0, log: useLog, difference: diff };
    },
    nobs: used,
    fitted,
    warnings,
    forecast(h: number): PredictiveDistribution {
      const H = h + trailing;
      // a fit that is stable for 48 steps but not for this horizon (its dominant mode would more
      // than double, `EXPLOSION_FACTOR`, or its recursion leave the range) is refitted with a
      // ridge penalty for it; horizons it is stable for keep the plain fit
      fit = fitted0;
      if (fitted0 && !accepts(fitted0, H)) fit = stableFit(x, honest.rows, lags, ridge, warnings, accepts, H);
      const mean = fit ? forecastSubsetAr(fit, x, H) : new Float64Array(H).fill(lastX);
      lastMean = diff ? null : mean; // not changed below but in differences (integrated in place)
      const psi = fit ? arPsi(fit, H) : new Float64Array(H);
      if (diff) {
        // integrate: levels are the last level plus cumulated differences; ψ of the level = Σ ψ
        let acc = level[level.length - 1];
        let cum = 0;
        for (let k = 0; k < H; k++) {
          acc += mean[k];
          mean[k] = acc;
          cum += psi[k];
          psi[k] = cum;
        }
      }
      const base = linearGaussianForecast({ model: name, mean, sigma: fit ? fit.sigma : flatSigma, psi: (j) => psi[j] });
      return dropLeading(useLog ? expForecast(base) : base, trailing);
    },
    // filled-in values the last forecast's recursion read (`filled.ts`); levels only: in
    // differences a filled level enters two differences with opposite signs. In logs, the error's
    // standard deviation times the step's median (the delta method), since it is added in the
    // original scale.
    addedSd(h: number): Float64Array | null {
      if (!gaps || !fit || !lastMean || lastMean.length !== h + trailing) return null;
      const sd = filledRegressorSd(fit, gaps, h + trailing);
      if (!sd) return null;
      const out = sd.slice(trailing);
      if (useLog) for (let k = 0; k < h; k++) out[k] *= Math.exp(lastMean[k + trailing]);
      return out;
    },
  };
}

/** `y` up to `last` in the model's scale: `window` from `start` on, before it NaN where a log cannot take the value. */
function modelScale(y: Series, start: number, last: number, window: Float64Array, useLog: boolean): Float64Array {
  const out = new Float64Array(last + 1);
  for (let t = 0; t < start; t++) out[t] = Number.isFinite(y[t]) && (!useLog || y[t] > 0) ? (useLog ? Math.log(y[t]) : y[t]) : NaN;
  out.set(window, start);
  return out;
}

/**
 * Widths of the original-scale range a stable fit's recursion may move beyond it (`stableFit`).
 * Why 8: 4 already ridged some M4 hourly series that forecast well unridged (OWA 0.410 → 0.411).
 */
const ORIGINAL_SCALE_WIDTHS = 8;

/**
 * How much the AR's dominant mode may grow over the forecast's horizon (`dominantGrowth`; ×2).
 * Why, beside `stableFit`'s range check over 48 steps: a slightly explosive fit stays in range
 * that long and diverges later — the demo store:paris (730 days, log AR with Σφ = 1.036, dominant
 * mode ×1.0052 a step) forecast 190 at day 100, 2,564 at day 365 and the guard band's cap at day
 * 1000, from a history of 51–221; the sum of the two stores (a region), whose fit has a unit root
 * and a drift in logs, passed this check but not the recursion's range over 1,000 steps (median
 * 23,788 from a history of about 250–700). Why per horizon and not once for the longest one (1,000 steps):
 * trending weekly series fit log ARs with Σφ slightly above 1, whose growth is right over their
 * 13-week horizon; ridging every fit whose mode doubles within 1,000 steps cost M4 weekly MASE
 * 2.05 → 3.18.
 */
export const EXPLOSION_FACTOR = 2;

/** True when the fit's dominant mode grows at most `EXPLOSION_FACTOR`-fold over `horizon` steps. */
function withinHorizon(fit: ArFit, horizon: number): boolean {
  if (horizon <= 0) return true;
  // the dominant mode grows at most max(1, Σ|φ|) a step (|λ| > 1 in λ^p = Σ φ_j λ^(p−ℓ_j) gives |λ| ≤ Σ|φ_j|): skip the estimate when that suffices
  let bound = 0;
  for (const v of fit.phi) bound += Math.abs(v);
  return bound <= 1 || bound ** horizon <= EXPLOSION_FACTOR || dominantGrowth(fit) ** horizon <= EXPLOSION_FACTOR;
}

/** Ridge constants tried, in order, after the requested one fails the stability check. */
const RIDGE_LADDER = [1e-3, 1e-2, 1e-1, 1];

/**
 * Fit, and refit with a growing ridge penalty while the fit is degenerate or explosive
 * (`stabilityCheck`): with a `horizon`, its dominant mode may grow at most `EXPLOSION_FACTOR`-fold
 * over it; and the deterministic recursion over max(2·max lag, 48, horizon) steps must stay within the modelled series'
 * range widened by twice its width on each side, and — on the original scale (`back` maps a
 * modelled value to it) — within its range widened by `ORIGINAL_SCALE_WIDTHS` widths (why: free
 * subset-AR coefficients can have roots inside the unit circle, and a recursive forecast then
 * diverges; shrinkage pulls the roots back). Null if none passes. Why the second check: in logs
 * twice the width allows growth by a factor (max/min)², e.g. 2,884 → 10⁸ on a page-view series
 * ending in a spike (web traffic T909, whose log AR had coefficients summing to 1.02; its MASE
 * was 821, the set's mean 1.63 instead of 0.81).
 */
function stableFit(x: Float64Array, observed: Uint8Array, lags: readonly number[], ridge: number, warnings: string[], accepts: StabilityCheck, horizon = 0): ArFit | null {
  for (const r of [ridge, ...RIDGE_LADDER.filter((v) => v > ridge)]) {
    const fit = fitSubsetAr(x, observed, lags, r);
    if (!fit) continue;
    if (accepts(fit, horizon)) {
      if (r !== ridge) warnings.push(`explosive or singular fit: ridge ${r} used`);
      return fit;
    }
  }
  warnings.push('no stable autoregression: flat forecast with the spread of the data');
  return null;
}

/**
 * The lags and rows a fit may use honestly when values are missing. A missing value is filled in
 * from its gap's observed neighbours (and values a cycle before them, `filled.ts`); as a regressor
 * of row t it is honest only when both neighbours lie before t — otherwise the filled value
 * contains the target itself (every other day missing: lag 1 is the mean of x[t−2] and x[t]), and
 * the fit learns to predict a value from itself: intervals 20–40 times too narrow (found by QA). A
 * lag is kept when it is honest for at least half the observed targets; a row is used when its
 * target is observed and every kept lag is honest there. With no missing value nothing changes. When no lag qualifies,
 * the shortest honest one is used (every third day kept: lag 3).
 */
function leakFree(observed: Uint8Array, lags: readonly number[]): { lags: number[]; rows: Uint8Array; dropped: number[] } {
  const n = observed.length;
  if (observed.every((o) => o === 1)) return { lags: [...lags], rows: observed, dropped: [] };
  const next = new Float64Array(n + 1).fill(Infinity); // next observed index at or after s
  for (let s = n - 1; s >= 0; s--) next[s] = observed[s] ? s : next[s + 1];
  const honestAt = (t: number, lag: number) => t - lag >= 0 && (observed[t - lag] === 1 || next[t - lag] < t);
  const maxLag = lags[lags.length - 1];
  const targets: number[] = [];
  for (let t = maxLag; t < n; t++) if (observed[t]) targets.push(t);
  const share = (lag: number) => targets.filter((t) => honestAt(t, lag)).length / Math.max(1, targets.length);
  let kept = lags.filter((lag) => share(lag) >= 0.5);
  if (kept.length === 0) {
    for (let lag = 1; lag <= maxLag; lag++) {
      if (share(lag) >= 0.5) {
        kept = [lag];
        break;
      }
    }
  }
  if (kept.length === 0) kept = [...lags];
  const rows = Uint8Array.from(observed, (o, t) => (o && kept.every((lag) => honestAt(t, lag)) ? 1 : 0));
  return { lags: kept, rows, dropped: lags.filter((lag) => !kept.includes(lag)) };
}

/** Whether a fit of `x` is stable for a horizon (see `stableFit`; horizon 0: the fit-time check). */
type StabilityCheck = (fit: ArFit, horizon: number) => boolean;

/** The check `stableFit` applies to fits of `x` (`back` maps a modelled value to the original scale). */
function stabilityCheck(x: Float64Array, lags: readonly number[], back: (v: number) => number): StabilityCheck {
  let lo = Infinity;
  let hi = -Infinity;
  let loY = Infinity;
  let hiY = -Infinity;
  for (const v of x) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
    loY = Math.min(loY, back(v));
    hiY = Math.max(hiY, back(v));
  }
  const width = hi - lo;
  const widthY = (hiY - loY) * ORIGINAL_SCALE_WIDTHS;
  const steps = Math.max(2 * lags[lags.length - 1], 48);
  const inside = (v: number) => v >= lo - 2 * width && v <= hi + 2 * width && back(v) >= loY - widthY && back(v) <= hiY + widthY;
  return (fit, horizon) => withinHorizon(fit, horizon) && forecastSubsetAr(fit, x, Math.max(steps, horizon)).every(inside);
}

/** The seasonal autoregression family (`autoreg`). */
export const autoreg: ModelFamily<AutoregOptions> = {
  name: 'autoreg',
  minObservations: () => MIN_OBS,
  fit: fitAutoreg,
};
