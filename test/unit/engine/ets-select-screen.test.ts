import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { DEFAULT_BOUNDS } from '../../../src/engine/models/ets/admissible';
import { buildProblem, informationCriterion } from '../../../src/engine/models/ets/fit-model';
import { fitEtsModel, firstRun, optimise, polish, refineFrom } from '../../../src/engine/models/ets/optimise';
import { candidates, selectEts } from '../../../src/engine/models/ets/select';
import { Rng } from '../../../src/engine/rng';

const control = { bounds: DEFAULT_BOUNDS, maxEvaluations: 300, tolerance: Math.sqrt(2.220446049250313e-16), restarts: 3 };
const settings = { allowMultiplicativeTrend: false, additiveOnly: false, restrict: true, positive: true };

function seasonal(n: number, seed: number): Float64Array {
  const rng = new Rng(seed);
  return Float64Array.from({ length: n }, (_, i) => 200 + 0.05 * i + [0, -10, -5, 0, 15, 40, 30][i % 7] + 8 * rng.normal());
}

test('screening leaves out only non-seasonal candidates whose full fit could not have won', () => {
  const y = seasonal(500, 4);
  const specs = candidates({ error: 'Z', trend: 'Z', season: 'Z', damped: undefined }, settings);
  const { best, evaluations } = selectEts(y, y, 7, specs, {}, control, 'aicc', true);
  assert.ok(best);
  let fullEvaluations = 0;
  for (const spec of specs.filter((s) => s.season === 'N')) {
    const fit = fitEtsModel(y, y, 7, spec, {}, control);
    assert.ok(fit);
    fullEvaluations += fit.evaluations;
    assert.ok(fit.aicc > best.aicc + 10, `${fit.name}: ${fit.aicc} vs chosen ${best.name} ${best.aicc}`);
  }
  assert.ok(evaluations < fullEvaluations + 5000, `${evaluations} evaluations`);
});

test('optimise = polish(firstRun), bit for bit', () => {
  const y = seasonal(120, 2);
  for (const spec of [{ error: 'A' as const, trend: 'A' as const, season: 'N' as const, damped: true }, { error: 'M' as const, trend: 'N' as const, season: 'M' as const, damped: false }]) {
    const p = buildProblem(y, y, 7, spec, {}, DEFAULT_BOUNDS)!;
    const a = optimise(p, p.x0, p.x0.length, 300, control.tolerance, 3);
    const b = polish(p, firstRun(p, p.x0, p.x0.length, 300, control.tolerance), p.x0.length, 300, control.tolerance, 3);
    assert.deepEqual(Array.from(b.x), Array.from(a.x));
    assert.equal(b.value, a.value);
    assert.equal(b.evaluations, a.evaluations);
  }
});

test('refineFrom improves on a nearby optimum and refuses a start of the wrong layout', () => {
  const y = seasonal(300, 6);
  const spec = { error: 'A' as const, trend: 'A' as const, season: 'A' as const, damped: false };
  const full = fitEtsModel(y, y, 7, spec, {}, control)!;
  const prefix = y.slice(0, 290);
  const p = buildProblem(prefix, prefix, 7, spec, {}, DEFAULT_BOUNDS)!;
  const r = refineFrom(p, full.x, 300, control.tolerance)!;
  assert.ok(r.value <= p.objective(full.x));
  assert.ok(informationCriterion(r.value, p.npar, p.nobs, 'aicc') < informationCriterion(p.objective(p.x0), p.npar, p.nobs, 'aicc'));
  assert.equal(refineFrom(p, full.x.subarray(1), 300, control.tolerance), null);
});
