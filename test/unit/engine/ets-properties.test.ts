/** Property and edge-case tests of the ETS family (no R needed). */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ets } from '../../../src/engine/models/ets';
import { InsufficientDataError, InvalidSeriesError } from '../../../src/engine/errors';
import type { PredictiveDistribution } from '../../../src/engine/types';
import { fixtureJson } from '../../helpers/files';

const FITS = fixtureJson('r/ets-fits.json') as {
  series: Record<string, { period: number; y: number[] }>;
};
const usa = FITS.series.USAccDeaths.y;
const air = FITS.series.AirPassengers.y;
const www = FITS.series.WWWusage.y;
const PS = [0.005, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 0.995];

function checkDistribution(fc: PredictiveDistribution, label: string): void {
  for (let i = 0; i < fc.steps.length; i++) {
    const s = fc.steps[i];
    assert.ok(Number.isFinite(fc.mean[i]), `${label} mean h=${i + 1}`);
    let prev = -Infinity;
    for (const p of PS) {
      const q = s.quantile(p);
      assert.ok(Number.isFinite(q) && q >= prev, `${label} quantile monotone h=${i + 1} p=${p}`);
      prev = q;
      const tol = fc.intervalMethod === 'analytic' ? 1e-9 : 2e-3; // empirical cdf is piecewise linear
      if (s.quantile(0.5) !== s.quantile(0.4)) assert.ok(Math.abs(s.cdf(q) - p) < tol, `${label} cdf(quantile(${p})) h=${i + 1}: ${s.cdf(q)}`);
    }
    // nested intervals: 80% inside 95%
    assert.ok(s.quantile(0.025) <= s.quantile(0.1) && s.quantile(0.9) <= s.quantile(0.975), `${label} nesting h=${i + 1}`);
  }
}

test('quantiles monotone, cdf inverts quantile, intervals nested (analytic and simulated models)', () => {
  for (const [label, y, period, model] of [
    ['USAccDeaths AAA', usa, 12, 'AAA'],
    ['USAccDeaths MAdA', usa, 12, 'MAdA'],
    ['AirPassengers MAM', air, 12, 'MAM'],
    ['WWWusage AAdN', www, 1, 'AAdN'],
    ['AirPassengers MMM', air, 12, 'MMM'],
  ] as const) {
    const fc = ets.fit(y, { period }, { model, npaths: 2000 }).forecast(2 * period + 2);
    assert.equal(fc.intervalMethod, model.includes('M', 1) ? 'simulated' : 'analytic', label);
    checkDistribution(fc, label);
  }
});

test('sample paths: same seed identical, seed + 1 different, right shape', () => {
  for (const model of ['ANA', 'MAM']) {
    const fc = ets.fit(usa, { period: 12 }, { model }).forecast(10);
    const a = fc.samplePaths(50, 123);
    const b = fc.samplePaths(50, 123);
    const c = fc.samplePaths(50, 124);
    assert.equal(a.length, 50);
    assert.ok(a.every((p) => p.length === 10 && p.every(Number.isFinite)));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  }
});

test('fitting is deterministic: same input and options give identical output', () => {
  const f1 = ets.fit(air, { period: 12 });
  const f2 = ets.fit(air, { period: 12 });
  assert.equal(f1.model, f2.model);
  assert.deepEqual(f1.params, f2.params);
  const a = f1.forecast(24);
  const b = f2.forecast(24);
  assert.deepEqual(a.mean, b.mean);
  assert.deepEqual(PS.map((p) => a.steps[23].quantile(p)), PS.map((p) => b.steps[23].quantile(p)));
});

test('class 1 model: analytic intervals agree with simulated paths within Monte Carlo error', () => {
  const fc = ets.fit(usa, { period: 12 }, { model: 'AAdA' }).forecast(24);
  assert.equal(fc.intervalMethod, 'analytic');
  const n = 20000;
  const paths = fc.samplePaths(n, 99);
  const col = new Float64Array(n);
  for (const h of [0, 5, 11, 23]) {
    for (let i = 0; i < n; i++) col[i] = paths[i][h];
    col.sort();
    const sd = (fc.steps[h].quantile(0.975) - fc.steps[h].quantile(0.025)) / (2 * 1.959963984540054);
    for (const p of [0.025, 0.1, 0.5, 0.9, 0.975]) {
      const emp = col[Math.round(p * (n - 1))];
      // MC standard error of a quantile: sqrt(p(1-p)/n)/pdf; 4 of them, plus a little slack
      const se = Math.sqrt((p * (1 - p)) / n) / (Math.exp(-0.5 * ((fc.steps[h].quantile(p) - fc.mean[h]) / sd) ** 2) / (sd * Math.sqrt(2 * Math.PI)));
      assert.ok(Math.abs(emp - fc.steps[h].quantile(p)) < 4 * se + 1e-9, `h=${h + 1} p=${p}: ${emp} vs ${fc.steps[h].quantile(p)}`);
    }
  }
});

test('options: model strings, structured fields, fixed parameters', () => {
  const a = ets.fit(www, { period: 1 }, { model: 'AAdN' });
  const b = ets.fit(www, { period: 1 }, { error: 'A', trend: 'A', season: 'N', damped: true });
  assert.equal(a.model, 'ETS(A,Ad,N)');
  assert.deepEqual(a.params, b.params);
  const c = ets.fit(www, { period: 1 }, { model: 'ANN', alpha: 0.5 });
  assert.equal(c.params.alpha, 0.5);
  assert.throws(() => ets.fit(www, { period: 1 }, { model: 'XYZ' }), InvalidSeriesError);
  assert.throws(() => ets.fit(www, { period: 1 }, { model: 'ANA' }), InvalidSeriesError);
  assert.throws(() => ets.fit(air, { period: 12 }, { model: 'AAM' }), InvalidSeriesError); // restrict = TRUE
  assert.throws(() => ets.fit(www, { period: 1 }, { alpha: 1.5 }), InvalidSeriesError);
  const mmm = ets.fit(air, { period: 12 }, { model: 'MMM' });
  assert.equal(mmm.model, 'ETS(M,M,M)');
  assert.equal(mmm.forecast(3).intervalMethod, 'simulated');
  assert.ok(Number.isFinite(a.aicc) && Number.isFinite(a.bic) && Number.isFinite(a.aic));
  assert.equal(a.fitted?.length, www.length);
});

test('edge: constant and all-zero series give a point-mass forecast at the constant', () => {
  for (const v of [5, 0]) {
    const f = ets.fit(new Array(30).fill(v), { period: 12 });
    const fc = f.forecast(6);
    assert.equal(f.model, 'ETS(A,N,N)');
    for (let i = 0; i < 6; i++) {
      assert.equal(fc.mean[i], v);
      assert.equal(fc.steps[i].quantile(0.025), v);
      assert.equal(fc.steps[i].quantile(0.975), v);
      assert.equal(fc.steps[i].cdf(v), 1);
    }
    assert.ok(fc.samplePaths(5, 1).every((p) => p.every((x) => x === v)));
  }
});

test('edge: very short series fall back to SES/Holt (least squares), two values are an InsufficientDataError', () => {
  const f = ets.fit([1, 2, 4], { period: 1 });
  const fc = f.forecast(4);
  assert.ok(fc.mean.every(Number.isFinite));
  checkDistribution(fc, 'length 3');
  assert.ok(f.params.estimation !== undefined);
  assert.throws(() => ets.fit([1, 2], { period: 1 }), InsufficientDataError);
  assert.throws(() => ets.fit([NaN, NaN, NaN, 1], { period: 1 }), InsufficientDataError);
  assert.equal(ets.minObservations({ period: 1 }), 3);
  const s = ets.fit([3, 5, 4, 6, 7, 6, 8, 9, 7, 10], { period: 4 }, { model: 'AAA' });
  assert.ok(s.warnings.some((w) => w.includes('seasonality dropped')));
});

test('edge: NaN gaps are predict-only steps; leading NaN skipped; fitted keeps the input length', () => {
  const y = usa.slice();
  for (const i of [0, 10, 11, 30, 71]) y[i] = NaN;
  const f = ets.fit(y, { period: 12 });
  assert.equal(f.nobs, usa.length - 5);
  assert.equal(f.fitted?.length, y.length);
  assert.ok(Number.isNaN(f.fitted?.[0]));
  assert.ok(Number.isFinite(f.fitted?.[10])); // a forecast exists for the missing step
  assert.ok(f.warnings.some((w) => w.includes('predict-only')));
  const fc = f.forecast(12);
  checkDistribution(fc, 'NaN gaps');
  // close to the fit without gaps
  const full = ets.fit(usa, { period: 12 }).forecast(12);
  assert.ok(Math.abs(fc.mean[0] / full.mean[0] - 1) < 0.1);
});

test('edge: values ~1e12 and ~1e-12 give the same model and scaled forecasts; infinities are rejected', () => {
  const base = ets.fit(usa, { period: 12 }, { model: 'ANA' }).forecast(6);
  for (const k of [1e8, 1e-12]) {
    const f = ets.fit(usa.map((v) => v * k), { period: 12 }, { model: 'ANA' });
    const fc = f.forecast(6);
    for (let i = 0; i < 6; i++) assert.ok(Math.abs(fc.mean[i] / (base.mean[i] * k) - 1) < 0.02, `scale ${k} h=${i + 1}`);
    checkDistribution(fc, `scale ${k}`);
  }
  assert.throws(() => ets.fit([1, 2, Infinity, 4, 5, 6, 7, 8], { period: 1 }), InvalidSeriesError);
});

test('edge: negative data excludes multiplicative models (auto) and rejects them (explicit)', () => {
  const neg = usa.map((v) => v - 9000);
  const f = ets.fit(neg, { period: 12 });
  assert.ok(!f.model.includes('M'), f.model);
  checkDistribution(f.forecast(12), 'negative');
  assert.throws(() => ets.fit(neg, { period: 12 }, { model: 'MAN' }), InvalidSeriesError);
});

test('edge: period > 24 drops seasonality with a warning, as R', () => {
  const y = Array.from({ length: 120 }, (_, i) => 100 + 10 * Math.sin((2 * Math.PI * i) / 52) + (i % 5));
  const f = ets.fit(y, { period: 52 });
  assert.ok(f.model.endsWith(',N)'));
  assert.ok(f.warnings.some((w) => w.includes('> 24')));
  assert.throws(() => ets.fit(y, { period: 52 }, { model: 'AAA' }), InvalidSeriesError);
});
