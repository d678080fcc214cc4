import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { backtest, confidenceScore, MAX_ORIGINS, originsFor } from '../../../src/engine/backtest';
import { randomWalk, toyMean, toyNaive, whiteNoise } from './backtest-toy-families';

test('origins: newest last, spaced by step, bounded, never below the minimum training length', () => {
  assert.deepEqual(originsFor(100, 10, { horizon: 10 }), [80, 85, 90]);
  assert.deepEqual(originsFor(100, 10, { horizon: 10, origins: 2, step: 10 }), [80, 90]);
  assert.equal(originsFor(1000, 10, { horizon: 1, origins: 100 }).length, MAX_ORIGINS);
  assert.deepEqual(originsFor(25, 10, { horizon: 10, origins: 5, step: 5 }), [10, 15]);
  assert.deepEqual(originsFor(12, 10, { horizon: 10 }), []);
});

test('backtest scores each origin; a calibrated model covers about the nominal level', () => {
  const y = randomWalk(400, 1);
  const bt = backtest(toyNaive(), y, { period: 1 }, { horizon: 20, origins: 8, step: 20, level: 0.9 });
  assert.equal(bt.origins.length, 8);
  assert.deepEqual(bt.failures, []);
  assert.ok(bt.coverage > 0.7 && bt.coverage <= 1, `coverage ${bt.coverage}`);
  assert.equal(bt.pinball.length, 5);
  for (const o of bt.origins) {
    assert.equal(o.errors.length, 20);
    assert.ok(Math.abs(o.errors[0] - (y[o.origin] - o.means[0])) < 1e-12);
    assert.ok(o.crps > 0);
  }
});

test('confidence: skill over the baseline, 0 when worse, NaN without origins', () => {
  const y = whiteNoise(300, 3);
  const mean = backtest(toyMean(), y, { period: 1 }, { horizon: 10, origins: 5 });
  const naive = backtest(toyNaive(), y, { period: 1 }, { horizon: 10, origins: 5 });
  const c = confidenceScore(mean, naive);
  assert.ok(c > 0.2 && c < 1, `mean beats naive on white noise: ${c}`);
  assert.equal(confidenceScore(naive, mean), 0);
  const none = backtest(toyNaive(), y.slice(0, 5), { period: 1 }, { horizon: 10 });
  assert.ok(Number.isNaN(confidenceScore(none, naive)));
});

test('a fit that throws is recorded, not raised', () => {
  const failing = { ...toyNaive(), fit: () => { throw new Error('boom'); } };
  const bt = backtest(failing, randomWalk(100, 2), { period: 1 }, { horizon: 5 });
  assert.equal(bt.origins.length, 0);
  assert.equal(bt.failures.length, 3);
  assert.ok(Number.isNaN(bt.crps));
});
