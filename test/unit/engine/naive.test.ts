import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { naive, naive2, rwDrift, seasonalNaive } from '../../../src/engine/models/naive';
import { InsufficientDataError } from '../../../src/engine/errors';
import { normalQuantile } from '../../../src/engine/math/normal';
import type { PredictiveDistribution } from '../../../src/engine/types';
import { fixtureJson } from '../../helpers/files';

interface Bands { mean: number[]; lower80: number[]; upper80: number[]; lower95: number[]; upper95: number[] }
interface Case { name: string; period: number; h: number; y: number[]; naive: Bands; rwdrift: Bands; snaive?: Bands }
const cases: Case[] = fixtureJson('r/naive-cases.json');

/** Tolerance: 1e-9 relative; the formulas are closed-form, so only rounding differs from R 4.x forecast 8.20. */
function assertBands(fc: PredictiveDistribution, b: Bands, label: string): void {
  const close = (a: number, e: number, what: string) =>
    assert.ok(Math.abs(a - e) <= 1e-9 * Math.max(1, Math.abs(e)), `${label} ${what}: ${a} vs ${e}`);
  for (let k = 0; k < b.mean.length; k++) {
    close(fc.mean[k], b.mean[k], `mean[${k}]`);
    close(fc.steps[k].quantile(0.1), b.lower80[k], `lo80[${k}]`);
    close(fc.steps[k].quantile(0.9), b.upper80[k], `hi80[${k}]`);
    close(fc.steps[k].quantile(0.025), b.lower95[k], `lo95[${k}]`);
    close(fc.steps[k].quantile(0.975), b.upper95[k], `hi95[${k}]`);
  }
}

test('naive, snaive and rwf(drift) match R forecast', () => {
  for (const c of cases) {
    const info = { period: c.period };
    assertBands(naive.fit(c.y, info).forecast(c.h), c.naive, `${c.name} naive`);
    assertBands(rwDrift.fit(c.y, info).forecast(c.h), c.rwdrift, `${c.name} rwdrift`);
    if (c.snaive) assertBands(seasonalNaive.fit(c.y, info).forecast(c.h), c.snaive, `${c.name} snaive`);
  }
});

test('naive2 on AirPassengers: naive on the series adjusted by the R decompose figure, reseasonalised (1e-12)', () => {
  const dec = fixtureJson('r/stl-decompose.json');
  const y: number[] = dec.y;
  const fig: number[] = dec.multiplicative.figure;
  const fit = naive2.fit(y, { period: 12 });
  assert.equal(fit.params.seasonal, true);
  const f = fit.forecast(24);
  const n = y.length;
  const last = y[n - 1] / fig[(n - 1) % 12];
  for (let k = 0; k < 24; k++) {
    const e = last * fig[(n + k) % 12];
    assert.ok(Math.abs(f.mean[k] - e) < 1e-12 * e, `[${k}] ${f.mean[k]} vs ${e}`);
  }
  // non-seasonal by the test: plain naive
  const nile = cases.find((c) => c.name === 'Nile')!;
  const g = naive2.fit(nile.y, { period: 1 }).forecast(3);
  assert.deepEqual(Array.from(g.mean), new Array(3).fill(nile.y[nile.y.length - 1]));
});

test('missing values: last cycle read through gaps, no NaN out', () => {
  const y = [1, 2, 3, NaN, 5, 6, NaN];
  const f = naive.fit(y, { period: 1 }).forecast(3);
  assert.deepEqual(Array.from(f.mean), [6, 6, 6]);
  const s = seasonalNaive.fit([1, 2, 3, 4, NaN, 6, 7, NaN], { period: 4 }).forecast(4);
  assert.deepEqual(Array.from(s.mean), [1, 6, 7, 4]);
  for (const st of s.steps) assert.ok(Number.isFinite(st.quantile(0.9)));
});

test('missing values at the end are steps already taken: drift and spread counted from the last observation (found by QA)', () => {
  // a trend of 2 a step, the last 3 values missing: rwdrift continues from the last value 4 steps on at step 1
  const y = [0, 2, 4, 6, 8, 10, 12, NaN, NaN, NaN];
  const f = rwDrift.fit(y, { period: 1 }).forecast(2);
  assert.deepEqual(Array.from(f.mean), [20, 22]);
  // naive's spread at step k is that of 3 + k steps; the series without its gap forecasts the same law further out
  const noisy = [5, 7, 4, 8, 6, 9, 5, NaN, NaN, NaN];
  const gap = naive.fit(noisy, { period: 1 }).forecast(2);
  const whole = naive.fit(noisy.slice(0, 7), { period: 1 }).forecast(5);
  for (let k = 0; k < 2; k++) {
    assert.equal(gap.mean[k], whole.mean[k + 3]);
    assert.ok(Math.abs(gap.steps[k].quantile(0.975) - whole.steps[k + 3].quantile(0.975)) < 1e-12);
  }
  assert.deepEqual(
    gap.samplePaths(3, 7).map((p) => Array.from(p)),
    whole.samplePaths(3, 7).map((p) => Array.from(p.slice(3))),
  );
});

test('edge cases: constant series gives a point mass; too short is a named error', () => {
  const f = naive.fit([5, 5, 5], { period: 1 }).forecast(2);
  assert.equal(f.steps[1].quantile(0.99), 5);
  assert.equal(f.steps[1].cdf(5), 1);
  assert.throws(() => naive.fit([1], { period: 1 }), InsufficientDataError);
  assert.throws(() => rwDrift.fit([1, 2], { period: 1 }), InsufficientDataError);
  assert.throws(() => seasonalNaive.fit([1, 2, 3, 4], { period: 4 }), InsufficientDataError);
  const d = rwDrift.fit([1, 2, 4], { period: 1 }).forecast(2);
  assert.ok(d.mean.every(Number.isFinite));
  const z = naive2.fit([0, 0, 0, 0, 0, 0, 0, 0, 0], { period: 3 }).forecast(3);
  assert.deepEqual(Array.from(z.mean), [0, 0, 0]);
});

test('sample paths: same seed same paths, spread matches the analytic sd', () => {
  const c = cases.find((x) => x.name === 'AirPassengers')!;
  const f = rwDrift.fit(c.y, { period: 12 }).forecast(6);
  const a = f.samplePaths(4000, 11);
  assert.deepEqual(a.slice(0, 5), f.samplePaths(5, 11));
  assert.notDeepEqual(a[0], f.samplePaths(1, 12)[0]);
  const k = 5;
  const vals = a.map((p) => p[k]);
  const mean = vals.reduce((s, v) => s + v, 0) / vals.length;
  const sd = Math.sqrt(vals.reduce((s, v) => s + (v - mean) ** 2, 0) / (vals.length - 1));
  const analytic = (f.steps[k].quantile(0.975) - f.steps[k].mean) / normalQuantile(0.975);
  assert.ok(Math.abs(sd / analytic - 1) < 0.05, `${sd} vs ${analytic}`);
});
