import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { CountStep, DemandFloorStep, toCountDistribution, withDemandFloor } from '../../../src/engine/distributions/count';
import { HurdleStep, IntegerSizeStep } from '../../../src/engine/models/croston-distribution';
import { forecastSeries } from '../../../src/engine';
import { COUNT_DEMAND_FLOOR, COUNT_POOL } from '../../../src/engine/registry';
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
  assert.ok(Math.abs(new CountStep(new NormalStep(1000, 5)).mean - 1000) < 1e-9);
  // far from 0: the continuous law's own mean, not the base's \`mean\` (for a model in logs, its median)
  const logUniform = { mean: 10, quantile: (p: number) => 10 * Math.exp(0.5 * (p - 0.5)), cdf: (x: number) => Math.min(1, Math.max(0, Math.log(x / 10) / 0.5 + 0.5)) };
  assert.ok(Math.abs(new CountStep(logUniform).mean - 10 * (Math.exp(0.25) - Math.exp(-0.25)) / 0.5) < 1e-3);
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

test('demand floor: a count law gets at least the chance of a positive value, the mass moved from 0 to 1', () => {
  const size = new IntegerSizeStep(3, 4);
  const low = new HurdleStep(0.01, size);
  const f = new DemandFloorStep(low, 0.03);
  assert.ok(Math.abs(1 - f.cdf(0) - 0.03) < 1e-15);
  assert.ok(Math.abs(f.cdf(1) - low.cdf(1)) < 1e-15, 'above 0 the cdf is the base law\'s');
  assert.ok(Math.abs(f.mean - (low.mean + 0.02)) < 1e-15, 'the mean rises by the mass moved');
  assert.equal(f.quantile(0.97), 0);
  assert.equal(f.quantile(0.975), 1, 'the 95% interval now reaches one unit');
  assert.equal(f.quantile(0.9999), Math.max(1, low.quantile(0.9999)));
  // a law that already reaches the chance is unchanged
  const high = new HurdleStep(0.2, size);
  const g = new DemandFloorStep(high, 0.03);
  assert.equal(g.moved, 0);
  for (const p of PS) assert.equal(g.quantile(p), high.quantile(p));
  assert.equal(g.mean, high.mean);
  // no demand at all: a 3% chance of one unit
  const none = new DemandFloorStep(new CountStep(new NormalStep(0, 0)), 0.03);
  assert.ok(Math.abs(none.mean - 0.03) < 1e-15);
  assert.equal(none.quantile(0.5), 0);
  assert.equal(none.quantile(0.99), 1);
});

test('demand floor: seeded paths whose marginals are the floored laws', () => {
  const y = [0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  const pool = forecastSeries(y, { period: 1, kind: 'count' }, { horizon: 3, model: COUNT_POOL, confidence: false });
  const floored = withDemandFloor(pool.distribution, 0.03);
  assert.ok(pool.distribution.steps.every((s) => 1 - s.cdf(0) < 0.03), 'the fixture starts under the floor');
  const n = 40000;
  const paths = floored.samplePaths(n, 9);
  assert.deepEqual(paths.slice(0, 50), floored.samplePaths(n, 9).slice(0, 50));
  for (let k = 0; k < 3; k++) {
    const positive = paths.filter((p) => p[k] >= 1).length / n;
    assert.ok(Math.abs(positive - 0.03) < 0.004, `step ${k + 1}: ${positive}`);
  }
  // a forecast that already reaches the chance comes back as it is
  const busy = forecastSeries([0, 2, 0, 1, 3, 0, 1, 0, 2, 1, 0, 4], { period: 1, kind: 'count' }, { horizon: 3, model: COUNT_POOL, confidence: false });
  assert.equal(withDemandFloor(busy.distribution, 0.03), busy.distribution);
});

test('count-pool: the pool with the demand floor on count data, unchanged on continuous data', () => {
  const y = [0, 1, 0, 0, 2, ...new Array<number>(40).fill(0)];
  const pool = forecastSeries(y, { period: 12, kind: 'count' }, { horizon: 6, model: COUNT_POOL, confidence: false });
  const floored = forecastSeries(y, { period: 12, kind: 'count' }, { horizon: 6, model: 'count-pool', confidence: false });
  const auto = forecastSeries(y, { period: 12, kind: 'count' }, { horizon: 6, confidence: false });
  assert.equal(auto.requestedModel, 'count-pool');
  assert.match(auto.model, /^count-pool\(SES rate, TSB, TSB, TSB\)$/);
  for (let k = 0; k < 6; k++) {
    assert.ok(1 - floored.distribution.steps[k].cdf(0) >= COUNT_DEMAND_FLOOR - 1e-12);
    assert.ok(floored.distribution.mean[k] >= pool.distribution.mean[k]);
    assert.equal(auto.distribution.steps[k].quantile(0.975), floored.distribution.steps[k].quantile(0.975));
  }
  assert.ok(pool.distribution.steps.some((s) => s.quantile(0.975) === 0), 'the pool alone puts the 95% interval at 0');
  assert.ok(floored.distribution.steps.every((s) => s.quantile(0.975) >= 1));
  const continuous = forecastSeries(y, { period: 12 }, { horizon: 6, model: 'count-pool', confidence: false });
  const plain = forecastSeries(y, { period: 12 }, { horizon: 6, model: COUNT_POOL, confidence: false });
  assert.deepEqual(Array.from(continuous.distribution.mean), Array.from(plain.distribution.mean));
  // a history of zeros stays in its plausibility band: no demand forecast where none was ever seen
  const zeros = forecastSeries(new Array(30).fill(0), { period: 12, kind: 'count' }, { horizon: 6, confidence: false });
  assert.ok(zeros.distribution.steps.every((s) => s.quantile(0.999) === 0));
});

test('the mean of a wide count law comes from its quantiles, not one cdf call per integer (a cdf can be a bisection), and stays right', () => {
  for (const [mean, sd] of [[3, 2], [1000, 1500], [50_000, 80_000]]) {
    const normal = new NormalStep(mean, sd);
    let cdfCalls = 0;
    const counted = { mean: normal.mean, quantile: (p: number) => normal.quantile(p), cdf: (x: number) => (cdfCalls++, normal.cdf(x)) };
    const step = new CountStep(counted);
    // E[max(0, round(Y))] for Y ~ N(m, s²): s φ(m/s) + m Φ(m/s), up to the rounding
    const z = mean / sd;
    const exact = (sd * Math.exp((-z * z) / 2)) / Math.sqrt(2 * Math.PI) + mean * new NormalStep(0, 1).cdf(z);
    assert.ok(Math.abs(step.mean - exact) < 1e-3 * sd + 0.01, `N(${mean}, ${sd}²): ${step.mean} against ${exact}`);
    assert.ok(sd < 10 || cdfCalls <= 2, `N(${mean}, ${sd}²): ${cdfCalls} cdf calls`);
  }
});

test('a count forecast computes a step’s mean only when it is read (found by QA: 1,000 steps spent 2 s on unread means)', () => {
  let calls = 0;
  // wide laws (a 1e-13 quantile beyond 100), whose means take the quantile grid
  const steps = Array.from({ length: 1000 }, (_, k) => {
    const base = new NormalStep(50 + k, 40);
    return { mean: base.mean, quantile: (p: number) => (calls++, base.quantile(p)), cdf: (x: number) => (calls++, base.cdf(x)) };
  });
  const pd = toCountDistribution({ model: 'm', mean: Float64Array.from(steps, (s) => s.mean), steps, intervalMethod: 'analytic', samplePaths: () => [] });
  assert.equal(calls, 0, 'nothing computed up front');
  const one = pd.steps[499].mean;
  assert.ok(calls > 0 && calls <= 4100, `one step's mean: ${calls} calls`);
  // the same value as the whole path's, which is computed once when read
  assert.equal(pd.mean[499], one);
  assert.equal(pd.mean, pd.mean);
  assert.ok(Math.abs(one - 549) < 0.05, `mean ${one}`);
});

// found by QA (engine 1.12.0): one wild value made the other demands' sizes fractions the count law rounded to 0
test('counts of about 1 beside one wild value keep demands of at least 1 (the size law too wide to tabulate)', () => {
  const y = Array.from({ length: 24 * 42 }, (_, t) => [0, 1, 2, 0, 0, 3, 1][t % 7]);
  y[500] = 1e15;
  const f = forecastSeries(y, { period: 24, periods: [24, 168], kind: 'count' }, { horizon: 24, seed: 1, confidence: false });
  assert.equal(f.requestedModel, 'count-pool');
  for (const step of f.distribution.steps) {
    // 4 periods in 7 see a demand: the law says so, and each demand is a whole count of at least 1
    assert.ok(1 - step.cdf(0) > 0.3, `P(>0) ${1 - step.cdf(0)}`);
    assert.ok(step.quantile(0.975) >= 1, `97.5% quantile ${step.quantile(0.975)}`);
    assert.ok(Number.isInteger(step.quantile(0.5)));
  }
});
