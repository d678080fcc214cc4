/** `auto` for daily data with a strong weekly cycle (`AUTO_DAILY_SEASONAL_MODEL`, engine 1.16.0; read through a few doubtful days, 1.16.1). */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { seasonalStrength } from '../../../src/engine/decompose/classical';
import { forecastSeries } from '../../../src/engine/index';
import { AUTO_DAILY_MODEL, AUTO_DAILY_SEASONAL_MODEL, strongWeeklyCycle, WEEKLY_STRENGTH_WINDOW, WEEKLY_WINDOW_DOUBTFUL, weeklyWindow } from '../../../src/engine/registry';
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

test('the route: a shop (open every day, or shut on Sundays) gets the AR with ETS; noise, a random walk, a short or much-gapped history keep the AR', () => {
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
  // more doubtful days in the 8 weeks than the window reads through: the window as it is, so a gap keeps the AR
  const gapped = Float64Array.from(strong, (v, t) => (t >= 350 && t < 351 + WEEKLY_WINDOW_DOUBTFUL ? NaN : v));
  for (const [name, y] of [
    ['noise', noisy],
    ['random walk', randomWalk],
    ['7 weeks', strong.slice(-(WEEKLY_STRENGTH_WINDOW - 7))],
    [`${WEEKLY_WINDOW_DOUBTFUL + 1} gaps in the last 8 weeks`, gapped],
  ] as const) {
    assert.equal(forecastSeries(y, DAILY, { horizon: 7, confidence: false }).requestedModel, AUTO_DAILY_MODEL, name);
  }
});

test('a missing day, today not in yet, or a holiday at 0 in the 8 weeks does not hide the cycle (found by QA: one hid it)', () => {
  const { y } = shop(365, 0, 12, 0.7);
  const holiday = Float64Array.from(y, (v, t) => (t === 340 ? 0 : v));
  const cases = {
    'a missing day': Float64Array.from(y, (v, t) => (t === 330 ? NaN : v)),
    'today not in yet': Float64Array.from([...y, NaN]),
    'a holiday at 0': holiday,
    'a holiday and three gaps': Float64Array.from(holiday, (v, t) => (t === 320 || t === 321 || t === 364 ? NaN : v)),
  };
  for (const [name, series] of Object.entries(cases)) {
    assert.ok(strongWeeklyCycle(series), name);
    assert.equal(forecastSeries(series, DAILY, { horizon: 7, confidence: false }).requestedModel, AUTO_DAILY_SEASONAL_MODEL, name);
  }
  // the doubtful values are read as their weekday's median, the others as they are (in logs)
  const window = weeklyWindow(holiday);
  const start = holiday.length - WEEKLY_STRENGTH_WINDOW;
  // its weekday's 8 values in the window (the holiday among them): the median of 8 is the mean of the middle two
  const sameDay = [...holiday.slice(start)].map((v) => Math.log1p(v)).filter((_, i) => (i - (340 - start)) % 7 === 0).sort((a, b) => a - b);
  assert.equal(sameDay.length, 8);
  assert.ok(Math.abs(window[340 - start] - (sameDay[3] + sameDay[4]) / 2) < 1e-12);
  assert.ok(Math.abs(window[340 - start] - Math.log1p(holiday[333])) < 0.5, 'the holiday reads near its weekday');
  for (let i = 0; i < WEEKLY_STRENGTH_WINDOW; i++) if (start + i !== 340) assert.equal(window[i], Math.log1p(holiday[start + i]));
  // closed days are the cycle, not doubtful: a shop shut on Sundays keeps its zeros
  const { y: shut } = shop(365, 0, 13, 0);
  assert.deepEqual(Array.from(weeklyWindow(shut)), Array.from(shut.slice(-WEEKLY_STRENGTH_WINDOW), (v) => Math.log1p(v)));
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
