import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { croston, SES_MAX_ALPHA } from '../../../src/engine/models/croston';
import { HurdleStep, IntegerSizeStep } from '../../../src/engine/models/croston-distribution';
import { InsufficientDataError, InvalidSeriesError } from '../../../src/engine/errors';
import { fixtureJson } from '../../helpers/files';

const fx = fixtureJson('r/croston-cases.json');
const info = { period: 1, kind: 'count' as const };
const PS = [0.01, 0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99];

test('Croston matches R croston (alpha 0.1 and 0.3, mean and fitted, 1e-12 relative)', () => {
  const f1 = croston.fit(fx.y, info);
  assert.ok(Math.abs(f1.forecast(5).mean[0] - fx.mean_a01[0]) < 1e-12);
  const f3 = croston.fit(fx.y, info, { alpha: 0.3 });
  assert.ok(Math.abs(f3.forecast(5).mean[4] - fx.mean_a03[4]) < 1e-12);
  // R 8.20 reports 0 before the first demand where the engine (like newer forecast) has NaN.
  fx.fitted_a01.forEach((v: number | null, i: number) => {
    const mine = f1.fitted![i];
    if (Number.isNaN(mine)) assert.ok(v === null || v === 0);
    else assert.ok(Math.abs(mine - v!) < 1e-12, `fitted[${i}] ${mine} vs ${v}`);
  });
});

test('SBA is Croston times (1 − α/2); TSB follows its recursion', () => {
  const c = croston.fit(fx.y, info).forecast(1).mean[0];
  const s = croston.fit(fx.y, info, { method: 'sba' }).forecast(1).mean[0];
  assert.ok(Math.abs(s - c * 0.95) < 1e-12);
  // TSB by hand on [0, 2, 0, 4], α = β = 0.5: d0 = 0.5, z0 = 2.
  // t0 y=0: d=0.25. t1 y=2: d=0.625, z=2. t2 y=0: d=0.3125. t3 y=4: d=0.65625, z=3.
  const t = croston.fit([0, 2, 0, 4], info, { method: 'tsb', alpha: 0.5, beta: 0.5 }).forecast(2);
  assert.ok(Math.abs(t.mean[1] - 0.65625 * 3) < 1e-12, `${t.mean[1]}`);
});

test('SES rate: the level started at the first value, α by in-sample error on 0.01..0.2, split by a TSB-smoothed size', () => {
  // By hand on [0, 2, 0, 4], α = 0.5: level 0, 0, 1, 0.5 → 2.25; size from the mean 3, α 0.1: 2.9 → 3.01.
  const f = croston.fit([0, 2, 0, 4], info, { method: 'ses', alpha: 0.5 });
  assert.deepEqual(Array.from(f.fitted!), [0, 0, 1, 0.5]);
  const st = f.forecast(2).steps[1] as HurdleStep;
  assert.ok(Math.abs(st.mean - 2.25) < 1e-12 && Math.abs(st.p - 2.25 / 3.01) < 1e-12, `${st.mean} ${st.p}`);
  // α chosen: the grid value with the least one-step squared error, never above SES_MAX_ALPHA
  const y = [0, 0, 0, 1, 0, 3, 0, 0, 2, 0, 0, 0, 4, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0];
  const sse = (a: number) => {
    let l = y[0];
    let e = 0;
    for (const v of y) (e += (v - l) ** 2), (l += a * (v - l));
    return e;
  };
  const grid = Array.from({ length: Math.round(SES_MAX_ALPHA * 100) }, (_, k) => (k + 1) / 100);
  const best = grid.reduce((a, b) => (sse(b) < sse(a) ? b : a));
  const chosen = croston.fit(y, info, { method: 'ses' });
  assert.equal(chosen.params.alpha, best);
  assert.ok(best <= SES_MAX_ALPHA);
  // a rate above the smoothed size (demand every period, stepping up) keeps p at 1 and the mean at the rate
  const up = croston.fit([3, 3, 3, 3, 10, 10, 10, 10], info, { method: 'ses', alpha: 1 }).forecast(1).steps[0] as HurdleStep;
  assert.equal(up.p, 1);
  assert.ok(Math.abs(up.mean - 10) < 1e-9, `${up.mean}`);
  assert.throws(() => croston.fit([0, 1, 2], info, { method: 'ses', sizeAlpha: 2 }), InvalidSeriesError);
});

test('count predictive distribution: non-negative integers, mass at zero, cdf∘quantile consistent', () => {
  for (const method of ['croston', 'sba', 'tsb', 'ses'] as const) {
    const f = croston.fit(fx.y, info, { method, optimise: true }).forecast(3);
    const st = f.steps[2];
    assert.equal(st.cdf(-0.5), 0);
    assert.ok(st.cdf(0) > 0.5, 'mostly zeros');
    let prev = -1;
    for (const p of PS) {
      const q = st.quantile(p);
      assert.ok(Number.isInteger(q) && q >= 0 && q >= prev, `${method} p=${p} q=${q}`);
      prev = q;
      assert.ok(st.cdf(q) >= p - 1e-12);
      if (q > 0) assert.ok(st.cdf(q - 1) < p);
    }
    assert.ok(Math.abs(st.mean - f.mean[2]) < 1e-12);
    const paths = f.samplePaths(3000, 9);
    assert.deepEqual(paths.slice(0, 3), f.samplePaths(3, 9));
    const avg = paths.reduce((s, p) => s + p[0], 0) / paths.length;
    assert.ok(Math.abs(avg - f.mean[0]) < 0.1 * f.mean[0] + 0.05, `${method} path mean ${avg} vs ${f.mean[0]}`);
    for (const p of paths) for (const v of p) assert.ok(Number.isInteger(v) && v >= 0);
  }
});

test('size law: shifted negative binomial keeps the mean and sits on 1, 2, ...', () => {
  const s = new IntegerSizeStep(2.5, 9);
  assert.ok(Math.abs(s.mean - 3.5) < 1e-9);
  assert.equal(s.cdf(0.99), 0);
  assert.equal(s.quantile(1e-9), 1);
  const poisson = new IntegerSizeStep(1e4, 0); // wide support, no overflow
  assert.ok(Math.abs(poisson.mean - 10001) < 1e-6 * 1e4);
  const h = new HurdleStep(0.2, new IntegerSizeStep(0, 0));
  assert.equal(h.quantile(0.8), 0);
  assert.equal(h.quantile(0.81), 1);
});

test('edge cases: all zeros, one demand, non-integer sizes, gaps, bad input', () => {
  const z = croston.fit([0, 0, 0, 0], info);
  assert.equal(z.forecast(2).mean[0], 0);
  assert.equal(z.forecast(2).steps[0].quantile(0.99), 0);
  assert.ok(z.warnings.length > 0);
  const one = croston.fit([0, 0, 5], info).forecast(1);
  assert.ok(Math.abs(one.mean[0] - 5 / 3) < 1e-12);
  const frac = croston.fit([0, 1.5, 0, 0, 2.25, 0, 0.5], { period: 1 }).forecast(1);
  assert.ok(frac.mean[0] > 0 && frac.steps[0].quantile(0.99) > 0);
  const gaps = croston.fit([0, NaN, 3, 0, NaN, 1], info);
  assert.ok(gaps.fitted!.length === 6 && Number.isNaN(gaps.fitted![1]));
  assert.throws(() => croston.fit([1], info), InsufficientDataError);
  assert.throws(() => croston.fit([1, -2, 3], info), InvalidSeriesError);
  assert.throws(() => croston.fit([1, 2, 3], info, { alpha: 2 }), InvalidSeriesError);
});
