import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ets } from '../../../src/engine/models/ets/index';
import { Rng } from '../../../src/engine/rng';

test('ets refit keeps the chosen structure (no re-selection) and re-estimates parameters', () => {
  const rng = new Rng(5);
  const y = Float64Array.from({ length: 120 }, (_, i) => 50 + 0.3 * i + [0, 4, 8, 4, 0, -6, -10][i % 7] + rng.normal());
  const chosen = ets.fit(y, { period: 7 });
  assert.ok(chosen.refit, 'an automatically selected ETS model offers a refit family');
  const again = chosen.refit.fit(y.subarray(0, 100), { period: 7 });
  assert.equal(again.model, chosen.model);
  assert.notDeepEqual(again.params, chosen.params);
  // a structure the data would not pick on its own is still kept by refit
  const forced = ets.fit(y, { period: 7 }, { model: 'ANN' });
  const refitted = forced.refit!.fit(y, { period: 7 });
  assert.equal(refitted.model, 'ETS(A,N,N)');
  const damped = ets.fit(y, { period: 7 }, { error: 'A', trend: 'A', damped: true, season: 'A' });
  assert.equal(damped.refit!.fit(y.subarray(0, 90), { period: 7 }).model, 'ETS(A,Ad,A)');
});
