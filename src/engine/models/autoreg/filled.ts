/**
 * Filled-in regressors: how missing values inside the AR's window are filled for its lags, and the
 * uncertainty the filled values add to a forecast that reads them.
 *
 * The fill (`GapFill`): a gap of g values is filled either by the straight line between its ends
 * or from the same stretch one or more cycles back (the shortest multiple q of the series' shortest
 * period that reaches before the gap), shifted by a straight line between the differences at the
 * gap's two ends, x[a−1] − x[a−1−q] and x[b] − x[b−q]; whichever of the two made the smaller mean
 * squared error filling the fully observed stretches of g values in the series (the same stretches
 * `filledRegressorSd` measures; with none to measure, the cycle). Why not the straight line alone:
 * it drops the cycle, and a forecast whose seasonal lags read a straight line across the missing
 * day loses the cycle's phase (found by QA: a cycle plus noise with a day missing near the end, 95%
 * coverage 0.34–0.83; M4 hourly's training windows with a day missing 10 hours before the origin:
 * MASE 6.17 against 0.79 without the gap). Why not the cycle alone: on noisy data with a weak cycle
 * (web traffic, M4 weekly's year) the line's two ends beat one noisy value a cycle back. Both fills
 * use only values outside the gap and none after its right end, so which lags stay honest
 * (`leakFree`) is the same.
 *
 * The error (`filledRegressorSd`): where the forecast's recursion reads filled values (a gap within
 * the last max-lag steps), their errors are measured on the series itself — the errors of the same
 * fill at the same places in up to `MAX_STRETCHES` fully observed stretches of the gap's length —
 * and carried to every forecast step through the recursion's response to them (correlations along
 * a gap included; separate gaps taken as independent). The result is a standard deviation per
 * step that the forecasting facade adds *after* calibration (`Fitted.addedSd`, `widenSteps`): the
 * calibration priors were fitted on the AR's own intervals and scale them, not this term (found by
 * a QA round on engine 1.9.0, which added it before calibration: hourly data with 72 hours missing,
 * steps 501–1,000, width 252 against an RMSE of 24, the prior's factor of ~2.3 multiplying a term
 * that on its own matched the errors).
 *
 * Cost: it is computed once per answer (never in backtests), in work proportional to the filled
 * values read × (max lag + h) × lags for gaps of up to `MAX_STRETCHES` values, and to
 * stretches × (max lag + h) × lags for longer ones; fill errors are measured once per gap length
 * and fill.
 */
import { fillMissingLinear } from '../../math/stats';
import type { ArFit } from './fit';

/**
 * Most fully observed stretches a gap's fill errors are measured on (evenly spaced). Why 64: 64
 * errors give a variance within about ±18%, and the work grows with their number.
 */
export const MAX_STRETCHES = 64;

/** The fill of position u of the gap [a, b) in `x` from lag `q` (0: the straight line between the ends); reads only values outside the gap. */
function fillAt(x: ArrayLike<number>, a: number, b: number, q: number, u: number): number {
  const f = (u - a + 1) / (b - a + 1);
  if (q === 0) return x[a - 1] + (x[b] - x[a - 1]) * f;
  const left = x[a - 1] - x[a - 1 - q];
  const right = x[b] - x[b - q];
  return x[u - q] + left + (right - left) * f;
}

/**
 * A series' missing values filled for the AR's lags (see the file comment; gaps at either end by
 * the nearest value, as `fillMissingLinear`), with the fill chosen per gap and the fill errors
 * measured on the series, kept for `filledRegressorSd`.
 */
export class GapFill {
  /** The series with its gaps filled. */
  readonly filled: Float64Array;
  /** 1 where the series was observed. */
  readonly observed: Uint8Array;
  private readonly errorsOf = new Map<string, Float64Array[]>();
  private readonly lagOf = new Map<number, number>();

  constructor(
    raw: ArrayLike<number>,
    private readonly period: number,
  ) {
    this.observed = Uint8Array.from({ length: raw.length }, (_, t) => (Number.isFinite(raw[t]) ? 1 : 0));
    this.filled = fillMissingLinear(raw);
    // gaps left to right, so a gap's values q back may be an earlier gap's fill
    const n = raw.length;
    for (let a = 1; a < n; a++) {
      if (this.observed[a] || !this.observed[a - 1]) continue;
      let b = a;
      while (b < n && !this.observed[b]) b++;
      if (b === n) break;
      const q = this.lagFor(a, b - a);
      if (q > 0) for (let u = a; u < b; u++) this.filled[u] = fillAt(this.filled, a, b, q, u);
      a = b;
    }
  }

  /** The lag the gap [a, a + g) is filled from (0: the straight line; see the file comment). */
  lagFor(a: number, g: number): number {
    if (a < 1) return 0;
    if (!this.lagOf.has(g)) {
      const q = this.period > 1 ? Math.ceil((g + 1) / this.period) * this.period : 0;
      const mse = (e: Float64Array[]) => e.reduce((s, v) => s + v.reduce((t, d) => t + d * d, 0), 0) / (e.length * g);
      const cycle = q > 0 ? this.errors(g, q) : [];
      const line = this.errors(g, 0);
      this.lagOf.set(g, q > 0 && (cycle.length === 0 ? line.length === 0 : mse(cycle) < mse(line)) ? q : 0);
    }
    const q = this.lagOf.get(g)!;
    return a - 1 - q >= 0 ? q : 0;
  }

  /** The errors of the fill from lag `q` of a gap of `g` values on the series' stretches (`fillErrors`), measured once. */
  errors(g: number, q: number): Float64Array[] {
    const key = `${g}:${q}`;
    if (!this.errorsOf.has(key)) this.errorsOf.set(key, fillErrors(this.filled, this.observed, g, q));
    return this.errorsOf.get(key)!;
  }
}

/**
 * Per-step standard deviations (length `h`, in the scale of the series) of the forecast error that
 * the filled-in values of `gaps` add to a fit on `gaps.filled`; null when the forecast reads no
 * filled value.
 */
export function filledRegressorSd(fit: Pick<ArFit, 'lags' | 'phi'>, gaps: GapFill, h: number): Float64Array | null {
  const { filled: x, observed } = gaps;
  const n = x.length;
  const maxLag = fit.lags[fit.lags.length - 1] ?? 0;
  const respond = responder(fit, n, h);
  const variance = new Float64Array(h);
  let any = false;
  for (let t = Math.max(0, n - maxLag); t < n; t++) {
    if (observed[t]) continue;
    // the gap [a, b) around t, and the positions in it the forecast reads (from t on)
    let a = t;
    while (a > 0 && !observed[a - 1]) a--;
    let b = t + 1;
    while (b < n && !observed[b]) b++;
    const read = Array.from({ length: b - t }, (_, i) => t + i);
    t = b - 1;
    any = true;
    const errors = gaps.errors(b - a, gaps.lagFor(a, b - a));
    if (errors.length === 0) {
      // nothing to measure a fill with: the observed values' variance, each filled value on its own
      const v = observedVariance(x, observed);
      for (const p of read) {
        const w = respond([p], [1]);
        for (let k = 0; k < h; k++) variance[k] += w[k] * w[k] * v;
      }
    } else if (read.length <= errors.length) {
      // few values read: one response per value, and the errors' second moments between them,
      // E[(Σᵢ wᵢₖ eᵢ)²] = Σᵢⱼ wᵢₖ wⱼₖ E[eᵢ eⱼ]
      const r = read.length;
      const w = read.map((p) => respond([p], [1]));
      const m = new Float64Array(r * r);
      for (const e of errors) for (let i = 0; i < r; i++) for (let j = 0; j < r; j++) m[i * r + j] += (e[read[i] - a] * e[read[j] - a]) / errors.length;
      for (let k = 0; k < h; k++) {
        let v = 0;
        for (let i = 0; i < r; i++) for (let j = 0; j < r; j++) v += w[i][k] * w[j][k] * m[i * r + j];
        variance[k] += v;
      }
    } else {
      // a long gap: one response per stretch, to its errors at once (linearity)
      for (const e of errors) {
        const d = respond(read, read.map((p) => e[p - a]));
        for (let k = 0; k < h; k++) variance[k] += (d[k] * d[k]) / errors.length;
      }
    }
  }
  // gaps whose values no step within h reaches (only through the fit) add nothing
  return any && variance.some((v) => v > 0) ? variance.map(Math.sqrt) : null;
}

/**
 * The errors of the fill of a gap of `g` values from lag `q` (`fillAt`), one vector per fully
 * observed stretch of `g` values whose fill reads only observed values (at most `MAX_STRETCHES`,
 * evenly spaced): the stretch's values minus their fill.
 */
export function fillErrors(x: Float64Array, observed: Uint8Array, g: number, q = 0): Float64Array[] {
  const n = x.length;
  // seen[t] = observed values before t
  const seen = new Int32Array(n + 1);
  for (let t = 0; t < n; t++) seen[t + 1] = seen[t] + observed[t];
  const full = (from: number, to: number) => from >= 0 && to < n && seen[to + 1] - seen[from] === to - from + 1;
  const starts: number[] = [];
  // the stretch [s, s + g) with its ends s − 1 and s + g, and (q > 0) the same span q back
  for (let s = 1 + q; s + g < n; s++) if (full(s - 1, s + g) && (q === 0 || full(s - 1 - q, s + g - q))) starts.push(s);
  const step = Math.max(1, starts.length / MAX_STRETCHES);
  const out: Float64Array[] = [];
  for (let j = 0; j < starts.length && out.length < MAX_STRETCHES; j = Math.floor(out.length * step)) {
    const s = starts[j];
    out.push(Float64Array.from({ length: g }, (_, i) => x[s + i] - fillAt(x, s, s + g, q, s + i)));
  }
  return out;
}

function observedVariance(x: Float64Array, observed: Uint8Array): number {
  let mean = 0;
  let c = 0;
  for (let t = 0; t < x.length; t++) if (observed[t]) (mean += x[t]), c++;
  if (c < 2) return 0;
  mean /= c;
  let v = 0;
  for (let t = 0; t < x.length; t++) if (observed[t]) v += (x[t] - mean) ** 2;
  return v / (c - 1);
}

/**
 * The effect on the mean forecast at steps 1..h of changing x at `positions` (each ≥ n − max lag)
 * by `values`: the recursion run on that change alone, in an array of max lag + h values.
 */
function responder(fit: Pick<ArFit, 'lags' | 'phi'>, n: number, h: number): (positions: readonly number[], values: readonly number[]) => Float64Array {
  const maxLag = fit.lags[fit.lags.length - 1] ?? 0;
  const ext = new Float64Array(maxLag + h);
  return (positions, values) => {
    ext.fill(0);
    positions.forEach((p, i) => (ext[p - (n - maxLag)] = values[i]));
    for (let s = maxLag; s < maxLag + h; s++) {
      let f = 0;
      for (let j = 0; j < fit.lags.length; j++) f += fit.phi[j] * ext[s - fit.lags[j]];
      ext[s] = f;
    }
    return ext.slice(maxLag);
  };
}
