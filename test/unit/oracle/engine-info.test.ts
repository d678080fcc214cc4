/** What the oracle tells the engine about an entity's seasons, and so which `auto` model it gets. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { seasonalInfo } from '../../../src/oracle/engine-info';
import { autoModelName, AUTO_DAILY_MODEL, AUTO_EXTRA_PERIOD_MODEL, AUTO_LONG_NONSEASONAL_MODEL, AUTO_MODEL, AUTO_MULTI_SEASONAL_MODEL } from '../../../src/engine/registry';
import { periodsFor } from '../../../src/cli/evaluate-series';
import type { EntityRecord } from '../../../src/entities/entity-store';
import type { Frequency } from '../../../src/entities/frequency';

const entity = (frequency: Frequency, seasonLength: number): EntityRecord => ({
  entity: 'x:1', type: 'x', displayName: '', frequency, seasonLength, axes: [], parents: [], createTime: 0, updateTime: 0,
});
const series = (n: number) => Float64Array.from({ length: n }, (_, i) => 100 + (i % 7) + 0.1 * i);

test('weekly, hourly and daily entities get the seasons the benchmark measured auto with', () => {
  const weekly = seasonalInfo(entity('P1W', 52));
  assert.deepEqual(weekly, { period: 1, periods: [52] });
  // the same as `forecast evaluate` gives an M4 weekly series, at any length
  for (const n of [80, 400]) {
    assert.deepEqual(periodsFor({ id: 'W1', group: 'weekly', period: 1, horizon: 13, train: Array.from(series(n)), test: [] } as never), weekly.periods);
    assert.equal(autoModelName(series(n), weekly), AUTO_EXTRA_PERIOD_MODEL);
  }
  const hourly = seasonalInfo(entity('PT1H', 24));
  assert.deepEqual(hourly, { period: 24, periods: [24, 168] });
  assert.equal(autoModelName(series(24 * 7 * 4), hourly), AUTO_MULTI_SEASONAL_MODEL);
  // daily: the weekly season and the year; the seasonal AR at any length (its yearly lags once three years are there)
  const daily = seasonalInfo(entity('P1D', 7));
  assert.deepEqual(daily, { period: 7, periods: [7, 365] });
  for (const n of [60, 1000, 1200]) assert.equal(autoModelName(series(n), daily), AUTO_DAILY_MODEL);
  // non-seasonal data: the three-model combination, DOTM + ETS from 50 values
  assert.equal(autoModelName(series(49), { period: 1 }), AUTO_MODEL);
  assert.equal(autoModelName(series(50), { period: 1 }), AUTO_LONG_NONSEASONAL_MODEL);
  // an explicit, different season length is used as given
  assert.deepEqual(seasonalInfo(entity('P1W', 4)), { period: 4, periods: [4] });
  assert.deepEqual(seasonalInfo(entity('P1M', 12)), { period: 12, periods: [12] });
});
