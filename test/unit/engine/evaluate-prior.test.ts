import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { fitCurve, validationSplit, type PriorRecord } from '../../../src/cli/evaluate-prior';
import type { BenchmarkSeries } from '../../../src/cli/evaluate-data';
import { conformalQuantile } from '../../../src/engine/calibration/conformal';

const series = (n: number, h: number): BenchmarkSeries => ({
  id: 'x',
  group: 'yearly',
  period: 1,
  horizon: h,
  train: Array.from({ length: n }, (_, i) => i + 1),
  test: Array.from({ length: h }, (_, i) => 1000 + i),
});

test('priors are fitted on the training part only: its last horizon values are the window, the test part is dropped', () => {
  const v = validationSplit(series(20, 6))!;
  assert.deepEqual(v.train, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  assert.deepEqual(v.test, [15, 16, 17, 18, 19, 20]);
  assert.equal(v.horizon, 6);
  assert.ok(!v.test.some((y) => y >= 1000) && !v.train.some((y) => y >= 1000));
  assert.ok(validationSplit(series(14, 6)), 'the shortest M3 series (14 yearly values) keeps 8');
  assert.equal(validationSplit(series(13, 6)), null);
  // the window before: the 6 values before the last 6, forecast from the 8 before them
  const w2 = validationSplit(series(20, 6), 2)!;
  assert.deepEqual(w2.train, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(w2.test, [9, 10, 11, 12, 13, 14]);
  assert.equal(validationSplit(series(19, 6), 2), null);
});

test('fitCurve recovers a log-linear factor curve from errors at known multiples of the interval reach', () => {
  const h = 6;
  const truth = (k: number) => Math.exp(0.1 + 0.2 * Math.log(k + 1));
  // per step, 40 records: errors at 0.025..1.0 × truth(k) × reach, alternating sides; reach 2 above, 1 below
  const records: PriorRecord[] = Array.from({ length: 40 }, (_, i) => {
    const sign = i % 2 === 0 ? 1 : -1;
    const u = (i + 1) / 40;
    return {
      set: 's',
      series: i,
      model: 'm',
      period: 1,
      length: 's',
      y: Array.from({ length: h }, (_, k) => sign * u * truth(k) * (sign > 0 ? 2 : 1)),
      mean: new Array(h).fill(0),
      lo: new Array(h).fill(-1),
      hi: new Array(h).fill(2),
      bandLo: new Array(h).fill(-Infinity),
      bandHi: new Array(h).fill(Infinity),
      scale: 1,
      backtest: { model: 'm', origins: [], crps: NaN, coverage: NaN, pinball: [], failures: [] },
    };
  });
  const { a, b, c, steps } = fitCurve(records);
  const q = conformalQuantile(Array.from({ length: 40 }, (_, i) => (i + 1) / 40), 0.95);
  // every step's conformal factor is q × truth(k), so the curve is ln q + 0.1 + 0.2 ln k, flat in c (6 steps)
  for (let k = 0; k < h; k++) assert.ok(Math.abs(steps[k] - q * truth(k)) < 1e-12);
  assert.ok(Math.abs(a - (Math.log(q) + 0.1)) < 1e-9 && Math.abs(b - 0.2) < 1e-9, `a ${a} b ${b}`);
  assert.equal(c, 0);
});
