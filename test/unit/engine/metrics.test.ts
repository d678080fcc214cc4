import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { EmpiricalStep } from '../../../src/engine/distributions/empirical-step';
import { aggregateScores, coverage, crps, mase, maseScale, msis, pinball, scaledPinball, smape } from '../../../src/engine/metrics';
import { loadBenchmark, readJsonLines } from '../../../src/cli/evaluate-data';
import { sharedDataFile } from '../../helpers/files';
import { naive2Forecast } from './metrics-naive2-reference';
import { forecastSeries } from '../../../src/engine/index';

/** Benchmark data, found from the repository (not the working directory) and loudly required. */
const data = (relative: string) => sharedDataFile(relative);

test('sMAPE, MASE, MSIS, coverage and pinball on hand-computed values', () => {
  assert.ok(Math.abs(smape([100, 200], [110, 180]) - (200 * 10 / 210 + 200 * 20 / 380) / 2) < 1e-12);
  assert.equal(smape([0], [0]), 0);
  assert.equal(maseScale([1, 2, 4, 7], 1), 2);
  assert.equal(maseScale([1, 2, 4, 7, 5], 2), (3 + 5 + 1) / 3);
  assert.equal(maseScale([1, NaN, 4, 7], 1), 3);
  assert.equal(mase([10, 12], [11, 10], 2), 0.75);
  // width 2, one miss below by 1: (2 + 40·1 + 2) / 2 / scale 2
  assert.equal(msis([0, -2], [-1, -1], [1, 1], 2), (2 + 42) / 2 / 2);
  assert.equal(coverage([0, -2, 1], [-1, -1, -1], [1, 1, 1]), 2 / 3);
  assert.equal(pinball(3, 1, 0.9), 1.8);
  assert.ok(Math.abs(pinball(1, 3, 0.9) - 0.2) < 1e-15);
  // two steps (the second missing) × two probabilities, scale 2:
  // p = 0.5: q 1 vs y 3 → 1; p = 0.9: q 4 vs y 3 → 0.1; mean 0.55, scaled by 2
  assert.ok(Math.abs(scaledPinball([3, NaN], [[1, 0], [4, 0]], [0.5, 0.9], 2) - 0.275) < 1e-15);
  assert.ok(Number.isNaN(scaledPinball([NaN], [[1]], [0.5], 1)));
});

test('CRPS: exact normal form, numerical form agrees, point mass gives absolute error', () => {
  // CRPS(N(0,1), 0) = 2φ(0) − 1/√π = 0.23369497725510913
  assert.ok(Math.abs(crps(new NormalStep(0, 1), 0) - 0.23369497725510913) < 1e-14);
  assert.equal(crps(new NormalStep(5, 0), 2), 3);
  // the quantile-grid form on a non-Normal wrapper of the same distribution
  const wrapped = { mean: 1, quantile: (p: number) => new NormalStep(1, 2).quantile(p), cdf: () => 0 };
  for (const y of [1, 2.5, -4]) {
    const exact = crps(new NormalStep(1, 2), y);
    assert.ok(Math.abs(crps(wrapped, y) - exact) / exact < 0.01, `y=${y}`);
  }
  const samples = Array.from({ length: 1001 }, (_, i) => i / 1000);
  // CRPS of U(0,1) at 0.5 is 1/12
  assert.ok(Math.abs(crps(new EmpiricalStep(samples), 0.5) - 1 / 12) < 1e-3);
});

test('reproduces the published M3 table from the original forecasts', () => {
  const series = loadBenchmark(data('m3/m3.jsonl'));
  const byId = new Map(series.map((s) => [s.id, s]));
  const totals = new Map<string, { sum: number; n: number }>();
  for (const row of readJsonLines(data('m3/m3-original-forecasts.jsonl.gz')) as {
    method: string;
    id: string;
    forecast: number[];
  }[]) {
    if (!['THETA', 'ForecastPro', 'NAIVE2'].includes(row.method)) continue;
    const s = byId.get(row.id)!;
    const t = totals.get(row.method) ?? { sum: 0, n: 0 };
    t.sum += smape(s.test, row.forecast);
    t.n++;
    totals.set(row.method, t);
  }
  const score = (m: string) => totals.get(m)!.sum / totals.get(m)!.n;
  assert.equal(series.length, 3003, 'every M3 series');
  for (const m of ['THETA', 'ForecastPro', 'NAIVE2']) assert.equal(totals.get(m)!.n, 3003, `${m}: a forecast for every series`);
  assert.equal(score('THETA').toFixed(2), '12.76');
  assert.equal(score('ForecastPro').toFixed(2), '13.06');
  assert.equal(score('NAIVE2').toFixed(2), '14.74');
});

for (const [group, file, count, officialSmape, officialMase, naiveMsis] of [
  ['Weekly', 'm4/m4-weekly.jsonl', 359, 9.161, 2.777, 26.358],
  ['Hourly', 'm4/m4-hourly.jsonl', 414, 18.383, 2.395, 71.245],
] as const) {
  test(`the engine's naive reproduces the official M4 ${group} MSIS of Naive`, () => {
    const scores = loadBenchmark(data(file)).map((s) => {
      const d = forecastSeries(s.train, { period: s.period }, { horizon: s.horizon, model: 'naive', confidence: false, guard: false }).distribution;
      const lo = d.steps.map((st) => st.quantile(0.025));
      const hi = d.steps.map((st) => st.quantile(0.975));
      const v = msis(s.test, lo, hi, maseScale(s.train, s.period));
      return { smape: 0, mase: 0, msis: v, coverage: 0, smapeNaive2: 1, maseNaive2: 1 };
    });
    assert.equal(scores.length, count, `every M4 ${group} series`);
    const agg = aggregateScores(scores);
    assert.ok(Math.abs(agg.msis - naiveMsis) < 0.0015, `MSIS ${agg.msis} vs ${naiveMsis}`);
  });

  for (const impl of ['reference', 'engine'] as const) test(`Naive2 (${impl}) reproduces the official M4 ${group} sMAPE and MASE`, () => {
    const scores = loadBenchmark(data(file)).map((s) => {
      const f =
        impl === 'reference'
          ? naive2Forecast(s.train, s.period, s.horizon)
          : forecastSeries(s.train, { period: s.period }, { horizon: s.horizon, model: 'naive2', confidence: false }).distribution.mean;
      const scale = maseScale(s.train, s.period);
      return { smape: smape(s.test, f), mase: mase(s.test, f, scale), msis: NaN, coverage: NaN, smapeNaive2: 1, maseNaive2: 1 };
    });
    assert.equal(scores.length, count, `every M4 ${group} series`);
    const agg = aggregateScores(scores);
    assert.ok(Math.abs(agg.smape - officialSmape) < 0.0015, `sMAPE ${agg.smape} vs ${officialSmape}`);
    assert.ok(Math.abs(agg.mase - officialMase) < 0.0015, `MASE ${agg.mase} vs ${officialMase}`);
  });
}
