/** `auto` for daily data with a strong weekly cycle (`AUTO_DAILY_SEASONAL_MODEL`, engine 1.16.0). */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { seasonalStrength } from '../../../src/engine/decompose/classical';
import { forecastSeries } from '../../../src/engine/index';
import { AUTO_DAILY_MODEL, AUTO_DAILY_SEASONAL_MODEL, strongWeeklyCycle, WEEKLY_STRENGTH_WINDOW } from '../../../src/engine/registry';
import { Rng } from '../../../src/engine/rng';

const DAILY = { period: 7, periods: [7, 365] };
/** A shop's week (Monday first): Saturday busiest, Sunday as given. */
const week = (sunday: number) => [0.8, 0.9, 1, 1, 1.2, 1.6, sunday];

/** `n + h` days of a shop: a wandering level (log sd 0.02 a day) times its week, lognormal noise (sd `noise`); the true means too. */
function shop(n: number, h: number, seed: number, sunday: number, noise = 0.15): { y: Float64Array; mean: Float64Array } {
  const rng = new Rng(seed);
  let level = Math.log(100);
  const mean = new Float64Array(n + h);
  const y = new Float64Array(n + h);
  for (let t = 0; t < n + h; t++) {
    level += 0.02 * rng.normal();
    mean[t] = Math.exp(level) * week(sunday)[t % 7];
    y[t] = mean[t] * Math.exp(noise * rng.normal());
  }
  return { y, mean };
}

test('seasonal strength: near 1 for a clean cycle, near 0 for noise, NaN with a gap or under 3 cycles', () => {
  const rng = new Rng(3);
  const cycle = Float64Array.from({ length: 56 }, (_, t) => 10 + 3 * Math.sin((2 * Math.PI * t) / 7) + 0.1 * rng.normal());
  assert.ok(seasonalStrength(cycle, 7) > 0.95);
  const noise = Float64Array.from({ length: 56 }, () => 10 + rng.normal());
  assert.ok(seasonalStrength(noise, 7) < 0.4);
  assert.ok(Number.isNaN(seasonalStrength([...cycle.slice(0, 30), NaN, ...cycle.slice(31)], 7)));
  assert.ok(Number.isNaN(seasonalStrength(cycle.slice(0, 20), 7)));
  assert.equal(seasonalStrength(new Float64Array(56).fill(4), 7), 0);
});

test('the route: a shop (open every day, or shut on Sundays) gets the AR with ETS; noise, a random walk, a short or gapped history keep the AR', () => {
  for (const sunday of [0.7, 0]) {
    const { y } = shop(365, 0, 11, sunday);
    assert.ok(strongWeeklyCycle(y));
    assert.equal(forecastSeries(y, DAILY, { horizon: 7, confidence: false }).requestedModel, AUTO_DAILY_SEASONAL_MODEL);
  }
  const rng = new Rng(5);
  const noisy = Float64Array.from({ length: 365 }, () => 50 * Math.exp(0.3 * rng.normal()));
  let walk = 100;
  const randomWalk = Float64Array.from({ length: 365 }, () => (walk *= Math.exp(0.05 * rng.normal())));
  const { y: strong } = shop(365, 0, 12, 0.7);
  const gapped = Float64Array.from(strong, (v, t) => (t === 360 ? NaN : v));
  for (const [name, y] of [
    ['noise', noisy],
    ['random walk', randomWalk],
    ['7 weeks', strong.slice(-(WEEKLY_STRENGTH_WINDOW - 7))],
    ['a gap in the last 8 weeks', gapped],
  ] as const) {
    assert.equal(forecastSeries(y, DAILY, { horizon: 7, confidence: false }).requestedModel, AUTO_DAILY_MODEL, name);
  }
});

test('on shops with a known mean the combination errs less than the AR alone (found by QA: the AR repeated last week’s noise)', () => {
  let ar = 0;
  let both = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const { y, mean } = shop(365, 14, 100 + seed, seed % 2 ? 0.7 : 0);
    const history = y.slice(0, 365);
    const auto = forecastSeries(history, DAILY, { horizon: 14 });
    const alone = forecastSeries(history, DAILY, { horizon: 14, model: 'autoreg' });
    assert.equal(auto.requestedModel, AUTO_DAILY_SEASONAL_MODEL);
    for (let k = 0; k < 14; k++) {
      // the median against the true median (the mean times the lognormal noise's median, 1)
      ar += Math.abs(alone.distribution.steps[k].quantile(0.5) - mean[365 + k]);
      both += Math.abs(auto.distribution.steps[k].quantile(0.5) - mean[365 + k]);
    }
  }
  assert.ok(both < 0.8 * ar, `median error against the truth: AR ${ar.toFixed(1)}, AR + ETS ${both.toFixed(1)}`);
});
