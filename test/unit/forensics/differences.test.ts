/** The leaf-by-leaf comparison forensics reports when a reproduction differs. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { differences } from '../../../src/forensics/differences';

test('identical documents have no differences', () => {
  const f = { distribution: [0.1, 0.9], quantiles: { '0.5': 3 }, model: 'ETS', warnings: [] };
  assert.deepEqual(differences(f, structuredClone(f), 'forecast'), []);
});

test('each differing leaf is reported once with its path and both values; absent leaves are undefined', () => {
  const original = { distribution: [0.1, 0.2, 0.7], quantiles: { '0.5': 3, '0.9': 5 }, model: 'ETS', axes_resolved: { demand: 1 }, warnings: ['a'] };
  const reproduced = { distribution: [0.1, 0.25, 0.65, 0], quantiles: { '0.5': 3 }, model: 'Theta', axes_resolved: { demand: 1, revenue: 2 }, warnings: ['a'], extra: true };
  assert.deepEqual(differences(original, reproduced, 'forecast'), [
    { path: 'forecast.distribution[1]', original: 0.2, reproduced: 0.25 },
    { path: 'forecast.distribution[2]', original: 0.7, reproduced: 0.65 },
    { path: 'forecast.distribution[3]', original: undefined, reproduced: 0 },
    { path: 'forecast.quantiles["0.9"]', original: 5, reproduced: undefined },
    { path: 'forecast.model', original: 'ETS', reproduced: 'Theta' },
    { path: 'forecast.axes_resolved.revenue', original: undefined, reproduced: 2 },
    { path: 'forecast.extra', original: undefined, reproduced: true },
  ]);
});

test('paths from the root of an output document', () => {
  assert.deepEqual(differences({ forecast: { model: 'a' }, descendants: [{ entity: 'x' }], reconciliation: 'ols' }, { forecast: { model: 'b' }, descendants: [{ entity: 'x' }], reconciliation: 'wls_struct' }), [
    { path: 'forecast.model', original: 'a', reproduced: 'b' },
    { path: 'reconciliation', original: 'ols', reproduced: 'wls_struct' },
  ]);
});

test('containers of different kinds differ as a whole; numbers compare exactly', () => {
  assert.deepEqual(differences({ a: [1] }, { a: { 0: 1 } }, 'x'), [{ path: 'x.a', original: [1], reproduced: { 0: 1 } }]);
  assert.deepEqual(differences({ a: 0.1 + 0.2 }, { a: 0.3 }, 'x'), [{ path: 'x.a', original: 0.1 + 0.2, reproduced: 0.3 }]);
  assert.deepEqual(differences({ a: null }, { a: 0 }, 'x'), [{ path: 'x.a', original: null, reproduced: 0 }]);
});
