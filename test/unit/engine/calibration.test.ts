import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { backtest } from '../../../src/engine/backtest';
import { applyCalibration, conformalQuantile, planCalibration, refineMinErrors } from '../../../src/engine/calibration/conformal';
import { randomWalk, toyNaive } from './backtest-toy-families';

test('conformal quantile is the ceil((n+1)·level)-th order statistic', () => {
  assert.equal(conformalQuantile([5, 1, 4, 2, 3], 0.5), 3);
  assert.equal(conformalQuantile([5, 1, 4, 2, 3], 0.95), 5);
});

test('too-narrow intervals are widened to about the right coverage; good ones left alone', () => {
  const y = randomWalk(600, 11);
  const narrow = toyNaive(0.3);
  const bt = backtest(narrow, y, { period: 1 }, { horizon: 10, origins: 8, step: 10, level: 0.9 });
  const plan = planCalibration(bt, { level: 0.9 });
  assert.equal(plan.method, 'conformal-scaled');
  assert.ok(plan.factor > 2 && plan.factor < 5, `factor ${plan.factor}`);
  const pd = narrow.fit(y, { period: 1 }).forecast(10);
  const cal = applyCalibration(pd, plan);
  assert.equal(cal.intervalMethod, 'conformal-scaled');
  const w0 = pd.steps[4].quantile(0.95) - pd.steps[4].quantile(0.05);
  const w1 = cal.steps[4].quantile(0.95) - cal.steps[4].quantile(0.05);
  assert.ok(Math.abs(w1 / w0 - plan.factor) < 1e-9);
  assert.ok(Math.abs(cal.steps[4].cdf(cal.steps[4].quantile(0.8)) - 0.8) < 1e-9);
  assert.deepEqual(cal.samplePaths(3, 9), cal.samplePaths(3, 9));
  const good = planCalibration(backtest(toyNaive(1), y, { period: 1 }, { horizon: 10, origins: 8, step: 10, level: 0.9 }), {
    level: 0.9,
  });
  assert.ok(good.method === 'none' || Math.abs(good.factor - 1) < 0.5, JSON.stringify(good));
});

test('per-step split conformal when every step has enough errors', () => {
  const y = randomWalk(300, 5);
  const bt = backtest(toyNaive(0.2), y, { period: 1 }, { horizon: 3, origins: 8, step: 1 });
  const plan = planCalibration(bt, { level: 0.9, perStepMin: 8 });
  assert.equal(plan.method, 'conformal');
  const cal = applyCalibration(toyNaive(0.2).fit(y, { period: 1 }).forecast(3), plan);
  assert.equal(cal.intervalMethod, 'conformal');
  assert.ok(cal.steps[2].quantile(0.9) >= cal.steps[2].quantile(0.1));
});

test('too-wide intervals within the coverage tolerance are narrowed, shrunk by origins; few errors leave them alone', () => {
  const y = randomWalk(400, 7);
  const wide = toyNaive(3);
  const bt = backtest(wide, y, { period: 1 }, { horizon: 13, origins: 3, level: 0.95 });
  const plan = planCalibration(bt, { level: 0.95 });
  assert.equal(plan.method, 'conformal-scaled');
  assert.equal(plan.refined, true);
  assert.ok(plan.factor < 1 && plan.factor >= 0.5, `factor ${plan.factor}`);
  // the factor moves half-way (in logs) to the unshrunk one with 3 origins and k = 3
  const free = { level: 0.95, factorBounds: [0.01, 100] as const };
  const half = planCalibration(bt, free).factor;
  const full = planCalibration(bt, { ...free, refineShrink: 0 }).factor;
  assert.ok(Math.abs(Math.log(half) - 0.5 * Math.log(full)) < 1e-12, `${half} vs ${full}`);
  assert.equal(planCalibration(bt, { level: 0.95, refineShrink: Infinity }).method, 'none');
  // 18 errors: the conformal quantile would be the largest error, so nothing is refined
  const few = backtest(wide, y, { period: 1 }, { horizon: 6, origins: 3, level: 0.95 });
  assert.equal(planCalibration(few, { level: 0.95 }).method, 'none');
  assert.equal(refineMinErrors(0.95), 39);
  assert.equal(refineMinErrors(0.8), 9);
});
