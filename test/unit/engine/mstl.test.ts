import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { mstl } from '../../../src/engine/models/mstl';
import { naive, rwDrift } from '../../../src/engine/models/naive';
import { theta } from '../../../src/engine/models/theta';
import { Rng } from '../../../src/engine/rng';

/** Hourly-like series: level + daily and weekly cycles + small noise. */
function hourly(n: number, seed = 1): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, t) =>
    100 + 0.01 * t + 10 * Math.sin((2 * Math.PI * t) / 24) + 5 * Math.cos((2 * Math.PI * t) / 168) + 0.5 * rng.normal());
}

test('mstl forecasts two seasonal cycles accurately (hourly-like data, h = 48)', () => {
  const y = hourly(24 * 7 * 5 + 48);
  const train = y.slice(0, y.length - 48);
  const test = y.slice(y.length - 48);
  const fit = mstl.fit(train, { period: 24, periods: [24, 168] });
  assert.deepEqual(fit.params.periods, [24, 168]);
  const f = fit.forecast(48);
  const mae = test.reduce((s, v, k) => s + Math.abs(v - f.mean[k]), 0) / 48;
  assert.ok(mae < 1.5, `MAE ${mae}`);
  // only the daily period: the weekly cycle is missed and the error is larger
  const daily = mstl.fit(train, { period: 24 }).forecast(48);
  const maeDaily = test.reduce((s, v, k) => s + Math.abs(v - daily.mean[k]), 0) / 48;
  assert.ok(maeDaily > mae, `${maeDaily} vs ${mae}`);
});

test('mstl distribution is the inner one shifted by the seasonal forecast', () => {
  const y = hourly(24 * 10, 2);
  const f = mstl.fit(y, { period: 24 }, { inner: naive }).forecast(30);
  for (let k = 0; k < 30; k++) {
    const s = f.steps[k];
    assert.ok(Math.abs(s.mean - f.mean[k]) < 1e-9);
    for (const p of [0.05, 0.5, 0.95]) assert.ok(Math.abs(s.cdf(s.quantile(p)) - p) < 1e-9);
    assert.ok(s.quantile(0.9) - s.quantile(0.1) > 0);
  }
  assert.deepEqual(f.samplePaths(4, 7), f.samplePaths(4, 7));
  assert.ok(f.model.startsWith('MSTL('));
});

test('mstl edge cases: too short for a period, gaps, no period, custom inner', () => {
  const short = mstl.fit(hourly(100), { period: 24, periods: [24, 168] });
  assert.deepEqual(short.params.periods, [24]);
  assert.ok(short.warnings.some((w) => w.includes('168')));
  const gappy = hourly(24 * 8);
  gappy[30] = NaN;
  gappy[gappy.length - 1] = NaN;
  const g = mstl.fit(gappy, { period: 24 }).forecast(24);
  assert.ok(g.mean.every(Number.isFinite));
  const flat = mstl.fit([1, 2, 3, 4, 5, 6, 7, 8], { period: 1 }, { inner: rwDrift }).forecast(2);
  assert.ok(Math.abs(flat.mean[0] - 9) < 1e-9);
  const std = mstl.fit(hourly(24 * 6), { period: 24 }, { inner: theta, innerOptions: { seasonal: false } }).forecast(5);
  assert.ok(std.mean.every(Number.isFinite));
  assert.equal(mstl.minObservations({ period: 24 }), 5);
});

test('mstl in logs: a cycle whose swing grows with the level keeps growing; values ≤ 0 stay on their own scale', () => {
  // weekly data, a yearly cycle of ±30% on a rising level (found by QA in round 29: MSTL on the raw scale
  // forecast the swing of the last years' average level, CRPS ×1.15 against the AR pair)
  const y = Array.from({ length: 52 * 4 }, (_, t) => (200 + 2 * t) * (1 + 0.3 * Math.sin((2 * Math.PI * t) / 52)) * (1 + 0.01 * Math.sin(1.7 * t)));
  const info = { period: 1, periods: [52] };
  const swing = (v: ArrayLike<number>): number => Math.max(...Array.from(v)) - Math.min(...Array.from(v));
  const fit = mstl.fit(y, info, { log: true });
  assert.equal(fit.params.log, true);
  const f = fit.forecast(52);
  assert.ok(f.model.endsWith('[log]'), f.model);
  const last = swing(y.slice(-52));
  assert.ok(swing(f.mean) > last, `next year's swing ${swing(f.mean)} against the last year's ${last}`);
  assert.ok(swing(mstl.fit(y, info).forecast(52).mean) < last, 'on the raw scale the swing does not grow');
  for (const s of f.steps) {
    assert.ok(s.quantile(0.025) > 0 && s.quantile(0.025) < s.quantile(0.5) && s.quantile(0.5) < s.quantile(0.975));
    assert.ok(Math.abs(s.cdf(s.quantile(0.9)) - 0.9) < 1e-9);
  }
  assert.deepEqual(f.samplePaths(3, 5), f.samplePaths(3, 5));
  assert.ok(Array.from(fit.fitted ?? []).some(Number.isFinite));
  // a value ≤ 0 anywhere: the raw scale, as without the option
  const signed = y.map((v, t) => (t === 10 ? 0 : v));
  const raw = mstl.fit(signed, info, { log: true });
  assert.equal(raw.params.log, false);
  assert.deepEqual(Array.from(raw.forecast(13).mean), Array.from(mstl.fit(signed, info).forecast(13).mean));
});
