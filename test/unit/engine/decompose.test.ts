import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { classicalDecompose, seasonalityTest } from '../../../src/engine/decompose/classical';
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
