import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { forecastSeries } from '../../../src/engine/index';
import { AUTO_LONG_CYCLE_MODEL, AUTO_MULTI_SEASONAL_MODEL } from '../../../src/engine/registry';
import { Rng } from '../../../src/engine/rng';

/** Sub-hourly data with a daily cycle of `m` steps over `n` points: a slow rise plus noise (sd 3). */
function subHourly(m: number, n: number, seed: number): { y: Float64Array; truth: (t: number) => number } {
  const truth = (t: number) => 100 + (30 / n) * t + 20 * Math.sin((2 * Math.PI * t) / m);
  const rng = new Rng(seed);
  return { y: Float64Array.from({ length: n }, (_, t) => truth(t) + 3 * rng.normal()), truth };
}

// found by QA: the ETS member of the default ignored a period above 24 and ran its daily swing
// off as a trend (5-minute data: mean 360 against 160 at step 1,000, 90% interval [0, 778])
test('sub-hourly data with 3+ daily cycles keep the cycle and a sane trend', () => {
  for (const [m, n] of [
    [288, 1152],
    [144, 576],
    [96, 384],
  ]) {
    const { y, truth } = subHourly(m, n, m);
    const r = forecastSeries(y, { period: m, periods: [m] }, { horizon: 1000 });
    assert.equal(r.requestedModel, AUTO_MULTI_SEASONAL_MODEL, `period ${m}`);
    assert.ok(!r.warnings.some((w) => /seasonality ignored/.test(w)), r.warnings.join('; '));
    // one cycle ahead, at the trough and the peak: within 3 noise sds of the noise-free truth
    for (const k of [Math.round(0.75 * m) + 1, Math.round(0.25 * m) + 1, m]) {
      assert.ok(Math.abs(r.distribution.mean[k - 1] - truth(n + k - 1)) < 9, `period ${m} step ${k}: ${r.distribution.mean[k - 1]} vs ${truth(n + k - 1)}`);
    }
    // far ahead the trend stays sane and the interval informative
    const s = r.distribution.steps[999];
    assert.ok(Math.abs(s.mean - truth(n + 999)) < 40, `period ${m} step 1000: ${s.mean} vs ${truth(n + 999)}`);
    assert.ok(s.quantile(0.95) - s.quantile(0.05) < 120, `period ${m}: 90% interval width ${s.quantile(0.95) - s.quantile(0.05)}`);
  }
});

test('a cycle above 24 seen 2 to 3 times keeps it through every member of the combination', () => {
  const { y, truth } = subHourly(288, 700, 5);
  const r = forecastSeries(y, { period: 288, periods: [288] }, { horizon: 288 });
  assert.equal(r.requestedModel, AUTO_LONG_CYCLE_MODEL);
  // the trough and the peak of the next day are told apart (the plain ETS member flattened them)
  const steps = Array.from({ length: 288 }, (_, k) => k);
  const peak = steps.reduce((a, k) => (truth(700 + k) > truth(700 + a) ? k : a), 0);
  const trough = steps.reduce((a, k) => (truth(700 + k) < truth(700 + a) ? k : a), 0);
  const swing = r.distribution.mean[peak] - r.distribution.mean[trough];
  const trueSwing = truth(700 + peak) - truth(700 + trough);
  assert.ok(swing > 0.75 * trueSwing, `swing ${swing} vs ${trueSwing}`);
});

test('cycles are counted in observations, and the MSTL route takes more than two of them (found by QA)', () => {
  const m = 288;
  const at = (n: number, gap?: [number, number]) => {
    const { y } = subHourly(m, n, 11);
    if (gap) y.fill(NaN, gap[0], gap[1]);
    return forecastSeries(y, { period: m, periods: [m] }, { horizon: 12, confidence: false }).requestedModel;
  };
  // exactly two cycles: MSTL would drop the period, so not its route; one value more: its route
  assert.notEqual(at(2 * m), AUTO_LONG_CYCLE_MODEL);
  assert.equal(at(2 * m + 1), AUTO_LONG_CYCLE_MODEL);
  // three cycles of slots with most of the last one missing: not the seasonal AR (its lags would read the filled-in day)
  assert.equal(at(3 * m), AUTO_MULTI_SEASONAL_MODEL);
  assert.notEqual(at(3 * m, [2 * m - 20, 3 * m - 20]), AUTO_MULTI_SEASONAL_MODEL);
});
