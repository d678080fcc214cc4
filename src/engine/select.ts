/**
 * Per-series model selection by rolling-origin validation on the series' own history
 * (Fildes & Petropoulos 2015, "Simple versus complex selection rules for forecasting many time
 * series"; the cross-validation alternative to information criteria of Hyndman & Athanasopoulos,
 * FPP3 §5.8). Each candidate is backtested on the same origins (`backtest.ts`) and the one with
 * the lowest mean CRPS wins — CRPS because the service sells distributions, and on one series the
 * scale is shared so no scaling is needed. Ties and failures fall back to the first candidate
 * (list candidates in order of prior preference).
 */
import { backtest, type BacktestOptions, type BacktestResult } from './backtest';
import type { Fitted, ModelFamily, Series, SeriesInfo } from './types';

/** One candidate: a family and its fit options. */
export interface Candidate {
  /** Label for reports (defaults to the family name). */
  readonly label?: string;
  readonly family: ModelFamily<never> | ModelFamily;
  readonly options?: unknown;
}

/** Selection result: the winner and every candidate's backtest. */
export interface Selection {
  readonly best: number;
  readonly scores: readonly { label: string; crps: number; coverage: number; origins: number }[];
  readonly backtests: readonly BacktestResult[];
}

/** Backtest every candidate on the same origins and pick the lowest mean CRPS. */
export function selectByBacktest(
  candidates: readonly Candidate[],
  y: Series,
  info: SeriesInfo,
  options: Omit<BacktestOptions, 'fitOptions'>,
): Selection {
  const fams = candidates.map((c) => c.family as ModelFamily<unknown>);
  // the same origins for all: those the most demanding fittable candidate allows
  const backtests = candidates.map((c, i) => backtest(fams[i], y, info, { ...options, fitOptions: c.options }));
  const common = commonOrigins(backtests);
  let best = 0;
  let bestScore = Infinity;
  const scores = backtests.map((bt, i) => {
    let s = 0;
    let n = 0;
    for (const o of bt.origins) {
      if (!common.has(o.origin) || !Number.isFinite(o.crps)) continue;
      s += o.crps;
      n++;
    }
    const crps = n > 0 && n === common.size ? s / n : NaN;
    if (crps < bestScore) {
      bestScore = crps;
      best = i;
    }
    return { label: candidates[i].label ?? fams[i].name, crps, coverage: bt.coverage, origins: n };
  });
  return { best, scores, backtests };
}

function commonOrigins(bts: readonly BacktestResult[]): Set<number> {
  const scored = bts.filter((b) => b.origins.length > 0);
  if (scored.length === 0) return new Set();
  let common = new Set(scored[0].origins.map((o) => o.origin));
  for (const b of scored.slice(1)) {
    const mine = new Set(b.origins.map((o) => o.origin));
    const both = new Set([...common].filter((t) => mine.has(t)));
    // a candidate that could not score any common origin must not empty the comparison
    if (both.size > 0) common = both;
  }
  return common;
}

/**
 * A family that selects among `candidates` per series, then fits the winner on the whole series.
 * When no candidate can be backtested (short history) the first one that fits is used, with a
 * warning. `minObservations` is the smallest candidate's.
 */
export function selectorFamily(
  name: string,
  candidates: readonly Candidate[],
  options: Omit<BacktestOptions, 'fitOptions' | 'horizon'> & { horizon?: number } = {},
): ModelFamily {
  const fams = candidates.map((c) => c.family as ModelFamily<unknown>);
  return {
    name,
    minObservations: (info: SeriesInfo) => Math.min(...fams.map((f, i) => f.minObservations(info, candidates[i].options))),
    fit(y: Series, info: SeriesInfo, fitOptions?: { horizon?: number }): Fitted {
      const horizon = fitOptions?.horizon ?? options.horizon ?? Math.max(1, info.period);
      const sel = selectByBacktest(candidates, y, info, { ...options, horizon });
      const order = [sel.best, ...candidates.keys()].filter((v, i, a) => a.indexOf(v) === i);
      const warnings: string[] = [];
      if (!Number.isFinite(sel.scores[sel.best].crps)) warnings.push('too little history to validate candidates; used the first that fits');
      let lastError: unknown;
      for (const i of order) {
        try {
          const f = fams[i].fit(y, info, candidates[i].options);
          // explicit fields, not a spread: a Fitted may be a class instance with getters
          return {
            model: f.model,
            params: { ...f.params, selectedBy: 'rolling-origin CRPS', candidates: sel.scores.map((s) => s.label).join(',') },
            nobs: f.nobs,
            loglik: f.loglik,
            aic: f.aic,
            aicc: f.aicc,
            bic: f.bic,
            fitted: f.fitted,
            warnings: [...warnings, ...f.warnings],
            forecast: (h: number) => f.forecast(h),
            ...(f.addedSd ? { addedSd: (h: number) => f.addedSd!(h) } : {}),
          };
        } catch (err) {
          lastError = err;
          warnings.push(`${candidates[i].label ?? fams[i].name} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      throw lastError;
    },
  };
}
