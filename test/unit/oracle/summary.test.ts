import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { defaultThresholds, summariseStep } from '../../../src/oracle/summary';
import type { StepDistribution } from '../../../src/engine/types';

/** Poisson(1) on 0, 1, 2, … as a step distribution (a count law for the summary's tests). */
class PoissonOne implements StepDistribution {
  readonly mean = 1;
  private readonly cum: number[] = [];

  constructor() {
    let p = Math.exp(-1);
    let c = 0;
    for (let k = 0; k < 40; k++) {
      c += p;
      this.cum.push(c);
      p /= k + 1;
    }
  }

  cdf(x: number): number {
    return x < 0 ? 0 : this.cum[Math.min(39, Math.floor(x))];
  }

  quantile(q: number): number {
    const k = this.cum.findIndex((c) => c >= q);
    return k < 0 ? 39 : k;
  }
}

test('default thresholds: evenly spaced on a continuous axis, from 0 up for a certain 0', () => {
  assert.deepEqual(defaultThresholds(10, 18), [10, 11, 12, 13, 14, 15, 16, 17, 18]);
  assert.deepEqual(defaultThresholds(0, 0), Array.from({ length: 9 }, (_, i) => (0.1 * i) / 8));
  const around = defaultThresholds(5, 5);
  assert.ok(around[0] < 5 && around[8] > 5);
});

test('default thresholds stay within the bounds the law was censored to; without bounds, or where they cannot bind, nothing moves', () => {
  const spaced = (lo: number, hi: number) => Array.from({ length: 9 }, (_, i) => lo + ((hi - lo) * i) / 8);
  // a series flat at its upper bound: the widened range slides down, its last bin [100, ∞) the bound's atom (95–105 before)
  assert.deepEqual(defaultThresholds(100, 100, 'continuous', { lower: 0, upper: 100 }), spaced(90, 100));
  assert.deepEqual(defaultThresholds(100, 100, 'continuous', { upper: 100 }), spaced(90, 100));
  // flat at a lower bound: slides up
  assert.deepEqual(defaultThresholds(-50, -50, 'continuous', { lower: -50, upper: -10 }), spaced(-50, -45));
  // bounds narrower than the widened range: the bounds' own range
  assert.deepEqual(defaultThresholds(1, 1, 'continuous', { lower: 0.99, upper: 1.01 }), spaced(0.99, 1.01));
  // a certain 0 under an upper bound of 0.05 (0–0.1 before)
  assert.deepEqual(defaultThresholds(0, 0, 'continuous', { lower: 0, upper: 0.05 }), spaced(0, 0.05));
  // bounds that cannot bind, and a law that is not degenerate: the unbounded thresholds
  assert.deepEqual(defaultThresholds(5, 5, 'continuous', { lower: 0, upper: 100 }), defaultThresholds(5, 5));
  assert.deepEqual(defaultThresholds(10, 100, 'continuous', { lower: 0, upper: 100 }), defaultThresholds(10, 100));
  // counts: the consecutive run slides down to end on the upper bound (13–21 before, one bin always empty)
  assert.deepEqual(defaultThresholds(13, 20, 'count', { upper: 20 }), [12, 13, 14, 15, 16, 17, 18, 19, 20]);
  // fewer than 10 counts between the bounds: one threshold per count above the lower bound (1–9 before)
  assert.deepEqual(defaultThresholds(0, 4, 'count', { lower: 0, upper: 4 }), [1, 2, 3, 4]);
  assert.deepEqual(defaultThresholds(5, 8, 'count', { lower: 5, upper: 8 }), [6, 7, 8]);
  // never at or below the lower bound: the first bin is the chance of the bound
  assert.deepEqual(defaultThresholds(5, 9, 'count', { lower: 5 }), [6, 7, 8, 9, 10, 11, 12, 13, 14]);
  // a wide range: spaced as without bounds
  assert.deepEqual(defaultThresholds(12, 95, 'count', { lower: 0, upper: 100 }), defaultThresholds(12, 95, 'count'));
  // and summariseStep passes them: a Poisson(1) law on an axis bounded to [0, 4] gets 1–4
  assert.deepEqual(summariseStep(new PoissonOne(), 1, undefined, [0.5], 'count', { lower: 0, upper: 4 }).thresholds, [1, 2, 3, 4]);
});

test('default thresholds on a count axis are whole numbers from 1, each bin holding whole outcomes', () => {
  // an intermittent series (QA: [0, 0.125, …, 1] before, eight of ten bins always empty)
  assert.deepEqual(defaultThresholds(0, 1, 'count'), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(defaultThresholds(0, 0, 'count'), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(defaultThresholds(3.2, 6.7, 'count'), [3, 4, 5, 6, 7, 8, 9, 10, 11]);
  const wide = defaultThresholds(12, 95, 'count');
  assert.equal(wide.length, 9);
  assert.deepEqual([wide[0], wide[8]], [12, 95]);
  assert.ok(wide.every((x, i) => Number.isInteger(x) && (i === 0 || x > wide[i - 1])));
  // a Poisson(1)-like law: the bins are its probabilities of 0, 1, 2, …
  const law = new PoissonOne();
  const s = summariseStep(law, 1, undefined, [0.5], 'count');
  assert.deepEqual(s.thresholds, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.ok(Math.abs(s.distribution[0] - Math.exp(-1)) < 1e-12 && Math.abs(s.distribution[1] - Math.exp(-1)) < 1e-12);
  assert.ok(Math.abs(s.distribution.reduce((a, b) => a + b, 0) - 1) < 1e-12);
});
