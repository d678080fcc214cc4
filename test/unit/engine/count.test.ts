import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { CountStep, toCountDistribution } from '../../../src/engine/distributions/count';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { naive } from '../../../src/engine/models/naive';

const PS = [0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999];

test('count step: no mass below 0, integer quantiles, step cdf consistent with quantile', () => {
  for (const [mu, sd] of [[0.3, 1], [-2, 1], [4.2, 2.5], [100, 10], [0, 0], [2.7, 0]]) {
    const c = new CountStep(new NormalStep(mu, sd));
    assert.equal(c.cdf(-0.01), 0);
    assert.equal(c.cdf(-1e-300), 0);
    let prev = -Infinity;
    for (const p of PS) {
      const q = c.quantile(p);
      assert.ok(Number.isInteger(q) && q >= 0, `q=${q}`);
      assert.ok(q >= prev);
      prev = q;
      // quantile is the smallest integer with cdf >= p
      assert.ok(c.cdf(q) >= p - 1e-12, `mu=${mu} p=${p}`);
      if (q > 0) assert.ok(c.cdf(q - 1) < p + 1e-12);
    }
    // step function: constant between integers
    assert.equal(c.cdf(3), c.cdf(3.99));
    assert.ok(c.mean >= 0);
  }
});

test('count mean: E[max(0, round(Y))]', () => {
  const base = new NormalStep(0, 1);
  const c = new CountStep(base);
  // Σ_{k≥1} (1 − Φ(k − ½))
  let e = 0;
  for (let k = 1; k < 40; k++) e += 1 - base.cdf(k - 0.5);
  assert.ok(Math.abs(c.mean - e) < 1e-12);
  assert.equal(new CountStep(new NormalStep(1000, 5)).mean, 1000);
  const wide = new CountStep(new NormalStep(1e5, 1e5));
  assert.ok(wide.mean > 1e5 && wide.mean < 1.1e5, `${wide.mean}`);
});

test('count distribution: idempotent, paths integer and non-negative, seeded', () => {
  const f = naive.fit([0, 1, 0, 2, 1, 0, 1], { period: 1 }).forecast(4);
  const c = toCountDistribution(f);
  const cc = toCountDistribution(c);
  for (let k = 0; k < 4; k++) {
    for (const p of PS) assert.equal(cc.steps[k].quantile(p), c.steps[k].quantile(p));
    assert.ok(c.mean[k] >= 1);
  }
  const paths = c.samplePaths(200, 3);
  assert.deepEqual(paths, c.samplePaths(200, 3));
  for (const p of paths) for (const v of p) assert.ok(Number.isInteger(v) && v >= 0);
});
