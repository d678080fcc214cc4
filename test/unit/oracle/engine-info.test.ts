/** What the oracle tells the engine about an entity's seasons, and so which `auto` model it gets. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { seasonalInfo } from '../../../src/oracle/engine-info';
import { forecastSeries } from '../../../src/engine/index';
import { Rng } from '../../../src/engine/rng';
import { autoModelName, AUTO_DAILY_MODEL, AUTO_DAILY_SEASONAL_MODEL, AUTO_EXTRA_PERIOD_MODEL, AUTO_LONG_NONSEASONAL_MODEL, AUTO_MODEL, AUTO_MULTI_SEASONAL_MODEL } from '../../../src/engine/registry';
import { periodsFor } from '../../../src/cli/evaluate-series';
import type { EntityRecord } from '../../../src/entities/entity-store';
import type { Frequency } from '../../../src/entities/frequency';

const entity = (frequency: Frequency, seasonLength: number): EntityRecord => ({
  entity: 'x:1', type: 'x', displayName: '', frequency, seasonLength, axes: [], parents: [], createTime: 0, updateTime: 0, incarnation: 'a',
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
  // daily: the weekly season and the year; the seasonal AR at any length (its yearly lags once three years are there), with ETS where the week is strong
  // 1-minute data: the hour (their default season) and the day, which `season_length` (at most 1,000) cannot declare
  assert.deepEqual(seasonalInfo(entity('PT1M', 60)), { period: 60, periods: [60, 1440] });
  assert.deepEqual(seasonalInfo(entity('PT5M', 288)), { period: 288, periods: [288] });
  const daily = seasonalInfo(entity('P1D', 7));
  assert.deepEqual(daily, { period: 7, periods: [7, 365] });
  // this series' week is exact: the AR with ETS (a strong weekly cycle, engine 1.16.0); a weak one keeps the AR alone
  for (const n of [60, 1000, 1200]) assert.equal(autoModelName(series(n), daily), AUTO_DAILY_SEASONAL_MODEL);
  const weak = (n: number) => Float64Array.from({ length: n }, (_, i) => 100 + (i % 7) * 0.2 + 10 * Math.sin(i * 0.37) + 0.1 * i);
  for (const n of [60, 1000, 1200]) assert.equal(autoModelName(weak(n), daily), AUTO_DAILY_MODEL);
  // non-seasonal data: the three-model combination, DOTM + ETS from 50 values
  assert.equal(autoModelName(series(49), { period: 1 }), AUTO_MODEL);
  assert.equal(autoModelName(series(50), { period: 1 }), AUTO_LONG_NONSEASONAL_MODEL);
  // an explicit, different season length is used as given
  assert.deepEqual(seasonalInfo(entity('P1W', 4)), { period: 4, periods: [4] });
  assert.deepEqual(seasonalInfo(entity('P1M', 12)), { period: 12, periods: [12] });
});

test('1-minute data: a day ahead follows the daily cycle (with only the hour, the AR saw the last 10 hours)', () => {
  const info = seasonalInfo(entity('PT1M', 60));
  const rng = new Rng(11);
  const truth = (t: number) => 100 * (1 + 0.5 * Math.sin((2 * Math.PI * t) / 1440));
  const n = 7 * 1440;
  const y = Float64Array.from({ length: n }, (_, t) => truth(t) * Math.exp(0.05 * rng.normal()));
  const r = forecastSeries(y, info, { horizon: 1440 });
  let error = 0;
  let covered = 0;
  for (let k = 0; k < 1440; k++) {
    const s = r.distribution.steps[k];
    error += Math.abs(s.mean - truth(n + k)) / 1440;
    if (truth(n + k) >= s.quantile(0.025) && truth(n + k) <= s.quantile(0.975)) covered++;
  }
  assert.ok(r.model.includes('1440'), r.model);
  assert.ok(error < 5, `mean absolute error ${error} against a cycle of ±50`);
  assert.ok(covered / 1440 >= 0.95, `the 95% interval holds the noise-free cycle at ${covered} of 1440 steps`);
});
