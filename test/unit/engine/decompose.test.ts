import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { classicalDecompose, seasonalityTest, stableSeasonalityTest } from '../../../src/engine/decompose/classical';
import { Rng } from '../../../src/engine/rng';
import { fixtureJson } from '../../helpers/files';

const fx = fixtureJson('r/stl-decompose.json');

function close(a: ArrayLike<number>, e: (number | null)[], tol: number, label: string): void {
  assert.equal(a.length, e.length, label);
  for (let i = 0; i < e.length; i++) {
    if (e[i] === null) assert.ok(Number.isNaN(a[i]), `${label}[${i}] should be NaN`);
    else assert.ok(Math.abs(a[i] - e[i]!) <= tol * Math.max(1, Math.abs(e[i]!)), `${label}[${i}]: ${a[i]} vs ${e[i]}`);
  }
}

test('classical decomposition matches R decompose (tolerance 1e-12 relative)', () => {
  const m = classicalDecompose(fx.y, 12, 'multiplicative');
  close(m.figure, fx.multiplicative.figure, 1e-12, 'mult figure');
  close(m.trend, fx.multiplicative.trend, 1e-12, 'mult trend');
  close(m.seasonal, fx.multiplicative.seasonal, 1e-12, 'mult seasonal');
  const a = classicalDecompose(fx.y, 12, 'additive');
  close(a.figure, fx.additive.figure, 1e-12, 'add figure');
  const o = classicalDecompose(fx.y_odd, 7, 'additive');
  close(o.figure, fx.additive_odd.figure, 1e-12, 'odd figure');
  close(o.trend, fx.additive_odd.trend, 1e-12, 'odd trend');
});

test('seasonality test: AirPassengers seasonal, white-ish noise and constants not', () => {
  assert.equal(seasonalityTest(fx.y, 12, 'm4'), true);
  assert.equal(seasonalityTest(fx.y, 12, 'r'), true);
  const lin = Array.from({ length: 60 }, (_, i) => i);
  assert.equal(seasonalityTest(lin, 12), false);
  assert.equal(seasonalityTest(new Array(60).fill(3), 12), false);
  assert.equal(seasonalityTest(fx.y.slice(0, 30), 12, 'm4'), false); // n < 3m
  assert.equal(seasonalityTest(fx.y, 1), false);
});

test('decomposition with gaps stays finite in the figure', () => {
  const y = fx.y.slice();
  y[30] = NaN;
  const m = classicalDecompose(y, 12);
  assert.ok(m.figure.every(Number.isFinite));
  assert.throws(() => classicalDecompose([1, 2, 3], 12), RangeError);
});

/** n hours of 100 + amp·sin(2πt/24) plus AR(1) noise (φ, innovation sd), from a seeded PRNG. */
function hourly(n: number, amp: number, phi: number, sd: number, seed: number): number[] {
  const rng = new Rng(seed);
  let e = 0;
  return Array.from({ length: n }, (_, t) => {
    e = phi * e + sd * rng.normal();
    return 100 + amp * Math.sin((2 * Math.PI * t) / 24) + e;
  });
}

test('seasonality test (r): a daily cycle in 3 to 4 days of hours is found', () => {
  // The autocorrelation test alone refuses every one of these: r_24 is at most (n − 24)/n.
  for (const n of [72, 80, 90, 95]) {
    for (let seed = 1; seed <= 5; seed++) {
      const y = hourly(n, 20, 0.6, 5, seed);
      assert.equal(seasonalityTest(y, 24, 'r'), true, `n ${n} seed ${seed}`);
      assert.equal(stableSeasonalityTest(y, 24), true, `F-test n ${n} seed ${seed}`);
    }
  }
  const sine = Array.from({ length: 72 }, (_, t) => 100 + 20 * Math.sin((2 * Math.PI * t) / 24));
  assert.equal(seasonalityTest(sine, 24, 'r'), true); // no scatter left at all
  // the M4 form stays the published one (Naive2's OWA depends on it)
  assert.equal(seasonalityTest(hourly(72, 20, 0.6, 5, 1), 24, 'm4'), false);
});

test('stable-seasonality F-test: rarely fires on 3 to 4 days of noise, walks and trends', () => {
  // a 0.1% test on independent noise; persistent series (AR(0.9), random walks) leave a wavy
  // remainder that it mistakes for a cycle now and then (about 5% of series)
  const count = (make: (seed: number) => number[]): number => {
    let fired = 0;
    for (let seed = 1; seed <= 100; seed++) if (stableSeasonalityTest(make(seed), 24)) fired++;
    return fired;
  };
  assert.ok(count((s) => hourly(72, 0, 0, 5, s)) <= 1, 'white noise');
  assert.ok(count((s) => hourly(84, 0, 0.5, 5, s)) <= 2, 'AR(0.5)');
  assert.ok(count((s) => hourly(90, 0, 0.6, 5, s).map((v, t) => v + 0.5 * t)) <= 5, 'trend');
  assert.ok(count((s) => hourly(90, 0, 0.9, 3, s)) <= 8, 'AR(0.9)');
  assert.ok(count((s) => hourly(80, 0, 1, 2, s)) <= 8, 'random walk');
  // it needs two detrended values per position; constant series and m < 2 never
  assert.equal(stableSeasonalityTest(hourly(71, 20, 0.6, 5, 1), 24), false);
  assert.equal(stableSeasonalityTest(new Array(80).fill(3), 24), false);
  assert.equal(stableSeasonalityTest(hourly(80, 20, 0.6, 5, 1), 1), false);
});
