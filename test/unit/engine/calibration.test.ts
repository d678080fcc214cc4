import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { backtest, scoreForecast, type BacktestResult } from '../../../src/engine/backtest';
import { applyCalibration, conformalQuantile, planCalibration, planFactors, refineMinErrors, standardisedError } from '../../../src/engine/calibration/conformal';
import { CALIBRATION_PRIORS, calibrationPrior, lengthClass, priorFactors } from '../../../src/engine/calibration/prior';
import { forecastSeries } from '../../../src/engine/index';
import { coverage, maseScale, msis } from '../../../src/engine/metrics';
import { loadBenchmark } from '../../../src/cli/evaluate-data';
import { sharedDataFile } from '../../helpers/files';
import { normalCdf, normalQuantile } from '../../../src/engine/math/normal';
import type { PredictiveDistribution, StepDistribution } from '../../../src/engine/types';
import { randomWalk, toyNaive } from './backtest-toy-families';

test('conformal quantile is the ceil((n+1)·level)-th order statistic', () => {
  assert.equal(conformalQuantile([5, 1, 4, 2, 3], 0.5), 3);
  assert.equal(conformalQuantile([5, 1, 4, 2, 3], 0.95), 5);
});

test('too-narrow intervals are widened to about the right coverage; good ones left alone', () => {
  const y = randomWalk(600, 11);
  const narrow = toyNaive(0.3);
  const bt = backtest(narrow, y, { period: 1 }, { horizon: 10, origins: 8, step: 10, level: 0.9 });
  const plan = planCalibration(bt, { level: 0.9 });
  assert.equal(plan.method, 'conformal-scaled');
  assert.ok(plan.factor > 2 && plan.factor < 5, `factor ${plan.factor}`);
  const pd = narrow.fit(y, { period: 1 }).forecast(10);
  const cal = applyCalibration(pd, plan);
  assert.equal(cal.intervalMethod, 'conformal-scaled');
  const w0 = pd.steps[4].quantile(0.95) - pd.steps[4].quantile(0.05);
  const w1 = cal.steps[4].quantile(0.95) - cal.steps[4].quantile(0.05);
  assert.ok(Math.abs(w1 / w0 - plan.factor) < 1e-9);
  assert.ok(Math.abs(cal.steps[4].cdf(cal.steps[4].quantile(0.8)) - 0.8) < 1e-9);
  assert.deepEqual(cal.samplePaths(3, 9), cal.samplePaths(3, 9));
  const good = planCalibration(backtest(toyNaive(1), y, { period: 1 }, { horizon: 10, origins: 8, step: 10, level: 0.9 }), {
    level: 0.9,
  });
  assert.ok(good.method === 'none' || Math.abs(good.factor - 1) < 0.5, JSON.stringify(good));
});

test('per-step split conformal when every step has enough errors', () => {
  const y = randomWalk(300, 5);
  const bt = backtest(toyNaive(0.2), y, { period: 1 }, { horizon: 3, origins: 8, step: 1 });
  const plan = planCalibration(bt, { level: 0.9, perStepMin: 8 });
  assert.equal(plan.method, 'conformal');
  const cal = applyCalibration(toyNaive(0.2).fit(y, { period: 1 }).forecast(3), plan);
  assert.equal(cal.intervalMethod, 'conformal');
  assert.ok(cal.steps[2].quantile(0.9) >= cal.steps[2].quantile(0.1));
});

test('too-wide intervals within the coverage tolerance are narrowed, shrunk by origins; few errors leave them alone', () => {
  const y = randomWalk(400, 7);
  const wide = toyNaive(3);
  const bt = backtest(wide, y, { period: 1 }, { horizon: 13, origins: 3, level: 0.95 });
  const plan = planCalibration(bt, { level: 0.95 });
  assert.equal(plan.method, 'conformal-scaled');
  assert.equal(plan.refined, true);
  assert.ok(plan.factor < 1 && plan.factor >= 0.5, `factor ${plan.factor}`);
  // the factor moves half-way (in logs) to the unshrunk one with 3 origins and k = 3
  const free = { level: 0.95, factorBounds: [0.01, 100] as const };
  const half = planCalibration(bt, free).factor;
  const full = planCalibration(bt, { ...free, refineShrink: 0 }).factor;
  assert.ok(Math.abs(Math.log(half) - 0.5 * Math.log(full)) < 1e-12, `${half} vs ${full}`);
  assert.equal(planCalibration(bt, { level: 0.95, refineShrink: Infinity }).method, 'none');
  // 18 errors: the conformal quantile would be the largest error, so nothing is refined
  const few = backtest(wide, y, { period: 1 }, { horizon: 6, origins: 3, level: 0.95 });
  assert.equal(planCalibration(few, { level: 0.95 }).method, 'none');
  assert.equal(refineMinErrors(0.95), 39);
  assert.equal(refineMinErrors(0.8), 9);
});

test('calibration priors: the length class first, then the pooled class of the period; none for other models', () => {
  const priors = [
    { model: 'm', period: 1, length: 's' as const, lower: { a: 0.1, b: 0.3, c: 0 }, upper: { a: 0.1, b: 0.3, c: 0 }, k0: 10, steps: 6, fittedOn: 'x' },
    { model: 'm', period: 1, length: '*' as const, lower: { a: 0, b: 0, c: 0 }, upper: { a: 0, b: 0, c: 0 }, k0: 3, steps: 6, fittedOn: 'y' },
  ];
  assert.equal(calibrationPrior('m', { period: 1 }, 20, priors)?.fittedOn, 'x');
  assert.equal(calibrationPrior('m', { period: 1 }, 80, priors)?.fittedOn, 'y');
  assert.equal(calibrationPrior('m', { period: 4 }, 20, priors), undefined);
  assert.equal(calibrationPrior('other', { period: 1 }, 20, priors), undefined);
  assert.deepEqual([lengthClass(24), lengthClass(25), lengthClass(49), lengthClass(50)], ['s', 'm', 'm', 'l']);
  const f = priorFactors({ a: 0.1, b: 0.3, c: -0.05 }, 3);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(f[k] - Math.exp(0.1 + 0.3 * Math.log(k + 1) - 0.05 * Math.log(k + 1) ** 2)) < 1e-15);
  // every shipped prior is usable: finite curve, positive shrinkage, a record of what it was fitted on
  const finite = (c: { a: number; b: number; c: number }) => [c.a, c.b, c.c].every(Number.isFinite);
  for (const p of CALIBRATION_PRIORS) assert.ok(finite(p.lower) && finite(p.upper) && p.k0 > 0 && p.steps >= 1 && p.fittedOn.includes('cross-fitted'), JSON.stringify(p));
});

test('beyond the last fitted step a prior curve goes on log-linearly with its slope there, not with its curvature', () => {
  // M4 weekly's shipped upper curve (fitted on 13 steps): carried on, its curvature reached the cap by step 1,000
  const curve = { a: 0.0304, b: -0.4016, c: 0.1263 };
  const f = priorFactors(curve, 1000, 13);
  const carried = priorFactors(curve, 1000);
  for (let k = 0; k < 13; k++) assert.equal(f[k], carried[k]);
  const slope = curve.b + 2 * curve.c * Math.log(13);
  for (const k of [14, 52, 1000]) {
    const expected = Math.log(f[12]) + slope * (Math.log(k) - Math.log(13));
    assert.ok(Math.abs(Math.log(f[k - 1]) - expected) < 1e-12, `step ${k}`);
  }
  assert.ok(carried[999] > 25 && f[999] < 2.5, `${carried[999]} vs ${f[999]}`);
  // a curve without curvature is the same on both sides of the last step
  const straight = priorFactors({ a: 0.1, b: 0.3, c: 0 }, 40);
  priorFactors({ a: 0.1, b: 0.3, c: 0 }, 40, 6).forEach((v, k) => assert.ok(Math.abs(v / straight[k] - 1) < 1e-12, `step ${k + 1}`));
  // the plan and the facade use the prior's steps: a 1,000-step weekly forecast's prior factor at the end
  const prior = { lower: curve, upper: curve, k0: 3, steps: 13 };
  const plan = planCalibration(null, { prior });
  assert.ok(Math.abs(planFactors(plan, 1000).upper[999] - f[999]) < 1e-12);
  const weekly = CALIBRATION_PRIORS.find((p) => p.model === 'autoreg+autoreg-raw');
  assert.equal(weekly?.steps, 13);
});

test('the weekly route has its own priors for short and medium histories; long ones keep the pooled prior', () => {
  const info = { period: 1, periods: [52] };
  const route = 'autoreg+autoreg-raw';
  assert.equal(calibrationPrior(route, info, 16)?.length, 's');
  assert.equal(calibrationPrior(route, info, 30)?.length, 'm');
  assert.equal(calibrationPrior(route, info, 80)?.length, '*');
  // a 16-week history's intervals are wider than with the pooled prior (which short histories under-covered)
  const y = Float64Array.from({ length: 16 }, (_, i) => 100 + 8 * Math.sin(i / 2) + (i % 5));
  const width = (priors: typeof CALIBRATION_PRIORS) => {
    const prior = calibrationPrior(route, info, y.length, priors)!;
    const plan = planCalibration(null, { prior });
    return planFactors(plan, 13).upper[12];
  };
  assert.ok(width(CALIBRATION_PRIORS) > 1.5 * width(CALIBRATION_PRIORS.filter((p) => p.model !== route || p.length === '*')));
});

test('with a prior: the prior alone without a backtest; with one, its adjustment shrunk by o / (o + k0)', () => {
  const curve = { a: 0.2, b: 0.25, c: 0 };
  const prior = { lower: curve, upper: curve, k0: 10 };
  const alone = planCalibration(null, { prior });
  assert.equal(alone.method, 'conformal-prior');
  assert.deepEqual(planFactors(alone, 4), { lower: priorFactors(curve, 4), upper: priorFactors(curve, 4) });
  // a too-narrow model: the series' own evidence widens beyond the prior, by (c)^(3/13)
  const y = randomWalk(400, 7);
  const bt = backtest(toyNaive(0.3), y, { period: 1 }, { horizon: 6, origins: 3 });
  const plan = planCalibration(bt, { prior });
  const free = planCalibration(bt, { prior: { ...prior, k0: 1e-12 } }).factor;
  assert.ok(free > 1.5, `unshrunk adjustment ${free}`);
  assert.ok(Math.abs(Math.log(plan.factor) - (3 / 13) * Math.log(free)) < 1e-9);
  const f = planFactors(plan, 6).upper;
  const p = priorFactors(curve, 6);
  for (let k = 0; k < 6; k++) assert.ok(Math.abs(f[k] - p[k] * plan.factor) < 1e-12);
  // applied: each step's spread scaled by its own factor, the mean kept
  const pd = toyNaive(0.3).fit(y, { period: 1 }).forecast(6);
  const cal = applyCalibration(pd, plan);
  assert.equal(cal.intervalMethod, 'conformal-prior');
  for (const k of [0, 5]) {
    assert.equal(cal.steps[k].mean, pd.steps[k].mean);
    const ratio = (cal.steps[k].quantile(0.975) - cal.steps[k].mean) / (pd.steps[k].quantile(0.975) - pd.steps[k].mean);
    assert.ok(Math.abs(ratio - f[k]) < 1e-9);
  }
});

/** A right-skewed step around `mean`: the upper half of a Normal(0, 2u), the lower half of a Normal(0, u/2). */
function skewedStep(mean: number, u: number): StepDistribution {
  return {
    mean,
    quantile: (p) => {
      const z = normalQuantile(p);
      return mean + (z > 0 ? 2 * u * z : 0.5 * u * z);
    },
    cdf: (x) => normalCdf(x >= mean ? (x - mean) / (2 * u) : (x - mean) / (0.5 * u)),
  };
}

test('conformal-prior standardises errors by the interval reach on their side, so skewed steps get the factor they need', () => {
  const z975 = normalQuantile(0.975);
  const h = 4;
  const pd = { model: 'skew', mean: new Float64Array(h), steps: Array.from({ length: h }, () => skewedStep(0, 1)) } as unknown as PredictiveDistribution;
  // upward errors at half the upper reach, downward ones at half the lower reach
  const up = 0.5 * 2 * z975;
  const down = -0.5 * 0.5 * z975;
  const origins = Array.from({ length: 10 }, (_, o) => scoreForecast(pd, Array.from({ length: h }, (_, k) => ((o + k) % 2 === 0 ? up : down)), 0.95, [], o));
  assert.ok(Math.abs(origins[0].reaches[0] - 2 * z975) < 1e-12 && Math.abs(origins[0].reaches[1] - 0.5 * z975) < 1e-12);
  assert.ok(Math.abs(standardisedError(up, origins[0].reaches[0]) - 0.5) < 1e-12);
  assert.equal(standardisedError(0, 0), 0);
  assert.equal(standardisedError(1, 0), Infinity);
  const bt: BacktestResult = { model: 'skew', origins, crps: NaN, coverage: 1, pinball: [], failures: [] };
  // unshrunk (k0 → 0) and a flat prior: the interval is halved on both sides, exactly what covers these errors
  const flat = { a: 0, b: 0, c: 0 };
  const plan = planCalibration(bt, { prior: { lower: flat, upper: flat, k0: 1e-12 } });
  assert.ok(Math.abs(plan.factor - 0.5) < 1e-9, `factor ${plan.factor}`);
  // a symmetric spread ((q84 − q16)/2 = 1.25) would have called the upward errors 1.57 spreads: a factor of 0.8, not 0.5
  const cal = applyCalibration(pd, plan);
  assert.ok(Math.abs(cal.steps[0].quantile(0.975) - up) < 1e-9 && Math.abs(cal.steps[0].quantile(0.025) - down) < 1e-9);
});

test('short series: the default is calibrated by its prior even without a backtest, wider at later steps', () => {
  const y = [112, 118, 132, 129, 121, 135, 148, 148, 136, 119, 104, 118];
  // without the plausibility band (which may cut the lower end at longer steps), to see the factors alone
  const off = forecastSeries(y, { period: 1 }, { horizon: 6, calibrate: 'off', guard: false });
  const on = forecastSeries(y, { period: 1 }, { horizon: 6, confidence: false, guard: false });
  assert.equal(on.calibration?.method, 'conformal-prior');
  assert.equal(on.backtest, null);
  assert.equal(on.calibration?.factor, 1);
  const prior = calibrationPrior(on.requestedModel, { period: 1 }, y.length)!;
  assert.equal(prior.length, 's');
  for (const [side, p] of [['upper', 0.975], ['lower', 0.025]] as const) {
    const f = priorFactors(prior[side], 6);
    for (let k = 0; k < 6; k++) {
      const w = (d: typeof on) => d.distribution.steps[k].quantile(p) - d.distribution.steps[k].mean;
      const expected = f[k] * (on.calibration?.factor ?? 1);
      assert.ok(Math.abs(w(on) / w(off) - expected) < 1e-6, `${side} step ${k}: ${w(on) / w(off)} vs ${expected}`);
    }
  }
  assert.ok(priorFactors(prior.upper, 6)[5] > priorFactors(prior.upper, 6)[0]);
});

// The priors are fitted on validation windows inside the training parts, never on these test
// windows. Engine 1.3.0 (a curve per side of the interval): 96.6% coverage, MSIS 20.36 against the
// model intervals' 81.9% and 28.27 (engine 1.2.0, one symmetric factor: 97.0%).
test('short series of M3 (yearly, under 25 values): 95% coverage within 93–97% and a lower MSIS than the model intervals', () => {
  const series = loadBenchmark(sharedDataFile('m3/m3.jsonl')).filter((s) => s.group === 'yearly' && s.train.length < 25);
  assert.equal(series.length, 459);
  const score = (calibrate: 'auto' | 'off') => {
    let cov = 0;
    let ms = 0;
    for (const s of series) {
      const d = forecastSeries(s.train, { period: 1 }, { horizon: s.horizon, confidence: false, calibrate }).distribution;
      const lo = d.steps.map((st) => st.quantile(0.025));
      const hi = d.steps.map((st) => st.quantile(0.975));
      cov += coverage(s.test, lo, hi);
      ms += msis(s.test, lo, hi, maseScale(s.train, 1));
    }
    return { coverage: cov / series.length, msis: ms / series.length };
  };
  const on = score('auto');
  const off = score('off');
  assert.ok(on.coverage >= 0.93 && on.coverage <= 0.97, `coverage ${on.coverage}`);
  assert.ok(off.coverage < 0.9 && on.msis < off.msis, `${JSON.stringify(off)} → ${JSON.stringify(on)}`);
});

test('a prior with different sides scales each side of every step by its own factor, quantiles, cdf and sample paths alike', () => {
  const y = randomWalk(200, 3);
  const pd = toyNaive(1).fit(y, { period: 1 }).forecast(4);
  const plan = planCalibration(null, { prior: { lower: { a: Math.log(0.5), b: 0, c: 0 }, upper: { a: Math.log(2), b: 0.1, c: 0 }, k0: 3 } });
  const { lower, upper } = planFactors(plan, 4);
  const cal = applyCalibration(pd, plan);
  for (let k = 0; k < 4; k++) {
    const m = pd.steps[k].mean;
    assert.equal(cal.steps[k].mean, m);
    assert.ok(Math.abs(lower[k] - 0.5) < 1e-12 && Math.abs(upper[k] - 2 * Math.exp(0.1 * Math.log(k + 1))) < 1e-12);
    for (const p of [0.01, 0.025, 0.3, 0.5, 0.7, 0.975]) {
      const q = cal.steps[k].quantile(p);
      const base = pd.steps[k].quantile(p) - m;
      assert.ok(Math.abs(q - m - (base < 0 ? lower[k] : upper[k]) * base) < 1e-9, `step ${k} p ${p}`);
      assert.ok(Math.abs(cal.steps[k].cdf(q) - p) < 1e-9, `cdf(quantile(${p})) at step ${k}`);
    }
  }
  // sample paths: each draw moved by its side's factor, so below-mean draws shrink and above-mean ones stretch
  const raw = pd.samplePaths(200, 7);
  const moved = cal.samplePaths(200, 7);
  for (let j = 0; j < 200; j++) {
    for (let k = 0; k < 4; k++) {
      const d = raw[j][k] - pd.steps[k].mean;
      assert.ok(Math.abs(moved[j][k] - pd.steps[k].mean - (d < 0 ? lower[k] : upper[k]) * d) < 1e-9);
    }
  }
});
