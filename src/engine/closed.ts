/**
 * Closed positions of the cycle: a shop shut every Sunday, a service idle every night. Where a
 * position of the seasonal cycle was exactly 0 at every recent occurrence while the series is
 * otherwise open, the forecast there is a point mass at 0 (`closePositions`), whatever the model
 * said: found by QA (engine 1.10.1), daily sales of a shop closed on Sundays were forecast at 9–18
 * on Sundays, with 95% upper ends of 70–98, since the AR mixes the closed day into its lags and
 * cannot take logs of the zeros. Applied after calibration, the band and count rounding, so it
 * changes nothing else in the answer.
 */
import type { PredictiveDistribution, Series, StepDistribution } from './types';

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
 * For integer-valued series, how unlikely the zeros must be by chance: a closed position's run of
 * k zeros must have probability below e^−7 (< 0.001) under a Poisson law with the mean of the
 * quietest open position (its mean × k ≥ 7). Why: counts are 0 by chance where they are merely
 * low (a server's errors at night); without it, hourly counts whose night hours had a mean of
 * 0.3 (the day's up to 20) got a certain 0 at night that held only 74% of the time (0.5: 56%).
 */
export const CHANCE_ZEROS = 7;

/**
 * The positions (index mod `period`) where the series is closed: among its last `CLOSED_CYCLES`
 * cycles, at least `CLOSED_MIN_OBSERVED` observed values there, every one exactly 0, while at least
 * `OPEN_SHARE` of the other positions' observed values are positive, and — for integer values —
 * zeros that chance would hardly give (`CHANCE_ZEROS`). Empty for `period` < 2.
 */
export function closedPositions(y: Series, period: number): number[] {
  if (!(period >= 2)) return [];
  const n = y.length;
  const from = Math.max(0, n - CLOSED_CYCLES * period);
  const observed = new Array<number>(period).fill(0);
  const zeros = new Array<number>(period).fill(0);
  const positive = new Array<number>(period).fill(0);
  const sums = new Array<number>(period).fill(0);
  let integers = true;
  for (let t = from; t < n; t++) {
    const v = y[t];
    if (!Number.isFinite(v)) continue;
    const j = t % period;
    observed[j]++;
    sums[j] += v;
    if (!Number.isInteger(v)) integers = false;
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
  let quietest = Infinity;
  for (let j = 0; j < period; j++) {
    if (isClosed[j]) continue;
    others += observed[j];
    open += positive[j];
    if (observed[j] > 0) quietest = Math.min(quietest, sums[j] / observed[j]);
  }
  if (!(others > 0 && open >= OPEN_SHARE * others)) return [];
  if (integers && quietest * Math.min(...closed.map((j) => observed[j])) < CHANCE_ZEROS) return [];
  return closed;
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
  return {
    model: pd.model,
    mean: pd.mean.map((v, k) => (shut[k] ? 0 : v)),
    steps: pd.steps.map((s, k) => (shut[k] ? ZERO : s)),
    intervalMethod: pd.intervalMethod,
    samplePaths: (n: number, seed: number) => pd.samplePaths(n, seed).map((path) => path.map((v, k) => (shut[k] ? 0 : v))),
  };
}
