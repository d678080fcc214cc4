/**
 * Closed positions of the cycle: a shop shut every Sunday, a service idle every night. Where a
 * position of the seasonal cycle was exactly 0 at every recent occurrence while the series is
 * otherwise open, the forecast there is a point mass at 0 (`closePositions`), whatever the model
 * said: found by QA (engine 1.10.1), daily sales of a shop closed on Sundays were forecast at 9–18
 * on Sundays, with 95% upper ends of 70–98, since the AR mixes the closed day into its lags and
 * cannot take logs of the zeros. Applied after calibration, the band and count rounding, so it
 * changes nothing else in the answer.
 */
import { seasonalPeriods } from './periods';
import type { PredictiveDistribution, Series, SeriesInfo, StepDistribution } from './types';

/** How many of the latest cycles are read (`closedPositions`). */
export const CLOSED_CYCLES = 8;

/** Observed values a position needs among those cycles before it can count as closed. */
export const CLOSED_MIN_OBSERVED = 4;

/**
 * The share of the other positions' observed values (same cycles) that must be positive: the
 * series is open there, so a 0 at one position is a closure rather than a series of mostly zeros
 * (intermittent demand, whose zeros are the count model's to forecast).
 */
export const OPEN_SHARE = 0.75;

/**
 * How unlikely a closed position's zeros must be by chance: were the position as often non-zero
 * as the quietest open one (a share q of its values positive), its run of k zeros would have
 * probability (1 − q)^k, which must be below e^−7 (< 0.001): −k·ln(1 − q) ≥ 7. For counts with a
 * Poisson mean m, q = 1 − e^−m and the bound reads m·k ≥ 7. Why: values are 0 by chance where
 * they are merely low — a server's errors at night, a shop's takings in hours with a sale or two
 * (found by QA: counts whose night hours had a mean of 0.3, the day's up to 20, got a certain 0
 * that held only 74% of the time, 0.5: 56%; and hourly revenue from 0.1–0.3 sales an hour at night,
 * 82–92%, whether stored in units or cents). An open position that is never 0 (q = 1) passes
 * any run.
 */
export const CHANCE_ZEROS = 7;

/**
 * The positions (index mod `period`) where the series is closed: among its last `CLOSED_CYCLES`
 * cycles, at least `CLOSED_MIN_OBSERVED` observed values there, every one exactly 0, while at least
 * `OPEN_SHARE` of the other positions' observed values are positive, and zeros that chance would
 * hardly give (`CHANCE_ZEROS`). Empty for `period` < 2.
 */
export function closedPositions(y: Series, period: number): number[] {
  if (!(period >= 2)) return [];
  const n = y.length;
  const from = Math.max(0, n - CLOSED_CYCLES * period);
  const observed = new Array<number>(period).fill(0);
  const zeros = new Array<number>(period).fill(0);
  const positive = new Array<number>(period).fill(0);
  for (let t = from; t < n; t++) {
    const v = y[t];
    if (!Number.isFinite(v)) continue;
    const j = t % period;
    observed[j]++;
    if (v === 0) zeros[j]++;
    else if (v > 0) positive[j]++;
  }
  const closed: number[] = [];
  const isClosed = new Array<boolean>(period).fill(false);
  for (let j = 0; j < period; j++) {
    if (observed[j] < CLOSED_MIN_OBSERVED || zeros[j] !== observed[j]) continue;
    isClosed[j] = true;
    closed.push(j);
  }
  if (closed.length === 0 || closed.length === period) return [];
  let others = 0;
  let open = 0;
  let quietest = 1;
  for (let j = 0; j < period; j++) {
    if (isClosed[j]) continue;
    others += observed[j];
    open += positive[j];
    if (observed[j] > 0) quietest = Math.min(quietest, positive[j] / observed[j]);
  }
  if (!(others > 0 && open >= OPEN_SHARE * others)) return [];
  const run = Math.min(...closed.map((j) => observed[j]));
  return quietest >= 1 || -run * Math.log(1 - quietest) >= CHANCE_ZEROS ? closed : [];
}

/**
 * The closed positions of each cycle `info` names (its `period` and `periods`; see
 * `closedPositions`), shortest first, cycles without any left out. A longer cycle leaves out what
 * a shorter one that divides it has closed already (an hourly shop's week lists its Sunday's open
 * hours, not the nights the day's cycle closes).
 */
export function closedCycles(y: Series, info: SeriesInfo): CyclePositions[] {
  return perCycle(info, (period) => closedPositions(y, period));
}

/** Positions of a cycle of `period`. */
export interface CyclePositions {
  readonly period: number;
  readonly positions: number[];
}

/**
 * `positionsOf` for each cycle `info` names, shortest first, cycles without any left out; a longer
 * cycle leaves out what a shorter one that divides it has listed already.
 */
function perCycle(info: SeriesInfo, positionsOf: (period: number) => number[]): CyclePositions[] {
  const found: CyclePositions[] = [];
  for (const period of seasonalPeriods(info.period, info.periods)) {
    const implied = (j: number) => found.some((c) => period % c.period === 0 && c.positions.includes(j % c.period));
    const positions = positionsOf(period).filter((j) => !implied(j));
    if (positions.length > 0) found.push({ period, positions });
  }
  return found;
}

/**
 * `y` without its values at closed positions (NaN there, over the whole series), or `y` itself
 * when nothing is closed: what `auto`'s zero-share tests read (`autoModelName`), so a shop's nights
 * and Sundays do not make its sales look intermittent (found checking closed positions: an hourly
 * shop open 8–20 on six days, 57% zeros, went to the intermittent-demand mix, whose median for
 * every open hour was 0).
 */
export function withoutClosed(y: Series, info: SeriesInfo): Series {
  const cycles = closedCycles(y, info);
  if (cycles.length === 0) return y;
  const masks = cycles.map(({ period, positions }) => {
    const shut = new Array<boolean>(period).fill(false);
    for (const j of positions) shut[j] = true;
    return { period, shut };
  });
  return Float64Array.from({ length: y.length }, (_, t) => (masks.some(({ period, shut }) => shut[t % period]) ? NaN : y[t]));
}

/**
 * Positions of each cycle `info` names that have no observed value in the series' last
 * `CLOSED_CYCLES` cycles while every other position has at least `CLOSED_MIN_OBSERVED` there: a
 * weekday a shop never reports, night hours a meter does not send (shortest cycle first; a longer
 * cycle leaves out what a shorter one that divides it lists already). The forecast there rests on
 * values filled in between the neighbouring positions (found by QA: a shop that leaves its Sundays
 * out got a confident Sunday forecast, the mean of its Saturdays and Mondays, without a word).
 */
export function unobservedCycles(y: Series, info: SeriesInfo): CyclePositions[] {
  const n = y.length;
  return perCycle(info, (period) => {
    const observed = new Array<number>(period).fill(0);
    for (let t = Math.max(0, n - CLOSED_CYCLES * period); t < n; t++) if (Number.isFinite(y[t])) observed[t % period]++;
    const never = observed.flatMap((c, j) => (c === 0 ? [j] : []));
    return never.length === period || observed.some((c) => c > 0 && c < CLOSED_MIN_OBSERVED) ? [] : never;
  });
}

/** Forecast steps (1-based, ascending) at `positions` of a cycle of `period` within its first cycle after a history of `n` values. */
export function firstSteps(positions: readonly number[], n: number, period: number): number[] {
  return positions.map((j) => ((((j - n) % period) + period) % period) + 1).sort((a, b) => a - b);
}

/** `firstSteps` written with ranges: "1–8, 21–24". */
export function firstClosedSteps(positions: readonly number[], n: number, period: number): string {
  const steps = firstSteps(positions, n, period);
  const parts: string[] = [];
  for (let i = 0; i < steps.length; ) {
    let k = i;
    while (k + 1 < steps.length && steps[k + 1] === steps[k] + 1) k++;
    parts.push(k === i ? String(steps[i]) : `${steps[i]}–${steps[k]}`);
    i = k + 1;
  }
  return parts.join(', ');
}

/** A point mass at 0. */
const ZERO: StepDistribution = {
  mean: 0,
  quantile: () => 0,
  cdf: (x) => (x >= 0 ? 1 : 0),
  cdfBelow: (x) => (x > 0 ? 1 : 0),
};

/**
 * `pd` with a point mass at 0 at every step whose position (`start` + step, mod `period`) is in
 * `closed`; the other steps, and the sample paths there, as they were. `start` is the index of
 * step 1 in the series the positions were read from (its length).
 */
export function closePositions(pd: PredictiveDistribution, closed: readonly number[], start: number, period: number): PredictiveDistribution {
  const at = new Set(closed);
  const shut = pd.steps.map((_, k) => at.has((start + k) % period));
  let mean: Float64Array | undefined;
  return {
    model: pd.model,
    // when first read, as the count law's own means are (`toCountDistribution`)
    get mean(): Float64Array {
      mean ??= pd.mean.map((v, k) => (shut[k] ? 0 : v));
      return mean;
    },
    steps: pd.steps.map((s, k) => (shut[k] ? ZERO : s)),
    intervalMethod: pd.intervalMethod,
    samplePaths: (n: number, seed: number) => pd.samplePaths(n, seed).map((path) => path.map((v, k) => (shut[k] ? 0 : v))),
  };
}
