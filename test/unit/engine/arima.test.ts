/**
 * ARIMA golden tests against R 4.2 / forecast 8.20 (fixtures from scripts/r/arima-fixtures.R).
 * Tolerances: fixed orders — loglik 1e-6 relative, coefficients 1e-3 absolute, sigma² 1e-3
 * relative, forecast means 1e-4 relative, 95% bounds 1e-3 relative; auto.arima — same
 * chosen model, loglik 1e-5 relative.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { arima } from '../../../src/engine/models/arima';
import { fixtureJson } from '../../helpers/files';

interface RCase {
  y?: (number | null)[];
  period: number;
  order: [number, number, number];
  seasonal: [number, number, number];
  coef: Record<string, number>;
  sigma2: number;
  loglik: number;
  aicc: number;
  h: number;
  mean: number[];
  lower95: number[];
  upper95: number[];
  method: string;
  id?: string;
}

const load = (f: string) => fixtureJson(`r/${f}`);
const fixed: Record<string, RCase> = load('arima-fixed.json');
const auto: Record<string, RCase> = load('arima-auto.json');
const m3: { series: Record<string, RCase> } = load('arima-m3.json');
const toY = (y: (number | null)[]) => Float64Array.from(y, (v) => (v === null ? NaN : v));
const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(1e-12, Math.abs(b));

for (const [name, c] of Object.entries(fixed)) {
  test(`Arima fixed order matches R: ${name}`, () => {
    const f = arima.fit(toY(c.y!), { period: c.period }, { order: c.order, seasonal: c.seasonal, drift: 'drift' in c.coef });
    assert.ok(rel(f.loglik!, c.loglik) < 1e-6, `loglik ${f.loglik} vs ${c.loglik}`);
    assert.ok(Math.abs(f.aicc! - c.aicc) < 1e-3 * Math.abs(c.aicc), `aicc ${f.aicc} vs ${c.aicc}`);
    for (const [nm, v] of Object.entries(c.coef)) assert.ok(Math.abs((f.params[nm] as number) - v) < 1e-3, `${nm} ${f.params[nm]} vs ${v}`);
    assert.ok(rel(f.params.sigma2 as number, c.sigma2) < 1e-3, `sigma2 ${f.params.sigma2} vs ${c.sigma2}`);
    const fc = f.forecast(c.h);
    assert.equal(fc.intervalMethod, 'analytic');
    for (let k = 0; k < c.h; k++) {
      assert.ok(rel(fc.mean[k], c.mean[k]) < 1e-4, `mean[${k}] ${fc.mean[k]} vs ${c.mean[k]}`);
      assert.ok(rel(fc.steps[k].quantile(0.975), c.upper95[k]) < 1e-3, `upper[${k}]`);
      assert.ok(rel(fc.steps[k].quantile(0.025), c.lower95[k]) < 1e-3, `lower[${k}]`);
    }
  });
}

for (const [name, c] of Object.entries(auto)) {
  test(`auto.arima chooses R's model: ${name}`, () => {
    const f = arima.fit(toY(c.y!), { period: c.period });
    assert.equal(f.model, c.method);
    assert.ok(rel(f.loglik!, c.loglik) < 1e-5, `loglik ${f.loglik} vs ${c.loglik}`);
    const fc = f.forecast(c.h);
    for (let k = 0; k < c.h; k++) assert.ok(rel(fc.mean[k], c.mean[k]) < 1e-3, `mean[${k}]`);
  });
}

test('auto.arima on an M3 sample (non-monthly + 3 monthly) chooses R\'s model', () => {
  const monthly = new Set(['N1501', 'N1561', 'N2281']);
  let checked = 0;
  for (const [id, c] of Object.entries(m3.series)) {
    if (c.period === 12 && !monthly.has(id)) continue;
    const f = arima.fit(toY(c.y!), { period: c.period });
    assert.equal(f.model, c.method, id);
    assert.ok(rel(f.loglik!, c.loglik) < 1e-5, `${id} loglik ${f.loglik} vs ${c.loglik}`);
    checked++;
  }
  assert.ok(checked >= 25);
});

const wwwusage = (): Float64Array => toY(fixed.wwwusage_310.y!);
const usacc = (): Float64Array => toY(fixed.usaccdeaths_011_011.y!);

test('quantiles are monotone, cdf inverts quantile, intervals widen with h when d >= 1', () => {
  const f = arima.fit(usacc(), { period: 12 }, { order: [0, 1, 1], seasonal: [0, 1, 1] });
  const fc = f.forecast(24);
  let prevWidth = 0;
  for (let k = 0; k < 24; k++) {
    const s = fc.steps[k];
    let prev = -Infinity;
    for (const p of [0.001, 0.025, 0.1, 0.5, 0.9, 0.975, 0.999]) {
      const q = s.quantile(p);
      assert.ok(q > prev);
      prev = q;
      assert.ok(Math.abs(s.cdf(q) - p) < 1e-9);
    }
    const width = s.quantile(0.975) - s.quantile(0.025);
    assert.ok(width >= prevWidth);
    prevWidth = width;
  }
});

test('sample paths: same seed identical, next seed differs, moments match the analytic marginals', () => {
  const f = arima.fit(wwwusage(), { period: 1 }, { order: [1, 1, 1], drift: true });
  const fc = f.forecast(6);
  const a = fc.samplePaths(4000, 11);
  const b = fc.samplePaths(4000, 11);
  const c = fc.samplePaths(4000, 12);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a[0], c[0]);
  for (let k = 0; k < 6; k++) {
    let s = 0;
    let s2 = 0;
    for (const p of a) {
      s += p[k];
      s2 += p[k] * p[k];
    }
    const mean = s / a.length;
    const sd = Math.sqrt(s2 / a.length - mean * mean);
    const sdA = fc.steps[k].quantile(0.8413447460685429) - fc.steps[k].mean;
    assert.ok(Math.abs(mean - fc.mean[k]) < 4 * (sdA / Math.sqrt(a.length)) + 1e-9, `mean h=${k + 1}`);
    assert.ok(Math.abs(sd / sdA - 1) < 0.06, `sd h=${k + 1}: ${sd} vs ${sdA}`);
  }
});

test('edge cases: constant, zeros, length 3, NaN gaps, huge values, bad input', () => {
  const constant = arima.fit(new Float64Array(20).fill(7), { period: 12 });
  assert.equal(constant.forecast(3).mean[2], 7);
  assert.equal(constant.forecast(3).steps[0].quantile(0.9), 7);
  const zeros = arima.fit(new Float64Array(10), { period: 1 });
  assert.deepEqual(Array.from(zeros.forecast(2).mean), [0, 0]);
  const short = arima.fit([1, 3, 2], { period: 1 });
  const sfc = short.forecast(4);
  assert.ok(sfc.mean.every(Number.isFinite) && sfc.steps.every((s) => Number.isFinite(s.quantile(0.95))));
  const gappy = usacc();
  gappy[5] = NaN;
  gappy[40] = NaN;
  gappy[41] = NaN;
  const g = arima.fit(gappy, { period: 12 });
  assert.ok(g.forecast(12).mean.every(Number.isFinite), g.model);
  assert.ok(Number.isNaN(g.fitted![5]));
  const base = arima.fit(wwwusage(), { period: 1 });
  const huge = arima.fit(wwwusage().map((v) => v * 2 ** 900), { period: 1 });
  assert.equal(huge.model, base.model);
  const hb = base.forecast(5);
  const hh = huge.forecast(5);
  for (let k = 0; k < 5; k++) {
    assert.ok(rel(hh.mean[k] / 2 ** 900, hb.mean[k]) < 1e-9);
    assert.ok(Number.isFinite(hh.steps[k].quantile(0.99)));
  }
  const neg = arima.fit(wwwusage().map((v) => -v), { period: 1 });
  assert.ok(neg.forecast(3).mean.every(Number.isFinite));
  assert.throws(() => arima.fit([1, 2, Infinity, 4], { period: 1 }), /InvalidSeriesError|Infinity/);
  assert.throws(() => arima.fit([1, 2, 3], { period: 12 }, { order: [0, 1, 1], seasonal: [0, 1, 1] }), (e: Error) => e.name === 'InsufficientDataError');
  assert.throws(() => arima.fit([], { period: 1 }), (e: Error) => e.name === 'InsufficientDataError');
});

test('deterministic: same input gives bit-identical output', () => {
  const a = arima.fit(usacc(), { period: 12 });
  const b = arima.fit(usacc(), { period: 12 });
  assert.deepEqual(a.params, b.params);
  assert.deepEqual(a.forecast(12).mean, b.forecast(12).mean);
});
