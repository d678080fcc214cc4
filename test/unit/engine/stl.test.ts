import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { stl } from '../../../src/engine/decompose/stl';
import { mstl } from '../../../src/engine/decompose/mstl';
import { fixtureJson } from '../../helpers/files';

const read = (f: string) => fixtureJson(`r/${f}`);

function close(a: ArrayLike<number>, e: number[], tol: number, label: string): void {
  assert.equal(a.length, e.length, label);
  let worst = 0;
  for (let i = 0; i < e.length; i++) worst = Math.max(worst, Math.abs(a[i] - e[i]) / Math.max(1, Math.abs(e[i])));
  assert.ok(worst <= tol, `${label}: max relative error ${worst}`);
}

test('stl matches R stl (periodic, numeric windows, robust) to 1e-10', () => {
  for (const c of read('stl-stl.json')) {
    const r = stl(c.y, c.period, { sWindow: c.s_window, robust: c.robust });
    const label = `period ${c.period} window ${c.s_window} robust ${c.robust}`;
    close(r.seasonal, c.seasonal, 1e-10, `${label} seasonal`);
    close(r.trend, c.trend, 1e-10, `${label} trend`);
    close(r.remainder, c.remainder, 1e-10, `${label} remainder`);
  }
});

test('mstl matches R mstl on taylor[1:2016] with periods 48, 336 to 1e-9', () => {
  const c = read('stl-mstl.json');
  const r = mstl(c.y, c.periods);
  assert.deepEqual(r.periods, [48, 336]);
  close(r.trend, c.trend, 1e-9, 'trend');
  close(r.seasonals[0], c.seasonal48, 1e-9, 'seasonal48');
  close(r.seasonals[1], c.seasonal336, 1e-9, 'seasonal336');
  close(r.remainder, c.remainder, 1e-9, 'remainder');
});

test('stl/mstl edge cases: gaps, too short, no usable period', () => {
  const y = Array.from({ length: 40 }, (_, i) => Math.sin((2 * Math.PI * i) / 4) + i / 10);
  y[7] = NaN;
  const r = stl(y, 4);
  assert.ok(r.seasonal.every(Number.isFinite) && r.trend.every(Number.isFinite));
  assert.throws(() => stl([1, 2, 3, 4, 5, 6, 7, 8], 4), RangeError);
  const m = mstl([1, 2, 3, 4, 5], [24, 168]);
  assert.deepEqual(m.periods, []);
  assert.deepEqual(Array.from(m.adjusted), [1, 2, 3, 4, 5]);
});
