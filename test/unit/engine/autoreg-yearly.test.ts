import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { forecastSeries } from '../../../src/engine/index';
import { Rng } from '../../../src/engine/rng';

/** Daily data with a yearly cycle and noise: 5 + 12·sin(2πt/365.25) + N(0, 2). */
function yearly(n: number, seed: number): { y: Float64Array; truth: (t: number) => number } {
  const truth = (t: number) => 5 + 12 * Math.sin((2 * Math.PI * t) / 365.25);
  const rng = new Rng(seed);
  return { y: Float64Array.from({ length: n }, (_, t) => truth(t) + 2 * rng.normal()), truth };
}

const DAILY = { period: 7, periods: [7, 365] };

// Engines 1.8.0–1.10.1 switched to a whole-history fit with the yearly lags beyond a 70-day horizon
// when the yearly cycle visibly repeated (found by QA: a clean yearly sine forecast a year ahead
// from the last 70 days ran above the history). On real data those lags did harm (web traffic,
// `periodsOf` in autoreg/index.ts), and the same day got a different forecast at 70 and 71 days.
test('two years of daily data: one model at every horizon, the same means for the same days', () => {
  for (const n of [730, 800, 1000]) {
    const { y } = yearly(n, n);
    const short = forecastSeries(y, DAILY, { horizon: 70 });
    // 365 steps: the same lags (a fit explosive over so long a horizon may be refitted with a ridge
    // penalty, `stableFit`, so its means may differ); 71 steps: the same fit, the same means
    for (const h of [71, 365]) {
      const long = forecastSeries(y, DAILY, { horizon: h });
      assert.equal(long.model, short.model, `${n} days, ${h} steps`);
      assert.ok(!long.model.includes('365'), `${n} days: fewer than 3 yearly cycles, yet ${long.model}`);
      if (h > 71) continue;
      for (let k = 0; k < 70; k++) {
        const [a, b] = [short.distribution.steps[k], long.distribution.steps[k]];
        assert.equal(b.mean, a.mean, `${n} days, step ${k + 1}: mean ${b.mean} asked ${h} ahead, ${a.mean} asked 70 ahead`);
        // the intervals differ only by the calibration's backtests, whose windows are the horizon long
        const width = a.quantile(0.975) - a.quantile(0.025);
        for (const p of [0.025, 0.975]) assert.ok(Math.abs(b.quantile(p) - a.quantile(p)) <= 0.1 * width, `${n} days, step ${k + 1}, ${p}: ${b.quantile(p)} against ${a.quantile(p)}`);
      }
    }
  }
});

test('three years of daily data use the yearly lags at every horizon', () => {
  const { y } = yearly(3 * 365, 3);
  for (const h of [7, 365]) assert.ok(forecastSeries(y, DAILY, { horizon: h }).model.includes('365'), `${h} steps`);
});

test('a history with negative values is not modelled in logs, though its last weeks are positive', () => {
  const { y } = yearly(800, 800);
  assert.ok(Math.min(...y.subarray(730)) > 0);
  const r = forecastSeries(y, DAILY, { horizon: 30 });
  assert.ok(!r.model.includes('[log]'), r.model);
});
