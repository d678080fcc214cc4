/**
 * ARIMA building blocks: unit-root tests against R (urca::ur.kpss, forecast::ndiffs,
 * seas.heuristic, nsdiffs; fixture arima-tests.json, tolerance 1e-10), the fast
 * (Chandrasekhar) filter against the full Kalman filter, the stationarity transform
 * and MA root inversion.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { kpssStatistic, ndiffs, nsdiffs } from '../../../src/engine/models/arima/unit-root';
import { seasonalStrength } from '../../../src/engine/models/arima/stl-strength';
import { ArimaSS } from '../../../src/engine/models/arima/state-space';
import { invTrans, maInvert, minRoot, undoPars } from '../../../src/engine/models/arima/transform';
import { fixtureJson } from '../../helpers/files';

test('KPSS, ndiffs, seasonal strength and nsdiffs match R on 41 M3 series', () => {
  const cases: { id: string; period: number; y: number[]; kpss: number; ndiffs: number; strength: number; nsdiffs: number }[] = fixtureJson('r/arima-tests.json');
  for (const c of cases) {
    const x = c.y;
    assert.ok(Math.abs(kpssStatistic(x) / c.kpss - 1) < 1e-10, `${c.id} kpss`);
    assert.ok(Math.abs(seasonalStrength(x, c.period) - c.strength) < 1e-10, `${c.id} strength`);
    assert.equal(ndiffs(x), c.ndiffs, `${c.id} ndiffs`);
    assert.equal(nsdiffs(x, c.period), c.nsdiffs, `${c.id} nsdiffs`);
  }
});

test('fast ARMA filter gives the Kalman filter likelihood', () => {
  const y = Float64Array.from({ length: 80 }, (_, i) => Math.sin(i) + 0.3 * Math.cos(3 * i) + 0.01 * i);
  const models: [number[], number[]][] = [
    [[0.5], []],
    [[], [0.4]],
    [[0.5], [0.4]],
    [[0.3, 0.2], [0.4, 0.1]],
    [[0, 0, 0, 0.6, -0.3], [0, 0, 0, -0.8]],
  ];
  for (const [phi, theta] of models) {
    const full = new ArimaSS(phi.length, theta.length, []);
    full.reset(phi, theta);
    const a = new Float64Array(3);
    full.filter(y, a);
    const fast = new ArimaSS(phi.length, theta.length, []);
    const b = new Float64Array(3);
    assert.ok(fast.filterArma(y, phi, theta, b));
    assert.ok(Math.abs(a[0] / b[0] - 1) < 1e-10 && Math.abs(a[1] - b[1]) < 1e-9 && a[2] === b[2], `${phi} ${theta}`);
  }
});

test('PACF transform round-trips and yields stationary AR; maInvert reflects roots', () => {
  const spec = { p: 3, q: 0, P: 1, Q: 0, m: 4 };
  const raw = Float64Array.from([0.9, -1.7, 2.5, 0.4]);
  const coef = undoPars(raw, spec);
  assert.ok(minRoot(coef, 0, 3, -1) > 1);
  const back = invTrans(coef, spec);
  for (let i = 0; i < 4; i++) assert.ok(Math.abs(back[i] - raw[i]) < 1e-9);
  const ma = Float64Array.from([2.5]);
  maInvert(ma, 0, 1);
  assert.ok(Math.abs(ma[0] - 0.4) < 1e-15);
  const ma2 = Float64Array.from([-2.5, 1]); // roots 0.5 (inside) and 2
  maInvert(ma2, 0, 2);
  assert.ok(minRoot(ma2, 0, 2, 1) >= 1 - 1e-12);
});
