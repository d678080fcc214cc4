import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { acf, fillMissingLinear, isConstant, nanMean, nanVariance, olsLine, quantile7, runningMean } from '../../../src/engine/math/stats';

test('nan-aware mean and variance', () => {
  assert.equal(nanMean([1, NaN, 3]), 2);
  assert.equal(nanVariance([1, NaN, 3]), 2);
  assert.ok(Number.isNaN(nanMean([NaN])));
  assert.ok(Number.isNaN(nanVariance([1])));
});

test('running mean: the mean without a sum that overflows near the largest double', () => {
  assert.ok(Math.abs(runningMean([1, 2, 3, 4]) - 2.5) < 1e-15);
  assert.equal(runningMean([]), 0);
  assert.equal(nanMean([1e308, 1e308]), Infinity);
  assert.ok(Math.abs(runningMean([1e308, 1e308, 5e307]) / 8.333333333333333e307 - 1) < 1e-15);
});

test('acf follows R acf: lag sums over the lag-0 sum of squares about the mean', () => {
  const r = acf([1, 3, 2, 5, 4, 6], 2);
  const y = [1, 3, 2, 5, 4, 6];
  const m = 3.5;
  const c0 = y.reduce((s, v) => s + (v - m) ** 2, 0);
  let c1 = 0;
  for (let i = 1; i < 6; i++) c1 += (y[i] - m) * (y[i - 1] - m);
  assert.ok(Math.abs(r[0] - c1 / c0) < 1e-15);
  assert.deepEqual(Array.from(acf([2, 2, 2], 1)), [0]);
});

test('type-7 quantile as R quantile()', () => {
  // quantile(c(1,2,3,4,10), c(.1,.5,.9)) = 1.4, 3, 7.6
  assert.ok(Math.abs(quantile7([10, 1, 3, 2, 4], 0.1) - 1.4) < 1e-12);
  assert.equal(quantile7([10, 1, 3, 2, 4], 0.5), 3);
  assert.ok(Math.abs(quantile7([10, 1, 3, 2, 4, NaN], 0.9) - 7.6) < 1e-12);
});

test('ols line, gap filling, constancy', () => {
  const l = olsLine([1, 3, NaN, 7]);
  assert.ok(Math.abs(l.slope - 2) < 1e-12 && Math.abs(l.intercept - 1) < 1e-12);
  assert.deepEqual(Array.from(fillMissingLinear([NaN, 1, NaN, 3, NaN])), [1, 1, 2, 3, 3]);
  assert.equal(isConstant([NaN, 2, 2]), true);
  assert.equal(isConstant([1, 2]), false);
});
