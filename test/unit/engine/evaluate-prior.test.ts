import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { fitCurve, fitPriors, priorRecord, sideFactor, summedTraining, validationSplit, type PriorRecord } from '../../../src/cli/evaluate-prior';
import type { BenchmarkSeries } from '../../../src/cli/evaluate-data';
import { PRIOR_FACTOR_BOUNDS } from '../../../src/engine/calibration/conformal';

const series = (n: number, h: number): BenchmarkSeries => ({
  id: 'x',
  group: 'yearly',
  period: 1,
  horizon: h,
  train: Array.from({ length: n }, (_, i) => i + 1),
  test: Array.from({ length: h }, (_, i) => 1000 + i),
});

/** A validation record of `y` around a mean of 0 whose model interval is [lo, hi] at every step. */
function toyRecord(i: number, y: number[], fields: Omit<Partial<PriorRecord>, 'lo' | 'hi'> & { lo?: number; hi?: number } = {}): PriorRecord {
  const h = y.length;
  const { lo = -1, hi = 1, ...rest } = fields;
  return {
    set: 's',
    series: i,
    window: 1,
    model: 'm',
    period: 1,
    length: 's',
    y,
    mean: new Array(h).fill(0),
    lo: new Array(h).fill(lo),
    hi: new Array(h).fill(hi),
    bandLo: new Array(h).fill(-Infinity),
    bandHi: new Array(h).fill(Infinity),
    scale: 1,
    backtest: { model: 'm', origins: [], crps: NaN, coverage: NaN, pinball: [], failures: [] },
    ...rest,
  };
}

test('priors are fitted on the training part only: its last horizon values are the window, the test part is dropped', () => {
  const v = validationSplit(series(20, 6))!;
  assert.deepEqual(v.train, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  assert.deepEqual(v.test, [15, 16, 17, 18, 19, 20]);
  assert.equal(v.horizon, 6);
  assert.ok(!v.test.some((y) => y >= 1000) && !v.train.some((y) => y >= 1000));
  assert.ok(validationSplit(series(14, 6)), 'the shortest M3 series (14 yearly values) keeps 8');
  assert.equal(validationSplit(series(13, 6)), null);
  // the window before: the 6 values before the last 6, forecast from the 8 before them
  const w2 = validationSplit(series(20, 6), 2)!;
  assert.deepEqual(w2.train, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(w2.test, [9, 10, 11, 12, 13, 14]);
  assert.equal(validationSplit(series(19, 6), 2), null);
});

test('a history cut short (--cut) is forecast from its last N values, joins its length class and stays out of the pooled class', () => {
  const long = { ...series(80, 6), group: 'weekly', train: Array.from({ length: 80 }, (_, i) => 100 + 10 * Math.sin(i) + (i % 3)) };
  const full = priorRecord(long, 'w', 0, 1)!;
  const cut = priorRecord(long, 'w', 0, 1, 12)!;
  assert.equal(full.length, 'l');
  assert.equal(full.cut, undefined);
  assert.equal(cut.length, 's');
  assert.equal(cut.cut, 12);
  assert.equal(cut.set, 'w weekly last 12');
  assert.deepEqual(cut.y, full.y, 'the same validation window');
  assert.equal(priorRecord(long, 'w', 0, 2, 70), null, 'a history shorter than the cut is left out');
  // 120 full histories and 120 cut ones erring 3x as far: the pooled prior is the full ones' alone
  const h = 6;
  const record = (i: number, length: 's' | 'l', scale: number, cutTo?: number): PriorRecord =>
    toyRecord(
      i,
      Array.from({ length: h }, (_, k) => ((i % 2 === 0 ? 1 : -1) * scale * (((i * 7 + k) % 40) + 1)) / 40),
      { length, ...(cutTo === undefined ? {} : { cut: cutTo }) },
    );
  const fulls = Array.from({ length: 120 }, (_, i) => record(i, 'l', 1));
  const cuts = Array.from({ length: 120 }, (_, i) => record(i, 's', 3, 12));
  const without = fitPriors(fulls).priors;
  const withCuts = fitPriors([...fulls, ...cuts]).priors;
  const pooled = (ps: typeof without) => ps.find((p) => p.length === '*');
  assert.deepEqual(pooled(withCuts), pooled(without));
  assert.equal(without.find((p) => p.length === 's'), undefined);
  const short = withCuts.find((p) => p.length === 's')!;
  assert.ok(short.upper.a > pooled(without)!.upper.a + Math.log(2), 'the short class learns the wider errors');
});

test('fitPriors refuses a length class holding both histories cut short and full ones (the cut would move the full ones\' prior)', () => {
  const h = 6;
  const record = (i: number, cutTo?: number): PriorRecord =>
    toyRecord(i, Array.from({ length: h }, (_, k) => ((i % 2 === 0 ? 1 : -1) * (((i * 7 + k) % 40) + 1)) / 40), { length: 'l', ...(cutTo === undefined ? {} : { cut: cutTo }) });
  const fulls = Array.from({ length: 120 }, (_, i) => record(i));
  assert.throws(() => fitPriors([...fulls, ...Array.from({ length: 120 }, (_, i) => record(i, 60))]), /--cut: class m\|1\|l would hold both/);
  // cut histories of a route no full history takes make a class of their own (hourly under 504 hours: Theta)
  const other = Array.from({ length: 120 }, (_, i) => ({ ...record(i, 240), model: 'theta' }));
  const priors = fitPriors([...fulls, ...other]).priors;
  assert.deepEqual(priors.map((p) => `${p.model}|${p.length}`), ['m|*', 'theta|l']);
  assert.deepEqual(priors[0], fitPriors(fulls).priors[0]);
});

test('a summed source (--sum) sums the training part only, so its validation windows hold no test value', () => {
  // 30 "hourly" values summed over 4: 7 blocks aligned to the training part's end (the first 2 values dropped)
  const hourly = { ...series(30, 6), group: 'hourly', period: 24 };
  const d = summedTraining(hourly, 4, 2);
  assert.equal(d.group, 'hourly×4');
  assert.equal(d.horizon, 2);
  assert.deepEqual(d.test, []);
  assert.deepEqual(d.train, [3, 7, 11, 15, 19, 23, 27].map((t) => 4 * t + 6));
  assert.ok(d.train.every((y) => y < 1000), 'no test value (1000 and up) in a sum');
  // a known frequency becomes the one its sum is: hourly × 24 is daily, period 7
  const day = summedTraining({ ...series(48 * 10, 48), group: 'hourly', period: 24 }, 24, 7);
  assert.equal(day.group, 'daily');
  assert.equal(day.period, 7);
  assert.equal(day.train.length, 20);
});

test('fitCurve recovers each side\'s log-linear factor curve from errors at known multiples of that side\'s reach', () => {
  const h = 6;
  const up = (k: number) => Math.exp(0.1 + 0.2 * Math.log(k + 1));
  const down = (k: number) => Math.exp(-0.3 + 0.1 * Math.log(k + 1));
  // per step, 80 records: errors at u × truth(k) × reach with u = 1/40..40/40, alternating sides; reach 2 above, 1 below
  const records: PriorRecord[] = Array.from({ length: 80 }, (_, i) => {
    const sign = i % 2 === 0 ? 1 : -1;
    const u = (Math.floor(i / 2) + 1) / 40;
    return toyRecord(i, Array.from({ length: h }, (_, k) => (sign > 0 ? u * up(k) * 2 : -u * down(k) * 1)), { hi: 2 });
  });
  // 80 errors per step: floor(0.025 × 81) = 2 may lie beyond each end, so each side's factor is its third-largest multiple, 38/40
  const q = 38 / 40;
  for (const [side, truth, shift] of [['upper', up, 0.1], ['lower', down, -0.3]] as const) {
    const { a, b, c, steps, last } = fitCurve(records, side);
    assert.equal(last, h); // the last step with a factor: the facade goes on with the slope there
    for (let k = 0; k < h; k++) assert.ok(Math.abs(steps[k] - q * truth(k)) < 1e-12, `${side} step ${k}: ${steps[k]}`);
    assert.ok(Math.abs(a - (Math.log(q) + shift)) < 1e-9, `${side} a ${a}`);
    assert.ok(Math.abs(b - (side === 'upper' ? 0.2 : 0.1)) < 1e-9, `${side} b ${b}`);
    assert.equal(c, 0);
  }
  // a step with fewer than 20 errors has no factor, and the curve's last step is the one before it
  const cut = records.map((r, i) => (i < 19 ? r : { ...r, y: r.y.slice(0, h - 1) }));
  assert.equal(fitCurve(cut, 'upper').last, h - 1);
});

test('sideFactor: each end may be missed by at most 2.5% of all errors; NaN under 20, the smallest factor when no error needs covering', () => {
  const z = Array.from({ length: 30 }, (_, i) => i + 1); // 30 errors on this side out of 100
  assert.equal(sideFactor(z, 100, 0.025), 28); // floor(0.025 × 101) = 2 beyond: 29 and 30
  assert.ok(Number.isNaN(sideFactor(z, 19, 0.025)));
  assert.equal(sideFactor([3, 5], 100, 0.025), PRIOR_FACTOR_BOUNDS[0]);
  assert.equal(sideFactor([], 100, 0.025), PRIOR_FACTOR_BOUNDS[0]);
});

test('a prior record can cross to the main thread: no forecast objects in its backtest, the errors kept', () => {
  const s: BenchmarkSeries = { ...series(40, 4), train: Array.from({ length: 40 }, (_, i) => 100 + 10 * Math.sin(i) + i) };
  const r = priorRecord(s, 'x', 0, 1)!;
  assert.ok(r.backtest.origins.length > 0);
  const copy = structuredClone(r);
  assert.deepEqual(copy.backtest.origins[0].errors, r.backtest.origins[0].errors);
  assert.equal(copy.backtest.origins[0].forecast, undefined);
});
