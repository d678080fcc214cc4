/**
 * A series' own bounds (`SeriesInfo.bounds`): forecasts censored to them at every step and in
 * every output (quantiles, point forecast, sample paths), whatever the model and the guard; the
 * same law where it lies within them; values beyond them and bad bounds refused; reconciled
 * draws censored per node (`censorToNodeBounds`).
 */
import { describe, expect, test } from '@jest/globals';
import { CensoredStep, ClampedStep, censorToBounds } from '../../../src/engine/guard';
import { baseDraws } from '../../../src/engine/reconcile/draws';
import { quantileGridMean } from '../../../src/engine/distributions/moments';
import { normalQuantile } from '../../../src/engine/math/normal';
import { forecastSeries, InvalidSeriesError } from '../../../src/engine/index';
import { censorToNodeBounds } from '../../../src/engine/reconcile/index';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import type { PredictiveDistribution, SeriesInfo } from '../../../src/engine/types';

/** A utilisation climbing to 100 with a weekly wiggle. */
const climbing = Array.from({ length: 150 }, (_, i) => Math.min(100, 40 + 0.4 * i + [0, 3, -2, 4, -3, 1, -1][i % 7]));
const DAILY: SeriesInfo = { period: 7 };
const LEVELS = [0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 0.999];

describe('forecastSeries with bounds', () => {
  const free = forecastSeries(climbing, DAILY, { horizon: 20 });
  const bounded = forecastSeries(climbing, { ...DAILY, bounds: { lower: 0, upper: 100 } }, { horizon: 20 });

  test('every quantile is the unbounded one censored to [0, 100]; the unbounded reach past 100', () => {
    expect(free.distribution.steps[19].quantile(0.95)).toBeGreaterThan(100);
    for (const [k, s] of bounded.distribution.steps.entries()) {
      for (const p of LEVELS) expect(s.quantile(p)).toBe(Math.min(100, Math.max(0, free.distribution.steps[k].quantile(p))));
      // the probability beyond the bound is on the bound: P(Y ≤ 100) = 1, P(Y < 100) the law's
      expect(s.cdf(100)).toBe(1);
      expect(s.cdfBelow!(100)).toBe(free.distribution.steps[k].cdf(100));
      expect(s.mean).toBeLessThanOrEqual(100);
    }
    expect(Array.from(bounded.distribution.mean).every((m) => m <= 100)).toBe(true);
    expect(bounded.warnings.some((w) => /^censored to the bounds \[0, 100\] at \d+ of 20 steps/.test(w))).toBe(true);
    expect(free.warnings.some((w) => w.includes('bounds'))).toBe(false);
    // same model, same fit: the bounds censor the answer, they do not change the model
    expect(bounded.model).toBe(free.model);
    expect(bounded.params).toEqual(free.params);
  });

  test('sample paths never cross a bound, even where only far tails reach it', () => {
    const values = bounded.distribution.samplePaths(2000, 7).flatMap((path) => Array.from(path));
    expect(Math.max(...values)).toBe(100);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    // a level far below its bound: paths and quantiles as without it
    const low = climbing.map((v) => v / 4);
    const a = forecastSeries(low, DAILY, { horizon: 5 });
    const b = forecastSeries(low, { ...DAILY, bounds: { upper: 100 } }, { horizon: 5 });
    expect(b.distribution.samplePaths(50, 3)).toEqual(a.distribution.samplePaths(50, 3));
    expect(Array.from(b.distribution.mean)).toEqual(Array.from(a.distribution.mean));
    expect(b.warnings.some((w) => w.includes('bounds'))).toBe(false);
  });

  test('bounds hold with the guard off and for any model asked for', () => {
    for (const model of ['naive', 'ets', 'theta', 'autoreg']) {
      const r = forecastSeries(climbing, { ...DAILY, bounds: { upper: 100 } }, { horizon: 30, model, guard: false });
      for (const s of r.distribution.steps) expect(s.quantile(0.9999)).toBeLessThanOrEqual(100);
    }
  });

  test('deterministic: the same data and bounds give bit-identical output', () => {
    const again = forecastSeries(climbing, { ...DAILY, bounds: { lower: 0, upper: 100 } }, { horizon: 20 });
    const q = (r: typeof again) => r.distribution.steps.flatMap((s) => LEVELS.map((p) => s.quantile(p)));
    expect(q(again)).toEqual(q(bounded));
    expect(again.distribution.samplePaths(100, 1)).toEqual(bounded.distribution.samplePaths(100, 1));
  });

  test('count data: whole numbers at or under the bound', () => {
    const counts = Array.from({ length: 120 }, (_, i) => Math.min(20, 6 + Math.floor(i / 9) + (i % 3)));
    const r = forecastSeries(counts, { period: 1, kind: 'count', bounds: { upper: 20 } }, { horizon: 10 });
    for (const s of r.distribution.steps) {
      for (const p of LEVELS) {
        const v = s.quantile(p);
        expect(Number.isInteger(v) && v >= 0 && v <= 20).toBe(true);
      }
    }
  });

  test('a series beyond its bounds, and bad bounds, are refused', () => {
    const refuse = (y: number[], info: SeriesInfo, message: RegExp) => {
      expect(() => forecastSeries(y, info, { horizon: 3 })).toThrow(InvalidSeriesError);
      expect(() => forecastSeries(y, info, { horizon: 3 })).toThrow(message);
    };
    refuse([1, 2, 101, 3], { period: 1, bounds: { upper: 100 } }, /y\[2\] is 101, outside the series' bounds ≤ 100/);
    refuse([1, 2, -1, 3], { period: 1, bounds: { lower: 0, upper: 10 } }, /outside the series' bounds \[0, 10\]/);
    refuse([1, 2, 3, 4], { period: 1, bounds: { lower: 5, upper: 5 } }, /lower \(5\) must be below upper \(5\)/);
    refuse([1, 2, 3, 4], { period: 1, bounds: { upper: NaN } }, /finite/);
    refuse([1, 2, 3, 4], { period: 1, kind: 'count', bounds: { upper: 9.5 } }, /whole numbers/);
  });
});

describe('censorToBounds', () => {
  const pd: PredictiveDistribution = {
    model: 'toy',
    mean: Float64Array.from([95, 99]),
    steps: [new NormalStep(95, 5), new NormalStep(99, 5)],
    intervalMethod: 'analytic',
    samplePaths: (n) => Array.from({ length: n }, (_, j) => Float64Array.from([90 + j, 95 + j])),
  };

  test('counts the steps whose 95% interval reached beyond, and clamps means, quantiles and paths', () => {
    const { distribution, cut } = censorToBounds(pd, -Infinity, 100);
    expect(cut).toBe(2);
    expect(distribution.steps.map((s) => s.quantile(0.99))).toEqual([100, 100]);
    expect(distribution.steps[0].quantile(0.5)).toBe(95);
    expect(distribution.samplePaths(12, 0).map((p) => Array.from(p))[11]).toEqual([100, 100]);
    expect(Array.from(distribution.mean)).toEqual([95, 99]);
    expect(censorToBounds(pd, -Infinity, 200).cut).toBe(0);
  });
});

describe('CensoredStep', () => {
  test("its mean is the censored law's, E[min(Y, 100)]; reconciliation takes the law without the bounds or the band's 0 floor", () => {
    const s = new CensoredStep(new NormalStep(99, 5), -Infinity, 100);
    // E[min(Y, c)] = μ − σ (φ(z) − z (1 − Φ(z))), z = (c − μ)/σ = 0.2
    expect(s.mean).toBeCloseTo(99 - 5 * (0.391043 - 0.2 * 0.420740), 2);
    // the law's mean, not the base's \`mean\` (a model in logs: its median): a bound that cannot bind changes nothing ...
    const median = { mean: 10, quantile: (p: number) => Math.exp(Math.log(10) + 0.5 * (p - 0.5)), cdf: (x: number) => Math.log(x / 10) / 0.5 + 0.5 };
    expect(new CensoredStep(median, 0, 1e6).mean).toBe(quantileGridMean(median));
    // ... and one that binds gives E[min(Y, b)] (a lognormal of median 100, σ 1, at 120: 85.41; found by review: 20.65)
    const lognormal = { mean: 100, quantile: (p: number) => 100 * Math.exp(normalQuantile(p)), cdf: () => NaN };
    expect(new CensoredStep(lognormal, -Infinity, 120).mean).toBeCloseTo(85.41, 1);
    const floored = new ClampedStep(new NormalStep(1, 3), 0, 50, -50);
    const { grid, mean } = baseDraws(new CensoredStep(floored, -Infinity, 1000), 200);
    expect(grid.filter((v) => v < 0).length).toBeGreaterThan(50);
    expect(grid.includes(0)).toBe(false);
    expect(mean).toBeCloseTo(1, 12);
  });
});

describe('censorToNodeBounds', () => {
  test('moves only bounded nodes, shifts their mean by the draws\' mean change, and counts the draws moved', () => {
    const step = { means: Float64Array.from([150, 90, 60]), draws: [Float64Array.from([120, 150, 180]), Float64Array.from([80, 90, 100]), Float64Array.from([40, 60, 80])] };
    const moved = censorToNodeBounds(step, [{ upper: 160 }, undefined, { lower: 50, upper: 70 }]);
    expect(moved).toEqual([1, 0, 2]);
    expect(Array.from(step.draws[0])).toEqual([120, 150, 160]);
    expect(step.means[0]).toBeCloseTo(150 - 20 / 3, 12);
    expect(Array.from(step.draws[1])).toEqual([80, 90, 100]);
    expect(step.means[1]).toBe(90);
    expect(Array.from(step.draws[2])).toEqual([50, 60, 70]);
    expect(step.means[2]).toBe(60);
  });
});
