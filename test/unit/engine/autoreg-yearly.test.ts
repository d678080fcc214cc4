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

// found by QA: two years of a yearly cycle, forecast 365 and 1,000 days ahead by the AR on weekly
// lags fitted to the last 70 days: the mean ran above the history (25 against a truth of 4)
test('two years of daily data with a repeating yearly cycle forecast that cycle beyond the AR window', () => {
  for (const [n, h] of [
    [730, 365],
    [800, 1000],
  ]) {
    const { y, truth } = yearly(n, n);
    const r = forecastSeries(y, DAILY, { horizon: h });
    assert.ok(r.model.includes('365'), `${n} days: ${r.model}`);
    const lo = Math.min(...y);
    const hi = Math.max(...y);
    let covered = 0;
    for (let k = 0; k < h; k++) {
      const s = r.distribution.steps[k];
      assert.ok(s.mean >= lo && s.mean <= hi, `${n} days, step ${k + 1}: mean ${s.mean} outside ${lo}..${hi}`);
      if (truth(n + k) >= s.quantile(0.05) && truth(n + k) <= s.quantile(0.95)) covered++;
    }
    assert.ok(covered / h > 0.9, `${n} days: the 90% interval covers the noise-free cycle at ${covered} of ${h} steps`);
  }
});

test('a history with negative values is not modelled in logs, though its last weeks are positive', () => {
  const { y } = yearly(800, 800);
  assert.ok(Math.min(...y.subarray(730)) > 0);
  const r = forecastSeries(y, DAILY, { horizon: 30 });
  assert.ok(!r.model.includes('[log]'), r.model);
});
