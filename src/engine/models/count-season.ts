/**
 * Seasonal low counts (`count-season`): a rate that follows a cycle, as events per hour with a
 * busy afternoon and a quiet night, or a product's daily sales with a busy Saturday. The
 * intermittent-demand family (`croston.ts`) has no cycle: every step gets the same law.
 *
 * Model: E[y_t] = L·s(t), where
 * - the profile s(t) is the product of a position factor on the shortest seasonal period with at
 *   least `MIN_CYCLES` observed cycles and, for each longer such period that is a multiple of the
 *   one before it, a factor per block of it (hourly data: the hour of the day × the day of the
 *   week). Each set of factors is the observed total over the expected total per position, shrunk
 *   towards 1 by empirical Bayes (gamma–Poisson, method of moments: a factor is trusted as far as
 *   the spread between positions exceeds what counting noise alone would give), read on the last
 *   `PROFILE_CYCLES` cycles of the longest period used;
 * - the level L is smoothed every step in count units, L ← L + a·(y_t − L·s(t)) (the Poisson score
 *   step: a quiet position, whose counts say little about the level, moves it little), started at
 *   the first cycle's total over its profile, the gain a chosen by in-sample one-step squared
 *   error on `GAINS`.
 * The law of each step is a negative binomial (count-valued; Poisson where not over-dispersed) with
 * mean L·s and variance φ·L·s + s²·V(k): φ ≥ 1 is the dispersion of the one-step fits over the
 * profile's window (`dispersionOf`), V(k) = σ²·(a/(2 − a) + (k − 1)·a²·mean(s²)) the level's uncertainty k
 * steps ahead as for simple exponential smoothing, σ² the one-step errors' variance in level units.
 * Sample paths draw the steps independently, as the intermittent-demand family does.
 *
 * `auto` forecasts low counts whose cycle replicates (`hasCountCycle`) with the pool of this model
 * and `count-pool` (`AUTO_COUNT_SEASONAL_MODEL` in `registry.ts`, with the evidence).
 */
import { InsufficientDataError, InvalidSeriesError } from '../errors';
import { regularizedBeta } from '../math/special';
import { countFinite } from '../math/stats';
import { goldenSectionMin } from '../optim/golden-section';
import { seasonalPeriods } from '../periods';
import { Rng } from '../rng';
import type { Fitted, ModelFamily, PredictiveDistribution, Series, SeriesInfo, StepDistribution } from '../types';
import { IntegerSizeStep } from './croston-distribution';
import { NormalStep } from '../distributions/normal-step';

/** Observed cycles a period needs to enter the profile (the AR's and `auto`'s rule). */
export const MIN_CYCLES = 3;
/** Cycles of the longest period used that the profile and the dispersion are read on. */
export const PROFILE_CYCLES = 12;
/** Level gains tried (per step, in count units; see the file comment). */
const GAINS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2];

/** One layer of the profile: factors per block of `block` steps within a cycle of `period`. */
interface Layer {
  readonly period: number;
  readonly block: number;
  readonly factors: Float64Array;
}

/**
 * The periods of the profile: the shortest with `MIN_CYCLES` observed cycles, then each longer one
 * that the one before divides; and the periods with enough cycles left out for not dividing so.
 */
function profilePeriods(y: Series, info: SeriesInfo): { chain: number[]; skipped: number[] } {
  const n = countFinite(y);
  const chain: number[] = [];
  const skipped: number[] = [];
  for (const p of seasonalPeriods(info.period, info.periods)) {
    if (n < MIN_CYCLES * p) continue;
    if (chain.length === 0 || p % chain[chain.length - 1] === 0) chain.push(p);
    else skipped.push(p);
  }
  return { chain, skipped };
}

/** Factor of step index t (position in the series) under `layers`. */
function profileAt(layers: readonly Layer[], t: number): number {
  let s = 1;
  for (const { period, block, factors } of layers) s *= factors[Math.floor((t % period) / block)];
  return s;
}

/** Observed and expected totals per block of `block` steps in a cycle of `period` over y[from..], expected = `rate` × the `layers` before. */
function blockTotals(y: Series, from: number, to: number, period: number, block: number, layers: readonly Layer[], rate: number): { obs: Float64Array; exp: Float64Array } {
  const k = period / block;
  const obs = new Float64Array(k);
  const exp = new Float64Array(k);
  for (let t = from; t < to; t++) {
    if (!Number.isFinite(y[t])) continue;
    const b = Math.floor((t % period) / block);
    obs[b] += y[t];
    exp[b] += rate * profileAt(layers, t);
  }
  return { obs, exp };
}

/** Share of the largest squared errors `dispersionOf` winsorizes. */
const OUTLIER_SHARE = 0.01;

/** The value the largest `OUTLIER_SHARE` of `values` (at least one; two or more values) are held at: the next largest. */
function outlierCap(values: readonly number[]): number {
  const top = Math.ceil(OUTLIER_SHARE * values.length);
  return [...values].sort((a, b) => b - a)[Math.min(top, values.length - 1)];
}

/**
 * The dispersion φ ≥ 1 of counts `y` around means `m`: Σ(y − m)² / Σm over y[from..to), scaled by
 * n / (n − `params`), the largest `OUTLIER_SHARE` of the squared errors (at least one) held at the
 * next largest. Why a ratio of sums and not the mean of (y − m)²/m: a mean that a run of zeros has
 * driven to almost 0 would make one later count weigh millions (found measuring: a web page's
 * views thinned to 1 a day got φ = 4.5 million and a forecast of 77 from a level of 0.19). Why
 * winsorized: one count of 500 among sixty of about 1 made φ 4,500, and a negative binomial that
 * wide has 99.7% at 0 — 95% intervals of [0, 0] that covered 37% (found by QA).
 */
function dispersionOf(y: Series, from: number, to: number, mean: (t: number) => number, params: number): number {
  const squares: number[] = [];
  let total = 0;
  for (let t = from; t < to; t++) {
    if (!Number.isFinite(y[t])) continue;
    const m = mean(t);
    squares.push((y[t] - m) ** 2);
    total += m;
  }
  const used = squares.length;
  if (!(total > 0 && used > params)) return 1;
  // the largest 1% (at least one) held at the next largest: one outlier is no dispersion
  const cap = outlierCap(squares);
  let sum = 0;
  for (const q of squares) sum += Math.min(q, cap);
  return Math.max(1, (sum / total) * (used / (used - params)));
}

/** The block of layer i of `chain`: a step for the shortest period, a whole cycle of the one before for a longer one. */
function blockOf(chain: readonly number[], i: number): number {
  return i === 0 ? 1 : chain[i - 1];
}

/** Mean rate of y[from..to) and its unshrunk profile: per layer, observed over expected totals per block. */
function rawProfile(y: Series, from: number, to: number, chain: readonly number[]): { rate: number; raw: Layer[]; params: number } {
  let total = 0;
  let count = 0;
  for (let t = from; t < to; t++) {
    if (!Number.isFinite(y[t])) continue;
    total += y[t];
    count++;
  }
  const rate = count > 0 ? total / count : 0;
  const raw: Layer[] = [];
  chain.forEach((period, i) => {
    const block = blockOf(chain, i);
    const { obs, exp } = blockTotals(y, from, to, period, block, raw, rate);
    raw.push({ period, block, factors: obs.map((o, b) => (exp[b] > 0 ? o / exp[b] : 1)) });
  });
  // free parameters: the rate and each layer's factors but one
  const params = raw.reduce((s, l) => s + l.factors.length - 1, 1);
  return { rate, raw, params };
}

/**
 * Estimate the profile on y[from..]: for each layer, observed over expected totals per block
 * (expected under the layers before it and a flat rate), shrunk towards 1 by empirical Bayes,
 * scaled to mean 1. The shrinkage takes the dispersion around the unshrunk fit as the counting
 * noise.
 */
function estimateProfile(y: Series, from: number, chain: readonly number[]): Layer[] {
  const to = y.length;
  const { rate, raw, params } = rawProfile(y, from, to, chain);
  const dispersion = dispersionOf(y, from, to, (t) => rate * profileAt(raw, t), params);
  // shrunk layer by layer, each against the shrunk layers before it
  const layers: Layer[] = [];
  chain.forEach((period, i) => {
    const block = blockOf(chain, i);
    const { obs, exp } = blockTotals(y, from, to, period, block, layers, rate);
    const k = obs.length;
    // the ratios' spread beyond the counting noise φ/expected (method of moments)
    let spread = 0;
    let noise = 0;
    let blocks = 0;
    for (let b = 0; b < k; b++) {
      if (exp[b] <= 0) continue;
      spread += (obs[b] / exp[b] - 1) ** 2;
      noise += dispersion / exp[b];
      blocks++;
    }
    const tau2 = blocks > 1 ? Math.max(0, (spread - noise) / blocks) : 0;
    const factors = obs.map((o, b) => (exp[b] > 0 ? 1 + (tau2 / (tau2 + dispersion / exp[b])) * (o / exp[b] - 1) : 1));
    let mean = 0;
    for (const f of factors) mean += f;
    mean /= k;
    if (mean > 0) for (let b = 0; b < k; b++) factors[b] /= mean;
    layers.push({ period, block, factors });
  });
  return layers;
}

/** Poisson deviance term of count y against mean m. */
function devianceTerm(y: number, m: number): number {
  if (!(m > 0)) return y > 0 ? Infinity : 0;
  return 2 * ((y > 0 ? y * Math.log(y / m) : 0) - (y - m));
}

/** Significance level of `hasCountCycle`'s tests (each direction of each layer). */
export const CYCLE_TEST_LEVEL = 0.01;

/** The counts of y[from..) as a table: rows = cycles of `period`, columns = its blocks of `block` steps (a block's total; NaN where any step is missing or outside), the largest held back (`capCells`). */
function cycleTable(y: Series, from: number, period: number, block: number): { cells: Float64Array; rows: number[]; k: number } {
  const n = y.length;
  const k = period / block;
  const first = Math.floor(from / period);
  const count = Math.ceil(n / period) - first;
  const cells = new Float64Array(count * k).fill(NaN);
  for (let r = 0; r < count; r++) {
    for (let c = 0; c < k; c++) {
      const start = (first + r) * period + c * block;
      if (start < from || start + block > n) continue;
      let sum = 0;
      for (let t = start; t < start + block && Number.isFinite(sum); t++) sum += Number.isFinite(y[t]) ? y[t] : NaN;
      cells[r * k + c] = sum;
    }
  }
  capCells(cells);
  // rows with under 2 observed cells or no counts say nothing of the columns
  const rows: number[] = [];
  for (let r = 0; r < count; r++) {
    let m = 0;
    let total = 0;
    for (let c = 0; c < k; c++) {
      const v = cells[r * k + c];
      if (Number.isFinite(v)) (m++, (total += v));
    }
    if (m >= 2 && total > 0) rows.push(r);
  }
  return { cells, rows, k };
}

/**
 * Hold the observed cells above the value at rank ceil(`OUTLIER_SHARE` · observed) from the top (at
 * least the top cell) at that value. Why (engine 1.15.1; found by QA on 1.15.0): one wild count —
 * an incident hour of 200 errors among counts of about 1 — made its half's Pearson dispersion so
 * large that a real cycle went unseen (a strong day-and-week cycle with one 1,000: found in 0–75%
 * of series, 100% before 1.15.0), and the answer lost the cycle (95% coverage 0.84 where it was
 * 0.997). One wild cell is no dispersion, as in `dispersionOf`.
 */
function capCells(cells: Float64Array): void {
  const observed: number[] = [];
  for (const v of cells) if (Number.isFinite(v)) observed.push(v);
  if (observed.length < 2) return;
  const cap = outlierCap(observed);
  for (let i = 0; i < cells.length; i++) if (cells[i] > cap) cells[i] = cap;
}

/** Column factors of `rows` by the independence fit (iterative proportional fitting over observed cells), with half a count added to each column's observed and expected totals. */
function columnFactors(cells: Float64Array, rows: readonly number[], k: number): Float64Array {
  const a = new Float64Array(cells.length / k);
  const b = new Float64Array(k).fill(1);
  const colSum = new Float64Array(k);
  for (const r of rows) for (let c = 0; c < k; c++) if (Number.isFinite(cells[r * k + c])) colSum[c] += cells[r * k + c];
  const fitRows = () => {
    for (const r of rows) {
      let total = 0;
      let e = 0;
      for (let c = 0; c < k; c++) if (Number.isFinite(cells[r * k + c])) (total += cells[r * k + c], (e += b[c]));
      a[r] = e > 0 ? total / e : 0;
    }
  };
  for (let iter = 0; iter < 50; iter++) {
    fitRows();
    let change = 0;
    for (let c = 0; c < k; c++) {
      let e = 0;
      for (const r of rows) if (Number.isFinite(cells[r * k + c])) e += a[r];
      const next = e > 0 ? colSum[c] / e : 0;
      change = Math.max(change, Math.abs(next - b[c]));
      b[c] = next;
    }
    if (change < 1e-9) break;
  }
  fitRows();
  return Float64Array.from({ length: k }, (_, c) => {
    let e = 0;
    for (const r of rows) if (Number.isFinite(cells[r * k + c])) e += a[r];
    return (colSum[c] + 0.5) / (e + 0.5);
  });
}

/** Deviance and Pearson X² of `rows` under mean a_r·f^θ, a_r their row totals over Σ f^θ. */
function powerFit(cells: Float64Array, rows: readonly number[], k: number, f: Float64Array, theta: number): { deviance: number; pearson: number; used: number } {
  const g = Float64Array.from(f, (v) => v ** theta);
  let deviance = 0;
  let pearson = 0;
  let used = 0;
  for (const r of rows) {
    let total = 0;
    let e = 0;
    for (let c = 0; c < k; c++) if (Number.isFinite(cells[r * k + c])) (total += cells[r * k + c], (e += g[c]));
    const a = e > 0 ? total / e : 0;
    for (let c = 0; c < k; c++) {
      const v = cells[r * k + c];
      if (!Number.isFinite(v)) continue;
      const m = a * g[c];
      deviance += devianceTerm(v, m);
      if (m > 0) pearson += (v - m) ** 2 / m;
      used++;
    }
  }
  return { deviance, pearson, used };
}

/** P-value that the column factors of rows `from` predict rows `to` (the θ ≥ 0 power of them, against none; quasi-Poisson, 1 df). */
function predictsPValue(cells: Float64Array, k: number, from: readonly number[], to: readonly number[]): number {
  const f = columnFactors(cells, from, k);
  const dev = (theta: number) => powerFit(cells, to, k, f, theta).deviance;
  // the deviance is convex in θ (a Poisson GLM in log a_r and θ)
  const theta = goldenSectionMin(dev, 0, 4);
  const best = powerFit(cells, to, k, f, theta);
  const flat = dev(0);
  const df = best.used - to.length - 1;
  if (!(df > 0) || !Number.isFinite(best.deviance) || !Number.isFinite(flat)) return 1;
  const phi = Math.max(1, best.pearson / df);
  const stat = Math.max(0, flat - best.deviance) / phi;
  return 1 - regularizedBeta(stat / (stat + df), 0.5, df / 2);
}

/**
 * True when counts `y` show a cycle that replicates: for some layer of the profile (the hour of the
 * day, the day of the week), the factors read on the first half of the profile window's cycles
 * predict the second half's counts, and the second half's the first's (`predictsPValue` <
 * `CYCLE_TEST_LEVEL` both ways), each cycle keeping its own level, the largest 1% of the table's
 * cells held back (`capCells`, engine 1.15.1). Why so (engine 1.15.0): the test
 * before it, one flat rate against the profile on the whole window and on each half, fired on
 * counts without a cycle: a rare spike of 20–60, bursts of a few hours or a rate that wanders make a
 * profile that fits its own window (found by QA: 5–61% of such series, with peaks at hours that
 * have none); a spike or a burst seen in one half predicts nothing in the other, and a level per
 * cycle absorbs a wandering rate. Evidence: `AUTO_COUNT_SEASONAL_MODEL` in `registry.ts`.
 */
export function hasCountCycle(y: Series, info: SeriesInfo): boolean {
  const { chain } = profilePeriods(y, info);
  if (chain.length === 0) return false;
  const from = windowStart(y.length, chain);
  return chain.some((period, i) => {
    const { cells, rows, k } = cycleTable(y, from, period, blockOf(chain, i));
    const half = Math.floor(rows.length / 2);
    if (half < 1 || k < 2) return false;
    const a = rows.slice(0, half);
    const b = rows.slice(half);
    return predictsPValue(cells, k, a, b) < CYCLE_TEST_LEVEL && predictsPValue(cells, k, b, a) < CYCLE_TEST_LEVEL;
  });
}

/** Where the profile and dispersion are read: the last `PROFILE_CYCLES` cycles of the longest period (or the whole series). */
function windowStart(n: number, chain: readonly number[]): number {
  return chain.length === 0 ? 0 : Math.max(0, n - PROFILE_CYCLES * chain[chain.length - 1]);
}

/**
 * Y = S − 1 for S of `IntegerSizeStep`: a negative binomial (or Poisson) law on 0, 1, 2, …, its
 * table built when first read (a long horizon's steps each have their own law).
 */
class NegativeBinomialStep implements StepDistribution {
  private table?: IntegerSizeStep;

  constructor(
    readonly mean: number,
    private readonly variance: number,
  ) {}

  private get shifted(): IntegerSizeStep {
    return (this.table ??= new IntegerSizeStep(this.mean, this.variance));
  }

  cdf(x: number): number {
    return this.shifted.cdf(x + 1);
  }

  quantile(p: number): number {
    return this.shifted.quantile(p) - 1;
  }
}

/**
 * A negative binomial law on 0, 1, 2, … of mean m and variance v > m, from its closed-form cdf
 * P(Y ≤ k) = I_p(r, k + 1), r = m²/(v − m), p = r/(r + m) (`regularizedBeta`), for laws too wide to
 * tabulate. Why not a continuous law in their place: a wide count law of a low mean keeps most of
 * its mass at 0 (found by QA: a lognormal there put 5e-5 at 0 under sparse orders of 1,000–3,000,
 * and 95% intervals covered 13%).
 */
class WideNegativeBinomialStep implements StepDistribution {
  private readonly r: number;
  private readonly p: number;

  constructor(
    readonly mean: number,
    variance: number,
  ) {
    this.r = (mean * mean) / (variance - mean);
    this.p = this.r / (this.r + mean);
  }

  cdf(x: number): number {
    if (!(x >= 0)) return 0;
    if (x === Infinity) return 1;
    return regularizedBeta(this.p, this.r, Math.floor(x) + 1);
  }

  /** The smallest integer k with cdf(k) ≥ q: a doubling search for an upper end, then bisection. */
  quantile(q: number): number {
    if (!(q > this.cdf(0))) return 0;
    let lo = 0; // cdf(lo) < q
    let hi = Math.max(1, Math.ceil(this.mean));
    while (this.cdf(hi) < q) {
      lo = hi;
      hi *= 2;
      if (hi > Number.MAX_SAFE_INTEGER) return hi;
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.cdf(mid) >= q) hi = mid;
      else lo = mid;
    }
    return hi;
  }
}

/**
 * Largest mean + 12 standard deviations, and largest variance-to-mean ratio, of a step tabulated
 * as a negative binomial (the table runs to where the pmf falls below e^−37 of its peak, about 37
 * times the ratio entries for a wide law). Wider steps: the closed-form negative binomial where
 * its shape r is under `MAX_CLOSED_SHAPE` and its mean under `MAX_CLOSED_MEAN` (the incomplete
 * beta's continued fraction takes about √(r + k) terms), else the Gaussian of the same mean and
 * variance (a negative binomial of shape 1,000 or more is close to it; rounded by the facade for
 * count data). Why: one table per step (found by QA: an outlier's dispersion of 4,500 gave
 * 200,000-entry tables, 16.7 s and 1.4 GB for 2,000 steps).
 */
const MAX_TABLE = 5000;
const MAX_TABLE_RATIO = 50;
const MAX_CLOSED_SHAPE = 1000;
const MAX_CLOSED_MEAN = 1e7;

/** The law of one step (see `MAX_TABLE`). */
function stepLaw(mean: number, variance: number): StepDistribution {
  if (!(mean > 0)) return new NegativeBinomialStep(0, 0);
  const v = Math.max(variance, mean);
  if (mean + 12 * Math.sqrt(v) < MAX_TABLE && v / mean < MAX_TABLE_RATIO) return new NegativeBinomialStep(mean, variance);
  const shape = (mean * mean) / (v - mean);
  return shape < MAX_CLOSED_SHAPE && mean < MAX_CLOSED_MEAN ? new WideNegativeBinomialStep(mean, v) : new NormalStep(mean, Math.sqrt(v));
}

/** Level recursion with gain `a`: its final value, the one-step fits and their squared error. */
function smoothLevel(y: Float64Array, s: Float64Array, start: number, a: number, fitted?: Float64Array): { level: number; sse: number } {
  let level = start;
  let sse = 0;
  for (let t = 0; t < y.length; t++) {
    const m = level * s[t];
    if (fitted) fitted[t] = Number.isFinite(y[t]) ? m : NaN;
    if (!Number.isFinite(y[t])) continue;
    sse += (y[t] - m) ** 2;
    // a·(y − L·s) in count units, the step's gain capped at 1 (a position far above the mean)
    if (s[t] > 0) level = Math.max(0, level + Math.min(1, a * s[t]) * (y[t] / s[t] - level));
  }
  return { level, sse };
}

function fitCountSeason(y: Series, info: SeriesInfo): Fitted {
  const n = y.length;
  const x = new Float64Array(n);
  let observed = 0;
  for (let i = 0; i < n; i++) {
    const v = y[i];
    x[i] = v;
    if (Number.isNaN(v)) continue;
    if (!(Number.isFinite(v) && v >= 0 && Number.isInteger(v))) {
      throw new InvalidSeriesError(`count-season needs non-negative integer counts; y[${i}] is ${v}`);
    }
    observed++;
  }
  if (observed < 2) throw new InsufficientDataError(observed, 2, 'count-season');
  const { chain, skipped } = profilePeriods(x, info);
  const from = windowStart(n, chain);
  const layers = estimateProfile(x, from, chain);
  const s = Float64Array.from({ length: n }, (_, t) => profileAt(layers, t));
  // start: the first cycle's total over its profile (the first 12 values without a cycle)
  const first = chain.length > 0 ? chain[chain.length - 1] : 12;
  let sy = 0;
  let ss = 0;
  for (let t = 0, seen = 0; t < n && seen < first; t++) {
    if (!Number.isFinite(x[t])) continue;
    sy += x[t];
    ss += s[t];
    seen++;
  }
  const start = ss > 0 ? sy / ss : 0;
  let gain = GAINS[0];
  let best = Infinity;
  for (const a of GAINS) {
    const { sse } = smoothLevel(x, s, start, a);
    if (sse < best) {
      best = sse;
      gain = a;
    }
  }
  const fitted = new Float64Array(n);
  const { level } = smoothLevel(x, s, start, gain, fitted);
  // the one-step errors in level units (error / profile, weighted by the profile's square)
  let e2 = 0;
  let s2 = 0;
  let sMean2 = 0;
  for (let t = from; t < n; t++) {
    if (!Number.isFinite(x[t])) continue;
    e2 += (x[t] - fitted[t]) ** 2;
    s2 += s[t] * s[t];
  }
  for (let t = 0; t < n; t++) sMean2 += s[t] * s[t];
  sMean2 /= n;
  const sigma2 = s2 > 0 ? e2 / s2 : 0;
  const phi = dispersionOf(x, from, n, (t) => fitted[t], 1);
  const warnings: string[] = [];
  if (observed < n) warnings.push(`${n - observed} missing values skipped`);
  if (chain.length === 0) warnings.push('no seasonal period with 3 observed cycles: a flat rate');
  // found by QA: periods [5, 7] used 5 alone without a word
  for (const p of skipped) warnings.push(`period ${p} left out of the profile: not a multiple of ${chain[chain.length - 1]}`);
  const model = chain.length > 0 ? `Seasonal counts[${chain.join(',')}]` : 'Seasonal counts';
  return {
    model,
    params: {
      periods: chain,
      // per period: its factors (the shortest period's per position, a longer one's per block of the one before)
      profile: Object.fromEntries(layers.map((l) => [String(l.period), Array.from(l.factors, (f) => Number(f.toPrecision(6)))])),
      gain,
      level,
      dispersion: phi,
    },
    nobs: observed,
    fitted,
    warnings,
    forecast(h: number): PredictiveDistribution {
      const mean = new Float64Array(h);
      const steps: StepDistribution[] = [];
      for (let k = 1; k <= h; k++) {
        const sk = profileAt(layers, n + k - 1);
        const m = level * sk;
        const v = phi * m + sk * sk * sigma2 * (gain / (2 - gain) + (k - 1) * gain * gain * sMean2);
        const law = stepLaw(m, v);
        steps.push(law);
        mean[k - 1] = law.mean;
      }
      return {
        model,
        mean,
        steps,
        intervalMethod: 'analytic',
        samplePaths(count: number, seed: number): Float64Array[] {
          const rng = new Rng(seed);
          const out: Float64Array[] = [];
          for (let i = 0; i < count; i++) out.push(Float64Array.from(steps, (st) => st.quantile(rng.uniform())));
          return out;
        },
      };
    },
  };
}

/** Seasonal low counts (`count-season`). */
export const countSeason: ModelFamily = {
  name: 'count-season',
  minObservations: () => 2,
  fit: fitCountSeason,
};
