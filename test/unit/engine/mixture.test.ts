import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { MixtureStep } from '../../../src/engine/distributions/mixture-step';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { EmpiricalStep } from '../../../src/engine/distributions/empirical-step';
import { CountStep } from '../../../src/engine/distributions/count';

const PS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999];

test('mixture of one component is that component', () => {
  const n = new NormalStep(3, 2);
  const m = new MixtureStep([n]);
  assert.equal(m.mean, 3);
  for (const p of PS) assert.ok(Math.abs(m.quantile(p) - n.quantile(p)) < 1e-9, `p=${p}`);
});

test('weighted normals: mean, cdf∘quantile ≈ id, monotone quantiles', () => {
  const m = new MixtureStep([new NormalStep(0, 1), new NormalStep(10, 3)], [3, 1]);
  assert.ok(Math.abs(m.mean - 2.5) < 1e-12);
  let prev = -Infinity;
  for (const p of PS) {
    const q = m.quantile(p);
    assert.ok(q >= prev, 'monotone');
    prev = q;
    assert.ok(Math.abs(m.cdf(q) - p) < 1e-9, `p=${p}: cdf(q)=${m.cdf(q)}`);
  }
  assert.ok(Math.abs(m.cdf(0) - (0.75 * 0.5 + 0.25 * new NormalStep(10, 3).cdf(0))) < 1e-15);
});

test('mixtures of step (count) components give the smallest x with cdf ≥ p', () => {
  const a = new CountStep(new NormalStep(2, 0));
  const b = new CountStep(new NormalStep(5, 0));
  const m = new MixtureStep([a, b]);
  assert.equal(m.quantile(0.3), 2);
  assert.ok(Math.abs(m.quantile(0.7) - 5) < 1e-9);
  assert.ok(m.cdf(m.quantile(0.5)) >= 0.5);
  const e = new MixtureStep([new EmpiricalStep([1, 2, 3]), new NormalStep(2, 1)], [1, 1]);
  for (const p of PS) assert.ok(Math.abs(e.cdf(e.quantile(p)) - p) < 1e-9);
});

test('bad input is a RangeError', () => {
  assert.throws(() => new MixtureStep([]), RangeError);
  assert.throws(() => new MixtureStep([new NormalStep(0, 1)], [1, 2]), RangeError);
  assert.throws(() => new MixtureStep([new NormalStep(0, 1)], [-1]), RangeError);
  assert.throws(() => new MixtureStep([new NormalStep(0, 1)], [0]), RangeError);
});
