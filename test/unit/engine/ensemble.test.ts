import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { combineForecasts, ensembleFamily, LinearPoolStep, QuantileAverageStep } from '../../../src/engine/ensemble';
import { randomWalk, toyMean, toyNaive } from './backtest-toy-families';
import { forecastSeries } from '../../../src/engine/index';

test('quantile average of normals is the normal with averaged mean and sd', () => {
  const s = new QuantileAverageStep([new NormalStep(0, 1), new NormalStep(10, 3)], Float64Array.of(0.5, 0.5));
  const ref = new NormalStep(5, 2);
  for (const p of [0.01, 0.3, 0.5, 0.975]) assert.ok(Math.abs(s.quantile(p) - ref.quantile(p)) < 1e-12);
  for (const x of [-1, 5, 9]) assert.ok(Math.abs(s.cdf(x) - ref.cdf(x)) < 1e-12);
  assert.equal(s.mean, 5);
});

test('linear pool: cdf is the weighted cdf, quantile inverts it', () => {
  const a = new NormalStep(0, 1);
  const b = new NormalStep(10, 1);
  const s = new LinearPoolStep([a, b], Float64Array.of(0.25, 0.75));
  assert.ok(Math.abs(s.cdf(5) - 0.25) < 1e-6);
  assert.equal(s.mean, 7.5);
  for (const p of [0.1, 0.25, 0.6, 0.99]) assert.ok(Math.abs(s.cdf(s.quantile(p)) - p) < 1e-9);
});

test('ensemble family: fits members, combines, drops a failing member with a warning, deterministic paths', () => {
  const y = randomWalk(50, 4);
  const fam = ensembleFamily('combo', [{ family: toyNaive() }, { family: toyMean(), weight: 3 }]);
  const fit = fam.fit(y, { period: 1 });
  const pd = fit.forecast(6);
  const naive = toyNaive().fit(y, { period: 1 }).forecast(6);
  const mean = toyMean().fit(y, { period: 1 }).forecast(6);
  assert.ok(Math.abs(pd.mean[2] - (0.25 * naive.mean[2] + 0.75 * mean.mean[2])) < 1e-9);
  assert.equal(pd.intervalMethod, 'quantile-average');
  const p1 = pd.samplePaths(50, 1);
  assert.deepEqual(p1, pd.samplePaths(50, 1));
  assert.notDeepEqual(p1, pd.samplePaths(50, 2));
  const failing = { ...toyMean(), name: 'bad', fit: () => { throw new Error('nope'); } };
  const fit2 = ensembleFamily('combo', [{ family: toyNaive() }, { family: failing }]).fit(y, { period: 1 });
  assert.ok(fit2.warnings.some((w) => w.includes('bad dropped')));
  const mix = combineForecasts('m', [naive, mean], [1, 1], 'mixture');
  const paths = mix.samplePaths(200, 3);
  assert.equal(paths.length, 200);
  assert.deepEqual(paths, mix.samplePaths(200, 3));
});

test('a combination names each member warning once (found by QA: a pool of three TSBs said "no demand observed" three times)', () => {
  const zeros = new Float64Array(120);
  const r = forecastSeries(zeros, { period: 7, periods: [7, 365] }, { horizon: 7 });
  assert.match(r.model, /TSB, TSB, TSB/);
  assert.deepEqual(r.warnings, ['TSB: no demand observed: forecasting zero']);
});
