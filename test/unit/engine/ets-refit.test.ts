import { test } from '@jest/globals';
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

test('ets refit starts from the chosen optimum: deterministic, close to a cold fit, cold when the start does not apply', () => {
  const rng = new Rng(9);
  const y = Float64Array.from({ length: 400 }, (_, i) => 200 + 0.05 * i + [0, -10, -5, 0, 15, 40, 30][i % 7] + 8 * rng.normal());
  const chosen = ets.fit(y, { period: 7 }, { maxEvaluations: 300 });
  const m = /^ETS\(([AM]),([NAM])(d?),([NAM])\)$/.exec(chosen.model)!;
  const structure = { error: m[1] as 'A' | 'M', trend: m[2] as 'N' | 'A' | 'M', damped: m[3] === 'd', season: m[4] as 'N' | 'A' | 'M', maxEvaluations: 300 };
  for (const t of [393, 386, 379]) {
    const warm = chosen.refit!.fit(y.slice(0, t), { period: 7 });
    const again = chosen.refit!.fit(y.slice(0, t), { period: 7 });
    assert.deepEqual(again.params, warm.params, 'same data, same refit');
    const cold = ets.fit(y.slice(0, t), { period: 7 }, structure);
    assert.equal(warm.model, cold.model);
    assert.ok((warm.loglik as number) > (cold.loglik as number) - 1, `origin ${t}: warm ${warm.loglik} vs cold ${cold.loglik}`);
  }
  // a refit on too little data for the warm start's layout (seasonality dropped) still fits
  const short = chosen.refit!.fit(y.slice(0, 6), { period: 7 });
  assert.ok(Number.isFinite(short.forecast(3).steps[0].mean));
});
