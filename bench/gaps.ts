/**
 * Gaps benchmark (engine 1.10.0): what filling a recent gap from a cycle back and measuring its
 * error (`src/engine/models/autoreg/filled.ts`) costs a forecast, in process, as the service asks
 * for it (with its backtest). Each case beside the same series without the gap; median of 5 runs
 * after one warm-up. The shape a third QA round found 50x slower with engine 1.9.0's first
 * attempt (1-minute data, every third value of the last week missing, 1,000 steps: 0.38 → 18.7 s)
 * is the first row. No target beyond "the same order as without the gap".
 */
import { forecastSeries } from '../src/engine/index';
import type { SeriesInfo } from '../src/engine/types';
import { Rng } from '../src/engine/rng';

/** A daily cycle of `p` steps (±30 around 100) plus noise (sd 3), `n` values. */
function cycle(n: number, p: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  return Float64Array.from({ length: n }, (_, t) => 100 + 30 * Math.sin((2 * Math.PI * t) / p) + 3 * rng.normal());
}

function medianMs(y: Float64Array, info: SeriesInfo, h: number): number {
  const times: number[] = [];
  for (let i = 0; i < 6; i++) {
    const t0 = process.hrtime.bigint();
    forecastSeries(y, info, { horizon: h });
    if (i > 0) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return times.sort((a, b) => a - b)[2];
}

const cases: Array<[string, Float64Array, SeriesInfo, number, (y: Float64Array) => void]> = [
  ['1-minute, every 3rd of the last week missing, 1,000 steps', cycle(4 * 10_080, 1440, 1), { period: 1440, periods: [1440] }, 1000, (y) => {
    for (let t = y.length - 10_080; t < y.length; t++) if ((y.length - t) % 3 === 0) y[t] = NaN;
  }],
  ['1-minute, 20 hours missing 100 before the end, 1,000 steps', cycle(4 * 1440, 1440, 2), { period: 1440, periods: [1440] }, 1000, (y) => y.fill(NaN, y.length - 1300, y.length - 100)],
  ['hourly, 72 hours missing 5 before the end, 1,000 steps', cycle(2000, 24, 3), { period: 24, periods: [24, 168] }, 1000, (y) => y.fill(NaN, y.length - 77, y.length - 5)],
  ['15-minute, 84 slots missing 10 before the end, 96 steps', cycle(768, 96, 4), { period: 96, periods: [96] }, 96, (y) => y.fill(NaN, y.length - 94, y.length - 10)],
  // found by QA on 1.10.1: the search for an observed span walked back a period per gap (1.7 s)
  ['hourly, 100,000 values, every other one missing, 48 steps', cycle(100_000, 24, 5), { period: 24, periods: [24, 168] }, 48, (y) => {
    for (let t = 1; t < y.length - 1; t += 2) y[t] = NaN;
  }],
];

console.log('\ngaps: forecast with backtest, median of 5 (ms)');
console.log('case'.padEnd(62) + 'no gap'.padStart(10) + 'gap'.padStart(10));
for (const [name, y, info, h, cut] of cases) {
  const full = medianMs(y, info, h);
  const gapped = Float64Array.from(y);
  cut(gapped);
  console.log(name.padEnd(62) + full.toFixed(0).padStart(10) + medianMs(gapped, info, h).toFixed(0).padStart(10));
}
