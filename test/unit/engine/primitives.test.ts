import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { Rng } from '../../../src/engine/rng';
import { normalCdf, normalQuantile } from '../../../src/engine/math/normal';
import { nelderMead } from '../../../src/engine/optim/nelder-mead';
import { EmpiricalStep } from '../../../src/engine/distributions/empirical-step';

test('normal quantile matches R qnorm to 1e-14', () => {
  // qnorm(c(0.975, 0.5, 1e-10, 0.8)) in R 4.2
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959963984540054) < 1e-14);
  assert.equal(normalQuantile(0.5), 0);
  assert.ok(Math.abs(normalQuantile(1e-10) - -6.361340902404056) < 1e-12);
  assert.ok(Math.abs(normalQuantile(0.8) - 0.8416212335729143) < 1e-14);
});

test('normal cdf inverts the quantile', () => {
  for (const p of [1e-12, 1e-6, 0.01, 0.2, 0.5, 0.7, 0.99, 1 - 1e-9]) {
    const q = normalQuantile(p);
    assert.ok(Math.abs(normalCdf(q) - p) < 1e-14 * Math.max(1, 1 / p), `p=${p}`);
  }
  // pnorm(-9) in R
  assert.ok(Math.abs(normalCdf(-9) / 1.128588405953e-19 - 1) < 1e-9);
});

test('rng: same seed gives the same stream, another seed a different one', () => {
  const a = new Rng(42);
  const b = new Rng(42);
  const c = new Rng(43);
  const sa = Array.from({ length: 100 }, () => a.uniform());
  const sb = Array.from({ length: 100 }, () => b.uniform());
  const sc = Array.from({ length: 100 }, () => c.uniform());
  assert.deepEqual(sa, sb);
  assert.notDeepEqual(sa, sc);
  assert.ok(sa.every((u) => u > 0 && u < 1));
  const r = new Rng(7);
  let sum = 0;
  let sq = 0;
  const n = 20000;
  for (let i = 0; i < n; i++) {
    const z = r.normal();
    sum += z;
    sq += z * z;
  }
  assert.ok(Math.abs(sum / n) < 0.03);
  assert.ok(Math.abs(sq / n - 1) < 0.05);
});

test('nelder-mead finds the Rosenbrock minimum and respects bounds', () => {
  const rosen = (x: Float64Array) => 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2;
  const r = nelderMead(rosen, [-1.2, 1], { maxEvaluations: 5000, tolerance: 1e-14 });
  assert.ok(Math.abs(r.x[0] - 1) < 1e-3 && Math.abs(r.x[1] - 1) < 1e-3, `got ${r.x}`);
  const bounded = nelderMead(rosen, [0.2, 0.2], { lower: [0, 0], upper: [0.5, 0.5], maxEvaluations: 5000 });
  assert.ok(bounded.x[0] <= 0.5 && bounded.x[1] <= 0.5);
  assert.ok(Math.abs(bounded.x[0] - 0.5) < 1e-3);
});

test('empirical step: quantile and cdf are consistent and monotone', () => {
  const s = new EmpiricalStep([5, 1, 3, 2, 4]);
  assert.equal(s.mean, 3);
  assert.equal(s.quantile(0.5), 3);
  assert.equal(s.quantile(0), 1);
  assert.equal(s.quantile(1), 5);
  for (const p of [0.1, 0.33, 0.5, 0.9]) assert.ok(Math.abs(s.cdf(s.quantile(p)) - p) < 1e-12);
});
