/** The plausibility band (`guard.ts`): its rule, the censoring, and degenerate combination members. */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { summariseStep } from '../../../src/oracle/summary';
import { loadBenchmark } from '../../../src/cli/evaluate-data';
import { sharedDataFile } from '../../helpers/files';
import { periodsFor } from '../../../src/cli/evaluate-series';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { forecastSeries } from '../../../src/engine/index';
import { maseScale, msis } from '../../../src/engine/metrics';
import { ensembleFamily } from '../../../src/engine/ensemble';
import { clampToBand, GUARD_WIDTHS, guardBand, isDegenerate, RECENT_CHANGES } from '../../../src/engine/guard';
import type { Fitted, ModelFamily, PredictiveDistribution } from '../../../src/engine/types';
import { randomWalk, toyNaive } from './backtest-toy-families';

function normals(means: number[], sds: number[]): PredictiveDistribution {
  return {
    model: 'toy',
    mean: Float64Array.from(means),
    steps: means.map((m, i) => new NormalStep(m, sds[i])),
    intervalMethod: 'analytic',
    samplePaths: (n) => Array.from({ length: n }, () => Float64Array.from(means, (m, i) => m + 1e6 * sds[i])),
  };
}

/** A family whose forecast is a level `m` with a fixed sd (explodes when told to). */
function toyLevel(name: string, level: number, sd: number): ModelFamily {
  return {
    name,
    minObservations: () => 2,
    fit: (): Fitted => ({ model: name, params: {}, nobs: 0, warnings: [], forecast: (h) => normals(new Array(h).fill(level), new Array(h).fill(sd)) }),
  };
}

test('the band: history range widened by K × the mean absolute change × step, floored at 0 for non-negative history', () => {
  // changes 2, 1, 3: d = 2
  const band = guardBand([10, 12, 11, 14], 3)!;
  for (let k = 0; k < 3; k++) {
    assert.equal(band.lower[k], 10 - GUARD_WIDTHS * 2 * (k + 1));
    assert.equal(band.upper[k], 14 + GUARD_WIDTHS * 2 * (k + 1));
  }
  assert.equal(band.nonNegative, true);
  assert.equal(guardBand([-1, 5], 1)!.nonNegative, false);
  assert.equal(guardBand([NaN, 3], 2), null);
  // a trend that accelerated: the recent changes set the step size
  const y = [...Array.from({ length: 100 }, (_, t) => t), ...Array.from({ length: RECENT_CHANGES }, (_, t) => 99 + 10 * (t + 1))];
  assert.equal(guardBand(y, 1)!.upper[0], y[y.length - 1] + GUARD_WIDTHS * 10);
});

test('missing values at the end count as steps: the reach at step k is that of g + k steps (found by QA)', () => {
  const band = guardBand([10, 12, 11, 14, NaN, NaN], 2)!;
  for (let k = 0; k < 2; k++) assert.equal(band.upper[k], 14 + GUARD_WIDTHS * 2 * (2 + k + 1));
  // a trend whose last 10 values are missing: the first steps keep the models' intervals, around the truth
  const trend = Array.from({ length: 60 }, (_, t) => (t >= 50 ? NaN : 100 + 2 * t + Math.sin(1.7 * t)));
  const r = forecastSeries(trend, { period: 1 }, { horizon: 3 });
  assert.ok(!r.warnings.some((w) => w.startsWith('intervals cut')), r.warnings.join(' | '));
  r.distribution.steps.forEach((s, k) => {
    const truth = 100 + 2 * (60 + k);
    assert.ok(s.quantile(0.025) < truth && truth < s.quantile(0.975), `step ${k + 1}: [${s.quantile(0.025)}, ${s.quantile(0.975)}] vs ${truth}`);
  });
});

test('censoring: ordinary forecasts untouched, a blown-up one cut to the band with consistent quantiles, cdf and paths', () => {
  const band = guardBand([100, 102, 101, 104, 103], 4)!;
  const fine = normals([103, 103, 103, 103], [1, 1.5, 2, 2.5]);
  const kept = clampToBand(fine, band).distribution;
  // an ordinary forecast: the same wherever a summary reads it, and the same paths
  for (let k = 0; k < 4; k++) {
    for (const p of [0.001, 0.025, 0.5, 0.975, 0.999]) assert.equal(kept.steps[k].quantile(p), fine.steps[k].quantile(p));
    for (const x of [100, 103, 106]) assert.equal(kept.steps[k].cdf(x), fine.steps[k].cdf(x));
  }
  assert.deepEqual(kept.samplePaths(5, 1), fine.samplePaths(5, 1));
  // only the far tails are censored: a level below 0.001 cannot leave the band (nor go below 0)
  const wide = normals([3, 3, 3, 3], [0.6, 0.6, 0.6, 0.6]);
  const floored = clampToBand(wide, guardBand([2, 3, 4, 3, 2], 4)!).distribution;
  assert.equal(floored.steps[0].quantile(1e-7), 0);
  assert.ok(wide.steps[0].quantile(1e-7) < 0);
  const wild = normals([103, 1e6, 103, 103], [1, 1e5, 1e9, 2]);
  const { distribution: d, cut } = clampToBand(wild, band);
  assert.equal(cut, 2);
  for (let k = 0; k < 4; k++) {
    const lo = d.steps[k].quantile(0.025);
    const hi = d.steps[k].quantile(0.975);
    assert.ok(lo >= Math.max(0, band.lower[k]) && hi <= band.upper[k], `step ${k}: [${lo}, ${hi}]`);
    assert.ok(d.mean[k] >= band.lower[k] && d.mean[k] <= band.upper[k]);
    assert.equal(d.steps[k].cdf(band.upper[k]), 1);
    assert.equal(d.steps[k].cdf(Math.max(0, band.lower[k]) - 1e-9), 0);
  }
  // the interval width is bounded by the band's width at every step: the documented rule
  for (const path of d.samplePaths(5, 1)) path.forEach((v, k) => assert.ok(v <= band.upper[k] && v >= 0));
  assert.equal(d.steps[0].quantile(0.5), 103);
  // the atom at the floor is at it, not below: P(Y < floor) = 0 (summaries' bins use cdfBelow)
  const floor = Math.max(0, band.lower[2]);
  assert.equal(d.steps[2].cdfBelow!(floor), 0);
  assert.ok(d.steps[2].cdf(floor) > 0.4);
  const bins = summariseStep(d.steps[2], d.mean[2], [floor - 1e-9, floor, floor + 1e-9], [0.5], 'continuous').distribution;
  assert.deepEqual(bins.slice(0, 2), [0, 0], 'nothing below the floor');
  assert.ok(bins[2] > 0.4, 'the atom in [floor, floor + 1e-9)');
});

test('degenerate: a mean outside the band, an interval wider than it, or a non-finite value', () => {
  const band = guardBand([100, 102, 101, 104, 103], 2)!;
  assert.equal(isDegenerate(normals([103, 104], [1, 2]), band), false);
  assert.equal(isDegenerate(normals([103, 1000], [1, 2]), band), true);
  assert.equal(isDegenerate(normals([103, 104], [1, 500]), band), true);
  assert.equal(isDegenerate(normals([103, NaN], [1, 2]), band), true);
});

test('a combination drops a degenerate member (with a warning) and keeps the others; all degenerate keeps all', () => {
  const y = randomWalk(60, 3);
  const last = y[y.length - 1];
  const fam = ensembleFamily('combo', [{ family: toyNaive() }, { family: toyLevel('blown', last, 1e12) }]);
  const fit = fam.fit(y, { period: 1 });
  const pd = fit.forecast(5);
  const alone = toyNaive().fit(y, { period: 1 }).forecast(5);
  for (let k = 0; k < 5; k++) assert.equal(pd.steps[k].quantile(0.9), alone.steps[k].quantile(0.9));
  assert.ok(fit.warnings.some((w) => w.startsWith('blown dropped: degenerate forecast')));
  assert.equal(pd.model, 'combo(toy-naive)');
  const both = ensembleFamily('combo', [{ family: toyLevel('a', 1e9, 1) }, { family: toyLevel('b', -1e9, 1) }]).fit(y, { period: 1 }).forecast(2);
  assert.equal(both.mean[0], 0);
});

test('web traffic (1,000 daily series): every default interval inside its band, no series MSIS above 1,000, set mean below 100', () => {
  const series = loadBenchmark(sharedDataFile('daily/web-traffic.jsonl'));
  assert.equal(series.length, 1000);
  let sum = 0;
  let worst = { id: '', msis: 0 };
  for (const s of series) {
    const info = { period: s.period, periods: periodsFor(s) };
    const d = forecastSeries(s.train, info, { horizon: s.horizon, confidence: false, calibrate: 'auto' }).distribution;
    const band = guardBand(s.train, s.horizon)!;
    const lo = d.steps.map((st) => st.quantile(0.025));
    const hi = d.steps.map((st) => st.quantile(0.975));
    for (let k = 0; k < s.horizon; k++) assert.ok(lo[k] >= Math.max(0, band.lower[k]) && hi[k] <= band.upper[k], `${s.id} step ${k + 1}`);
    const m = msis(s.test, lo, hi, maseScale(s.train, s.period));
    sum += m;
    if (m > worst.msis) worst = { id: s.id, msis: m };
  }
  // the worst (T601, about 530) is a page whose views jumped far above anything in its history
  assert.ok(worst.msis < 1000, JSON.stringify(worst));
  assert.ok(sum / series.length < 100, `mean MSIS ${sum / series.length}`);
});
