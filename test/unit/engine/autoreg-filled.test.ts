import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { forecastSeries } from '../../../src/engine/index';
import { fillErrors } from '../../../src/engine/models/autoreg/filled';
import { Rng } from '../../../src/engine/rng';

/** A cycle of `p` steps (amplitude 50 around 100) plus noise (sd 5): `n` values and `h` more. */
function cycle(p: number, n: number, h: number, seed: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n + h }, (_, t) => 100 + 50 * Math.sin((2 * Math.PI * t) / p) + 5 * rng.normal());
}

/** 95% coverage of the next `h` values over 8 series, with `gap` values missing, ending `before` values before the end. */
function coverage(p: number, n: number, h: number, gap: number, before: number): number {
  let inside = 0;
  for (let seed = 1; seed <= 8; seed++) {
    const all = cycle(p, n, h, seed);
    const y = Float64Array.from(all.slice(0, n));
    y.fill(NaN, n - before - gap, n - before);
    const r = forecastSeries(y, { period: p, periods: [p] }, { horizon: h, confidence: false });
    r.distribution.steps.forEach((s, k) => (inside += all[n + k] >= s.quantile(0.025) && all[n + k] <= s.quantile(0.975) ? 1 : 0));
  }
  return inside / (8 * h);
}

// found by QA: the seasonal lags read a straight line across the missing day as if it were data
// (before: 0.34 for the 15-minute case, 0.59 for the 5-minute one, 0.83 hourly)
test('a gap the forecast reads keeps its intervals honest: the filled values’ own errors are added', () => {
  assert.ok(coverage(96, 768, 96, 84, 10) >= 0.9, '15-minute data, most of the last day missing');
  assert.ok(coverage(288, 1152, 288, 144, 20) >= 0.9, '5-minute data, half a day missing');
  assert.ok(coverage(24, 720, 48, 24, 10) >= 0.9, 'hourly data, a day missing');
});

test('a gap the forecast does not read changes its spread only through the fit', () => {
  const all = cycle(24, 720, 0, 3);
  const y = Float64Array.from(all);
  const far = Float64Array.from(all);
  far.fill(NaN, 100, 124); // more than the largest lag (169) before the end
  const info = { period: 24, periods: [24, 168] };
  const a = forecastSeries(y, info, { horizon: 24, confidence: false, calibrate: 'off' });
  const b = forecastSeries(far, info, { horizon: 24, confidence: false, calibrate: 'off' });
  assert.equal(b.model, a.model);
  for (let k = 0; k < 24; k++) {
    const wa = a.distribution.steps[k].quantile(0.975) - a.distribution.steps[k].quantile(0.025);
    const wb = b.distribution.steps[k].quantile(0.975) - b.distribution.steps[k].quantile(0.025);
    assert.ok(Math.abs(wb / wa - 1) < 0.1, `step ${k + 1}: ${wa} vs ${wb}`);
  }
});

test('fillErrors: a straight line fills a straight series exactly; a cycle’s fill errs by its swing', () => {
  const line = Float64Array.from({ length: 50 }, (_, t) => 3 + 2 * t);
  const lineErrors = fillErrors(line, new Uint8Array(50).fill(1), 5, [0, 2, 4]);
  assert.equal(lineErrors.length, 50 - 6);
  assert.ok(lineErrors.every((e) => e.every((v) => Math.abs(v) < 1e-12)));
  // a period-4 cycle 0, 1, 0, −1: the ends of a 3-value gap are a cycle apart, so the line is flat at
  // the left end and errs by the cycle from there — [1, 0, −1], [−1, −2, −1], [−1, 0, 1], [1, 2, 1]
  const wave = Float64Array.from({ length: 40 }, (_, t) => [0, 1, 0, -1][t % 4]);
  const e = fillErrors(wave, new Uint8Array(40).fill(1), 3, [0, 1, 2]);
  assert.deepEqual(e.slice(0, 4).map((v) => Array.from(v)), [[1, 0, -1], [-1, -2, -1], [-1, 0, 1], [1, 2, 1]]);
  // only stretches whose values and ends are all observed; at most 64 of them, evenly spaced
  const observed = Uint8Array.from({ length: 40 }, (_, t) => (t === 20 ? 0 : 1));
  assert.ok(fillErrors(wave, observed, 3, [0]).length === 40 - 5 - 4);
  assert.equal(fillErrors(Float64Array.from({ length: 5000 }, (_, t) => t % 7), new Uint8Array(5000).fill(1), 3, [1]).length, 64);
  assert.deepEqual(fillErrors(Float64Array.from([1, NaN, NaN, NaN, 3]), Uint8Array.from([1, 0, 0, 0, 1]), 3, [0]), []);
});
