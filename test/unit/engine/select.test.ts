import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { selectByBacktest, selectorFamily } from '../../../src/engine/select';
import { randomWalk, toyMean, toyNaive, whiteNoise } from './backtest-toy-families';

test('selection picks the right model for the data', () => {
  const cands = [{ family: toyMean() }, { family: toyNaive() }];
  const rw = selectByBacktest(cands, randomWalk(300, 8, 3), { period: 1 }, { horizon: 10, origins: 5 });
  assert.equal(rw.scores[rw.best].label, 'toy-naive');
  const wn = selectByBacktest(cands, whiteNoise(300, 8), { period: 1 }, { horizon: 10, origins: 5 });
  assert.equal(wn.scores[wn.best].label, 'toy-mean');
});

test('selector family falls back to the first candidate on short history, with a warning', () => {
  const fam = selectorFamily('auto', [{ family: toyMean() }, { family: toyNaive() }], { origins: 3 });
  const fit = fam.fit(whiteNoise(4, 1), { period: 1 }, { horizon: 10 } as never);
  assert.equal(fit.model, 'toy-mean');
  assert.ok(fit.warnings.length > 0);
  assert.equal(fam.fit(randomWalk(200, 3, 5), { period: 1 }).model, 'toy-naive');
});
