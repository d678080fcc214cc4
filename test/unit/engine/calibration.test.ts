import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backtest } from '../../../src/engine/backtest';
import { applyCalibration, conformalQuantile, planCalibration } from '../../../src/engine/calibration/conformal';
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
