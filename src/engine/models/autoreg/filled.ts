/**
 * Filled-in regressors: how missing values inside the AR's window are filled for its lags, and the
 * uncertainty the filled values add to a forecast that reads them.
 *
 * The fill (`GapFill`): a gap of g values is filled either by the straight line between its ends
 * or from the same stretch one or more cycles back (the shortest multiple q of the series' shortest
 * period that reaches before the gap), shifted by a straight line between the differences at the
 * gap's two ends, x[a−1] − x[a−1−q] and x[b] − x[b−q]; whichever of the two made the smaller mean
 * squared error filling the fully observed stretches of g values in the series (the same stretches
 * `filledRegressorSd` measures; too few: shorter stretches, `GapFill.cycleChosen`). Why not the
 * straight line alone: it drops the cycle, and a forecast whose seasonal lags read a straight line
 * across the missing day loses the cycle's phase (found by QA: a cycle plus noise with a day
 * missing near the end, 95% coverage 0.34–0.83; M4 hourly's training windows with a day missing
 * 10 hours before the origin: MASE 6.17 against 0.79 without the gap). Why not the cycle alone:
 * on noisy data with a weak cycle (web traffic, M4 weekly's year) the line's two ends beat one
 * noisy value a cycle back. Both fills use only values outside the gap and none after its right
 * end, so which lags stay honest (`leakFree`) is the same.
 *
 * The error (`filledRegressorSd`): where the forecast's recursion reads filled values (a gap within
 * the last max-lag steps), their errors are measured on the series itself — the errors of the same
 * fill at the same places in up to `MAX_STRETCHES` fully observed stretches of the gap's length —
 * and carried to every forecast step through the recursion's response to them (correlations along
 * a gap included; separate gaps taken as independent; with no stretch of the gap's length, the AR's
 * own forecast error from the gap's nearest end, and for a straight line across half a cycle or
 * more at least the cycle's variance). The result is a standard deviation per step that the
 * forecasting facade adds *after* calibration (`Fitted.addedSd`, `widenSteps`): the
 * calibration priors were fitted on the AR's own intervals and scale them, not this term (found by
 * a QA round on engine 1.9.0, which added it before calibration: hourly data with 72 hours missing,
 * steps 501–1,000, width 252 against an RMSE of 24, the prior's factor of ~2.3 multiplying a term
 * that on its own matched the errors).
 *
 * Cost: it is computed once per answer (never in backtests), in work proportional to the filled
 * values read × (max lag + h) × lags for gaps of up to `MAX_STRETCHES` values, and to
 * stretches × (max lag + h) × lags for longer ones; fill errors are measured once per gap length
 * and fill, in work proportional to the series' runs of observed values and the stretches taken.
 */
import { fillMissingLinear } from '../../math/stats';
import { arPsi, type ArFit } from './fit';

/**
 * Most fully observed stretches a gap's fill errors are measured on (evenly spaced). Why 64: 64
 * errors give a variance within about ±18%, and the work grows with their number.
 */
export const MAX_STRETCHES = 64;

/**
 * The fill of the gap [a, b) in `x` from lag `q` (0: the straight line between its ends), one value
 * per position: x[u − q] (0 for the line) plus the line between the differences at the two ends.
 * Reads only values outside the gap. The one formula both the fill and its measured errors use.
 */
function gapValues(x: ArrayLike<number>, a: number, b: number, q: number): Float64Array {
  const left = q === 0 ? x[a - 1] : x[a - 1] - x[a - 1 - q];
  const step = ((q === 0 ? x[b] : x[b] - x[b - q]) - left) / (b - a + 1);
  // a plain loop: this is the hot path of `fillErrors` (Float64Array.from with a callback was 2× slower)
  const out = new Float64Array(b - a);
  for (let i = 0; i < out.length; i++) out[i] = (q === 0 ? 0 : x[a + i - q]) + left + step * (i + 1);
  return out;
}

/** Fewest stretches each fill needs before the two are compared at a gap length (`GapFill`). */
const MIN_COMPARED = 8;

/**
 * A series' missing values filled for the AR's lags (see the file comment; gaps at either end by
 * the nearest value, as `fillMissingLinear`), with the fill chosen per gap and the fill errors
 * measured on the series, kept for `filledRegressorSd`. Built on the whole history, not only the
 * AR's window, so a gap near the window's start can be filled from a cycle before it and the
 * fills are measured on every stretch the series has (found by QA on 1.10.0: a 21-day gap in a
 * 70-day window had no stretch to choose the cycle by).
 */
export class GapFill {
  /** The series with its gaps filled. */
  readonly filled: Float64Array;
  /** 1 where the series was observed. */
  readonly observed: Uint8Array;
  /** Observed values in a row ending at t (0 where t is missing). */
  private readonly run: Int32Array;
  private readonly errorsOf = new Map<string, Float64Array[]>();
  private readonly cycleOf = new Map<number, boolean>();
  private cycleVar: number | undefined;
  private readonly spanEnds = new Map<number, Int32Array>();
  private runs: Array<[number, number]> | undefined;

  constructor(
    raw: ArrayLike<number>,
    readonly period: number,
  ) {
    const n = raw.length;
    this.observed = Uint8Array.from({ length: n }, (_, t) => (Number.isFinite(raw[t]) ? 1 : 0));
    this.run = runLengths(this.observed);
    this.filled = fillMissingLinear(raw);
    // gaps left to right, so a gap's values q back may be an earlier gap's fill
    for (let a = 1; a < n; a++) {
      if (this.observed[a] || !this.observed[a - 1]) continue;
      let b = a;
      while (b < n && !this.observed[b]) b++;
      if (b === n) break;
      const q = this.lagFor(a, b - a);
      if (q > 0) this.filled.set(gapValues(this.filled, a, b, q), a);
      a = b;
    }
  }

  /**
   * The lag the gap [a, a + g) is filled from (0: the straight line; see the file comment): with
   * the cycle chosen for its length, the shortest multiple of the period from `cycleLag` whose
   * span (the gap and its two ends, q back) was fully observed — so a gap a cycle after another
   * does not copy that one's fill (found by QA: back-to-back gaps copied an earlier straight line)
   * — else `cycleLag` itself where the series reaches that far back.
   */
  lagFor(a: number, g: number): number {
    if (a < 1 || !(this.period > 1) || !this.cycleChosen(g)) return 0;
    const first = cycleLag(this.period, g);
    // the span's right end e = a + g − q, walked back a period at a time (e ≥ g + 1: the span's
    // left end is in the series), found at once by `lastObservedSpan`
    const e = a + g - first >= g + 1 ? this.lastObservedSpan(g)[a + g - first] : -1;
    if (e >= g + 1) return a + g - e;
    return a - 1 - first >= 0 ? first : 0;
  }

  /**
   * For spans of g + 2 values: at each position e, the last position at or before it, a whole
   * number of periods back, where such a span ends fully observed (−1: none). One pass per gap
   * length, the last few kept (found by QA: walking back a period at a time for every gap was
   * n²/period work on long sparse series — 100,000 hourly values, every other one missing, 1.7 s).
   */
  private lastObservedSpan(g: number): Int32Array {
    let last = this.spanEnds.get(g);
    if (!last) {
      const p = this.period;
      last = new Int32Array(this.run.length);
      for (let e = 0; e < last.length; e++) last[e] = this.run[e] >= g + 2 ? e : e >= p ? last[e - p] : -1;
      if (this.spanEnds.size >= 4) this.spanEnds.delete(this.spanEnds.keys().next().value!);
      this.spanEnds.set(g, last);
    }
    return last;
  }

  /**
   * Whether gaps of `g` values are filled from a cycle back: its fill's mean squared error on the
   * series' fully observed stretches below the line's, at the longest length from g down (halving)
   * where both have `MIN_COMPARED` stretches; with none, the cycle (the period was declared).
   */
  private cycleChosen(g: number): boolean {
    if (!this.cycleOf.has(g)) {
      let chosen = true;
      for (let len = g; len >= 1; len = Math.floor(len / 2)) {
        const cycle = this.errors(len, cycleLag(this.period, len));
        const line = this.errors(len, 0);
        if (cycle.length >= MIN_COMPARED && line.length >= MIN_COMPARED) {
          chosen = meanSquare(cycle) < meanSquare(line);
          break;
        }
      }
      this.cycleOf.set(g, chosen);
    }
    return this.cycleOf.get(g)!;
  }

  /**
   * The variance of the series' cycle: of the mean observed value at each phase of the period
   * (0 without one). What a straight line across half a cycle or more misses by, whatever the
   * stretches could measure.
   */
  cycleVariance(): number {
    if (this.cycleVar === undefined) {
      const p = this.period;
      const sum = new Float64Array(p > 1 ? p : 0);
      const count = new Float64Array(sum.length);
      this.observed.forEach((o, t) => {
        if (o && sum.length > 0) (sum[t % p] += this.filled[t]), count[t % p]++;
      });
      const means = Array.from(sum, (v, j) => v / count[j]).filter(Number.isFinite);
      const mean = means.reduce((m, v) => m + v, 0) / means.length;
      this.cycleVar = means.length > 1 ? means.reduce((m, v) => m + (v - mean) ** 2, 0) / means.length : 0;
    }
    return this.cycleVar;
  }

  /** The errors of the fill from lag `q` of a gap of `g` values on the series' stretches (`fillErrors`), measured once. */
  errors(g: number, q: number): Float64Array[] {
    const key = `${g}:${q}`;
    this.runs ??= observedRuns(this.observed);
    if (!this.errorsOf.has(key)) this.errorsOf.set(key, fillErrors(this.filled, this.observed, g, q, this.runs));
    return this.errorsOf.get(key)!;
  }
}

/** The shortest multiple of `period` that reaches from a gap of `g` values' right end to before its left end. */
function cycleLag(period: number, g: number): number {
  return Math.ceil((g + 1) / period) * period;
}

function meanSquare(errors: readonly Float64Array[]): number {
  let s = 0;
  let c = 0;
  for (const e of errors) for (const d of e) (s += d * d), c++;
  return s / c;
}

/** Observed values in a row ending at each t. */
function runLengths(observed: Uint8Array): Int32Array {
  const run = new Int32Array(observed.length);
  for (let t = 0; t < observed.length; t++) run[t] = observed[t] ? (t > 0 ? run[t - 1] : 0) + 1 : 0;
  return run;
}

/**
 * Per-step standard deviations (length `h`, in the scale of the series) of the forecast error that
 * the filled-in values of `gaps` add to a fit on `gaps.filled`; null when the forecast reads no
 * filled value.
 */
export function filledRegressorSd(fit: Pick<ArFit, 'lags' | 'phi' | 'sigma'>, gaps: GapFill, h: number): Float64Array | null {
  const { observed } = gaps;
  const n = observed.length;
  const maxLag = fit.lags[fit.lags.length - 1] ?? 0;
  const respond = responder(fit, n, h);
  const variance = new Float64Array(h);
  // Σ_{j<m} ψ_j², extended as needed (the fallback below)
  const psi2: number[] = [];
  const cumPsi2 = (m: number): number => {
    if (psi2.length < m) {
      const psi = arPsi(fit, m);
      psi2.length = 0;
      let c = 0;
      for (let j = 0; j < m; j++) psi2.push((c += psi[j] * psi[j]));
    }
    return psi2[m - 1];
  };
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
    const g = b - a;
    const q = gaps.lagFor(a, g);
    const errors = gaps.errors(g, q);
    if (errors.length === 0) {
      // no stretch to measure the fill on: each filled value as uncertain as the AR's forecast of
      // it from the gap's nearest observed end (m steps: σ² Σ_{j<m} ψ_j²), and a straight line
      // across half a cycle or more at least by the cycle's variance, the errors along the gap
      // moving together (found by QA on 1.10.0: the series' whole variance for each value was 3×
      // too wide with every other value missing; each value independent, 0.08 coverage for a gap
      // longer than any observed stretch)
      const floor = gaps.period > 1 && q === 0 && 2 * g >= gaps.period ? gaps.cycleVariance() : 0;
      const sd = read.map((p) => Math.sqrt(Math.max(floor, fit.sigma * fit.sigma * cumPsi2(Math.max(1, a === 0 ? b - p : Math.min(p - a + 1, b - p))))));
      const d = respond(read, sd);
      for (let k = 0; k < h; k++) variance[k] += d[k] * d[k];
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
 * The errors of the fill of a gap of `g` values from lag `q` (`gapValues`), one vector per fully
 * observed stretch of `g` values whose fill reads only observed values (at most `MAX_STRETCHES`,
 * evenly spaced): the stretch's values minus their fill. `runs`: `observed`'s runs, when the
 * caller has them. Work: the runs and the stretches taken, not the series' length (found by QA on
 * 1.10.0: 300 gap lengths in 100,000 minutes scanned the series 600 times per fit, 10 s).
 */
export function fillErrors(x: Float64Array, observed: Uint8Array, g: number, q = 0, runs = observedRuns(observed)): Float64Array[] {
  // starts s of a stretch [s, s + g) whose ends s − 1 and s + g are in one run, and (q > 0) whose
  // span q back is too: intervals [from, to] of s, ascending
  const within = (shift: number): Array<[number, number]> =>
    runs.map(([rs, re]): [number, number] => [rs + 1 + shift, re - 1 - g + shift]).filter(([from, to]) => from <= to);
  let starts = within(0);
  if (q > 0) {
    const back = within(q);
    const both: Array<[number, number]> = [];
    for (let i = 0, j = 0; i < starts.length && j < back.length; ) {
      const from = Math.max(starts[i][0], back[j][0]);
      const to = Math.min(starts[i][1], back[j][1]);
      if (from <= to) both.push([from, to]);
      if (starts[i][1] < back[j][1]) i++;
      else j++;
    }
    starts = both;
  }
  const count = starts.reduce((c, [from, to]) => c + to - from + 1, 0);
  const take = Math.min(count, MAX_STRETCHES);
  const out: Float64Array[] = [];
  // the j-th of `take` evenly spaced stretches is the floor(j · count / take)-th one
  let before = 0; // stretches in the intervals already passed
  let k = 0;
  for (let j = 0; j < take; j++) {
    const rank = Math.floor((j * count) / take);
    while (rank >= before + starts[k][1] - starts[k][0] + 1) before += starts[k][1] - starts[k++][0] + 1;
    out.push(stretchErrors(x, starts[k][0] + rank - before, g, q));
  }
  return out;
}

/** The values of [s, s + g) minus their fill from lag q (`gapValues`). */
function stretchErrors(x: Float64Array, s: number, g: number, q: number): Float64Array {
  const e = gapValues(x, s, s + g, q);
  for (let i = 0; i < g; i++) e[i] = x[s + i] - e[i];
  return e;
}

/** The runs of observed values, [first, end) each, ascending. */
export function observedRuns(observed: Uint8Array): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (let t = 0; t < observed.length; t++) {
    if (!observed[t]) continue;
    const first = t;
    while (t < observed.length && observed[t]) t++;
    runs.push([first, t]);
  }
  return runs;
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
