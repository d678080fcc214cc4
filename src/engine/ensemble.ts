/**
 * Forecast combination with a proper predictive distribution. Two ways to combine the members'
 * step distributions:
 * - `quantile` (default): Vincentisation, the weighted average of the members' quantile
 *   functions (Vincent 1912; Lichtendahl, Grushka-Cockayne & Winkler 2013, "Is it better to
 *   average probabilities or quantiles?"). Keeps the spread of the members rather than widening
 *   it with their disagreement, which suits members that share information (ETS, ARIMA, Theta on
 *   the same series). Point forecast = the weighted mean of the members' means (the classic
 *   combination, Makridakis & Hibon 2000 "COMB S-H-D"; Hyndman's ETS+ARIMA).
 * - `mixture`: the weighted linear pool, F = Σ wᵢFᵢ (Stone 1961), wider when members disagree.
 *
 * The ensemble is itself a `ModelFamily`, so it can be backtested and selected like any model.
 */
import type { Fitted, ModelFamily, Params, PredictiveDistribution, Series, SeriesInfo, StepDistribution } from './types';
import { InsufficientDataError } from './errors';
import { guardBand, isDegenerate } from './guard';
import { Rng } from './rng';
import { cdfByBisection } from './distributions/invert';

/** Members of a combination. */
export interface EnsembleMember {
  readonly family: ModelFamily<never> | ModelFamily;
  readonly options?: unknown;
  /** Relative weight, default 1. */
  readonly weight?: number;
}

/** Σ wᵢ · meanᵢ: the mean of either combination. */
function weightedMean(members: readonly StepDistribution[], weights: Float64Array): number {
  let m = 0;
  for (let i = 0; i < members.length; i++) m += weights[i] * members[i].mean;
  return m;
}

/** Weighted average of quantile functions. */
export class QuantileAverageStep implements StepDistribution {
  readonly mean: number;
  constructor(
    private readonly members: readonly StepDistribution[],
    private readonly weights: Float64Array,
  ) {
    this.mean = weightedMean(members, weights);
  }
  quantile(p: number): number {
    let q = 0;
    for (let i = 0; i < this.members.length; i++) q += this.weights[i] * this.members[i].quantile(p);
    return q;
  }
  /** The inverse of `quantile` (`cdfByBisection`). */
  cdf(x: number): number {
    return cdfByBisection((p) => this.quantile(p), x);
  }
}

/** Weighted linear pool of CDFs. */
export class LinearPoolStep implements StepDistribution {
  readonly mean: number;
  constructor(
    private readonly members: readonly StepDistribution[],
    private readonly weights: Float64Array,
  ) {
    this.mean = weightedMean(members, weights);
  }
  cdf(x: number): number {
    let c = 0;
    for (let i = 0; i < this.members.length; i++) c += this.weights[i] * this.members[i].cdf(x);
    return Math.min(1, Math.max(0, c));
  }
  /** Bisection on x between the members' extreme quantiles at p. */
  quantile(p: number): number {
    let lo = Infinity;
    let hi = -Infinity;
    for (const m of this.members) {
      const q = m.quantile(p);
      if (q < lo) lo = q;
      if (q > hi) hi = q;
    }
    if (!(hi > lo)) return lo;
    for (let k = 0; k < 80 && hi - lo > 1e-12 * (Math.abs(lo) + Math.abs(hi)); k++) {
      const mid = 0.5 * (lo + hi);
      if (this.cdf(mid) < p) lo = mid;
      else hi = mid;
    }
    return 0.5 * (lo + hi);
  }
}

/** Combine already computed member forecasts. */
export function combineForecasts(
  name: string,
  members: readonly PredictiveDistribution[],
  weights: ArrayLike<number>,
  method: 'quantile' | 'mixture' = 'quantile',
): PredictiveDistribution {
  const w = Float64Array.from(weights);
  const total = w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) w[i] /= total;
  const h = Math.min(...members.map((m) => m.steps.length));
  const steps: StepDistribution[] = [];
  const mean = new Float64Array(h);
  for (let i = 0; i < h; i++) {
    const ms = members.map((m) => m.steps[i]);
    steps.push(method === 'quantile' ? new QuantileAverageStep(ms, w) : new LinearPoolStep(ms, w));
    mean[i] = steps[i].mean;
  }
  let lead = 0;
  for (let i = 1; i < w.length; i++) if (w[i] > w[lead]) lead = i;
  return {
    model: name,
    mean,
    steps,
    intervalMethod: method === 'quantile' ? 'quantile-average' : 'mixture',
    samplePaths(n: number, seed: number): Float64Array[] {
      if (method === 'mixture') {
        // exact: each path comes from one member, drawn with probability = weight
        const rng = new Rng(seed);
        const pick = new Int32Array(n);
        const counts = new Int32Array(w.length);
        for (let j = 0; j < n; j++) {
          let u = rng.uniform();
          let k = 0;
          while (k < w.length - 1 && u >= w[k]) u -= w[k++];
          pick[j] = k;
          counts[k]++;
        }
        const drawn = members.map((m, k) => (counts[k] > 0 ? m.samplePaths(counts[k], (seed + 7919 * (k + 1)) >>> 0) : []));
        const used = new Int32Array(w.length);
        return Array.from(pick, (k) => drawn[k][used[k]++].slice(0, h));
      }
      // the lead member's dependence across steps (its copula), the combination's marginals
      const paths = members[lead].samplePaths(n, seed);
      const src = members[lead].steps;
      return paths.map((path) => {
        const out = new Float64Array(h);
        for (let i = 0; i < h; i++) out[i] = steps[i].quantile(Math.min(1 - 1e-9, Math.max(1e-9, src[i].cdf(path[i]))));
        return out;
      });
    },
  };
}

/**
 * A model family that fits every member and combines their forecasts. Members that cannot fit
 * (too little data, a numerical failure) are dropped with a warning; the ensemble fails only when
 * none fits. So is a member whose forecast is degenerate against the series' plausibility band
 * (`guard.ts`: a point forecast outside it, or an interval wider than it), unless every member
 * is; the warning is added when `forecast` runs. `minObservations` is the smallest member's (why:
 * the ensemble degrades gracefully to whichever members the data supports).
 */
export function ensembleFamily(
  name: string,
  members: readonly EnsembleMember[],
  method: 'quantile' | 'mixture' = 'quantile',
): ModelFamily {
  const fams = members.map((m) => m.family as ModelFamily<unknown>);
  return {
    name,
    minObservations: (info: SeriesInfo) => Math.min(...fams.map((f, i) => f.minObservations(info, members[i].options))),
    fit(y: Series, info: SeriesInfo): Fitted {
      const fits: Fitted[] = [];
      const used: number[] = [];
      const weights: number[] = [];
      const warnings: string[] = [];
      let firstError: unknown;
      for (let i = 0; i < fams.length; i++) {
        try {
          const f = fams[i].fit(y, info, members[i].options);
          fits.push(f);
          used.push(i);
          weights.push(members[i].weight ?? 1);
          // once each: a pool of three TSBs says "no demand observed" once, not three times
          for (const w of f.warnings) if (!warnings.includes(`${f.model}: ${w}`)) warnings.push(`${f.model}: ${w}`);
        } catch (err) {
          firstError ??= err;
          warnings.push(`${fams[i].name} dropped: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      if (fits.length === 0) {
        if (firstError instanceof Error) throw firstError;
        throw new InsufficientDataError(0, 1, name);
      }
      const label = `${name}(${fits.map((f) => f.model).join(', ')})`;
      // the members the last forecast combined (`addedSd`)
      let lastKept: boolean[] = fits.map(() => true);
      const series = y;
      const params: Params = {
        method,
        members: Object.fromEntries(fits.map((f, i) => [`${i}:${f.model}`, { weight: weights[i], ...f.params }])),
      };
      return {
        model: label,
        params,
        nobs: Math.max(...fits.map((f) => f.nobs)),
        fitted: combinedFitted(fits, weights, y.length),
        warnings,
        forecast(h: number): PredictiveDistribution {
          const forecasts = fits.map((f) => f.forecast(h));
          const band = fits.length > 1 ? guardBand(series, h) : null;
          const keep = forecasts.map((pd) => !band || !isDegenerate(pd, band));
          if (!keep.some(Boolean)) keep.fill(true);
          lastKept = keep;
          const kept = fits.filter((_, i) => keep[i]);
          fits.forEach((f, i) => {
            const msg = `${f.model} dropped: degenerate forecast (outside the plausibility band)`;
            if (!keep[i] && !warnings.includes(msg)) warnings.push(msg);
          });
          return combineForecasts(
            kept.length === fits.length ? label : `${name}(${kept.map((f) => f.model).join(', ')})`,
            forecasts.filter((_, i) => keep[i]),
            weights.filter((_, i) => keep[i]),
            method,
          );
        },
        // the combined members' added errors, averaged with the forecasts' weights (0 for a
        // member without one): the width a quantile average of the widened members would add
        // when their own spreads are alike
        addedSd(h: number): Float64Array | null {
          let out: Float64Array | null = null;
          let total = 0;
          fits.forEach((f, i) => {
            if (!lastKept[i]) return;
            total += weights[i];
            const sd = f.addedSd?.(h);
            if (!sd) return;
            out ??= new Float64Array(h);
            for (let k = 0; k < h; k++) out[k] += weights[i] * sd[k];
          });
          return out ? (out as Float64Array).map((v) => v / total) : null;
        },
        // The members that fitted, each as its chosen structure (backtests assess this combination).
        refit: ensembleFamily(
          name,
          used.map((i, k) => ({ ...members[i], family: fits[k].refit ?? members[i].family })),
          method,
        ),
      };
    },
  };
}

/**
 * In-sample one-step fitted values of the combination: the weighted mean of the members' (the
 * combination's point forecast, applied in sample). Undefined unless every member has them at
 * the series' length (why: a partial mean would mix different models from one time to the next).
 */
function combinedFitted(fits: readonly Fitted[], weights: readonly number[], n: number): Float64Array | undefined {
  if (!fits.every((f) => f.fitted && f.fitted.length === n)) return undefined;
  const total = weights.reduce((a, b) => a + b, 0);
  const out = new Float64Array(n);
  fits.forEach((f, k) => {
    const w = weights[k] / total;
    for (let t = 0; t < n; t++) out[t] += w * f.fitted![t];
  });
  return out;
}
