/** A position of the cycle the series is closed at (a shop's Sunday) is forecast as a certain 0 (`closed.ts`). */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { closedPositions } from '../../../src/engine/closed';
import { forecastSeries } from '../../../src/engine/index';
import { Rng } from '../../../src/engine/rng';

const DAILY = { period: 7, periods: [7, 365] };

/** Daily sales with a weekday pattern and noise, 0 on every day whose index is 6 mod 7. */
function shop(n: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  const week = [85, 90, 95, 105, 125, 150, 0];
  return Float64Array.from({ length: n }, (_, t) => (t % 7 === 6 ? 0 : week[t % 7] * Math.exp(0.1 * rng.normal())));
}

test('closed positions: every recent observed value 0 there, the series open elsewhere', () => {
  assert.deepEqual(closedPositions(shop(140, 1), 7), [6]);
  // one Sunday open among the last 8 (day 139 is a Sunday): open
  const reopened = shop(140, 2);
  reopened[139 - 35] = 40;
  assert.deepEqual(closedPositions(reopened, 7), []);
  // missing values do not count; 4 observed zeros suffice
  const sparse = shop(140, 3);
  for (const t of [139 - 7, 139 - 21, 139 - 35, 139 - 49]) sparse[t] = NaN;
  assert.deepEqual(closedPositions(sparse, 7), [6]);
  sparse[139 - 14] = NaN;
  assert.deepEqual(closedPositions(sparse, 7), [], 'three observed zeros are not enough');
  // mostly zeros (intermittent demand), all zeros, no cycle: nothing is "closed"
  const intermittent = Float64Array.from({ length: 140 }, (_, t) => (t % 3 === 0 ? 2 : 0));
  assert.deepEqual(closedPositions(intermittent, 7), []);
  assert.deepEqual(closedPositions(new Float64Array(140), 7), []);
  assert.deepEqual(closedPositions(shop(140, 4), 1), []);
  // only the last 8 cycles are read: an old closure is forgotten
  const old = Float64Array.from({ length: 140 }, (_, t) => (t % 7 === 6 && t < 70 ? 0 : 100));
  assert.deepEqual(closedPositions(old, 7), []);
});

test('counts that are merely low are not closed: the zeros must be unlikely under the quietest open position', () => {
  // 8 days of hourly counts: hours 0-5 always 0; hour 6 alternates 0 and `quiet`; the others 5-20
  const counts = (quiet: number) => Float64Array.from({ length: 8 * 24 }, (_, t) => {
    const hour = t % 24;
    if (hour < 6) return 0;
    if (hour === 6) return Math.floor(t / 24) % 2 === 0 ? 0 : quiet;
    return 5 + (t % 16);
  });
  // hour 6 has mean 0.5 (1 every other day): 8 zeros at that rate are no rarer than e^-4, so the night may just be quiet
  assert.deepEqual(closedPositions(counts(1), 24), []);
  // mean 1 (2 every other day): 8 zeros have chance e^-8 < e^-7; the night is closed
  assert.deepEqual(closedPositions(counts(2), 24), [0, 1, 2, 3, 4, 5]);
  // the same values as non-integers are not counts: zeros are structural
  assert.deepEqual(closedPositions(counts(1).map((v) => (v > 0 ? v + 0.5 : 0)), 24), [0, 1, 2, 3, 4, 5]);
});

// found by QA (engine 1.10.1): the closed Sunday was forecast at 9-18 with 95% upper ends of 70-98
test('a shop closed on Sundays: every Sunday forecast as exactly 0, said in a warning, open days untouched', () => {
  for (const kind of ['continuous', 'count'] as const) {
    const y = shop(365, 5);
    const series = kind === 'count' ? y.map(Math.round) : y;
    const r = forecastSeries(series, { ...DAILY, kind }, { horizon: 28 });
    const paths = r.distribution.samplePaths(50, 1);
    for (let k = 0; k < 28; k++) {
      const s = r.distribution.steps[k];
      if ((365 + k) % 7 === 6) {
        for (const p of [0.001, 0.025, 0.5, 0.975, 0.999]) assert.equal(s.quantile(p), 0, `${kind}, step ${k + 1}, ${p}`);
        assert.equal(s.mean, 0);
        assert.equal(r.distribution.mean[k], 0);
        assert.equal(s.cdf(0), 1);
        assert.equal(s.cdf(-1e-9), 0);
        for (const path of paths) assert.equal(path[k], 0);
      } else {
        assert.ok(s.quantile(0.5) > 50, `${kind}, step ${k + 1}: ${s.quantile(0.5)}`);
        assert.ok(paths.some((path) => path[k] > 0));
      }
    }
    // step 1 is index 365 (1 mod 7): the first Sunday is step 6
    assert.ok(r.warnings.some((w) => w.startsWith('forecast as exactly 0 every 7 steps from step 6:')), r.warnings.join('; '));
  }
  // a series open every day gets no such warning
  const open = shop(365, 6).map((v, t) => (t % 7 === 6 ? 60 + (t % 5) : v));
  assert.ok(!forecastSeries(open, DAILY, { horizon: 28 }).warnings.some((w) => w.startsWith('forecast as exactly 0')));
});
