/**
 * `forecast evaluate`'s per-series scoring: a series a model cannot forecast is scored as failed
 * (Naive2's forecast in its place, the error kept), never stopping the run or hiding a NaN.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { evaluateSeries } from '../../../src/cli/evaluate-series';
import type { BenchmarkSeries } from '../../../src/cli/evaluate-data';

const series = (id: string, train: number[], test: number[]): BenchmarkSeries => ({ id, group: 'yearly', period: 1, horizon: test.length, train, test });

test('a one-value series and one beyond the magnitudes the engine takes are failures with their reason; a normal one is scored', () => {
  const one = evaluateSeries(series('one', [5], [5, 6]), ['auto'], { level: 0.95 });
  assert.equal(one.models[0].fitted, 'failed');
  assert.match(one.models[0].error!, /InsufficientDataError/);
  assert.equal(one.models[0].mase, NaN); // no scale from one value: left out of the means, as for all-zero training parts
  assert.ok(Math.abs(one.smapeNaive2 - 100 / 11) < 1e-12); // the value carried forward: 5 against 5 and 6
  const huge = evaluateSeries(series('huge', [1e300, 2e300, 3e300, 4e300], [5e300, 6e300]), ['auto'], { level: 0.95 });
  assert.equal(huge.models[0].fitted, 'failed');
  assert.match(huge.models[0].error!, /store them in another unit/);
  const ok = evaluateSeries(series('ok', [1, 2, 3, 4, 5, 6, 7, 8], [9, 10]), ['auto'], { level: 0.95 });
  assert.notEqual(ok.models[0].fitted, 'failed');
  assert.ok(Number.isFinite(ok.models[0].mase));
});
