import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { InsufficientDataError } from '../../../src/engine/errors';
import { autoreg } from '../../../src/engine/models/autoreg/index';
import { arPsi, dominantGrowth, fitSubsetAr } from '../../../src/engine/models/autoreg/fit';
import { autoregLags } from '../../../src/engine/models/autoreg/lags';
import { Rng } from '../../../src/engine/rng';
import { fixtureJson } from '../../helpers/files';

interface GoldenCase {
  name: string;
  y: number[];
  period: number;
  periods: number[];
  lags: number[];
  log: boolean;
  difference: boolean;
  h: number;
  intercept: number;
  phi: number[];
  sigma: number;
  forecast: number[];
}

const golden = fixtureJson('r/autoreg-lm.json') as { cases: GoldenCase[] };

function close(a: number, b: number, rel: number, what: string): void {
  assert.ok(Math.abs(a - b) <= rel * Math.max(1, Math.abs(b)), `${what}: ${a} vs R ${b}`);
}

test('autoreg matches R lm() on the lag matrix: coefficients, sigma, recursive forecasts', () => {
  for (const c of golden.cases) {
    const fit = autoreg.fit(c.y, { period: c.period, periods: c.periods }, {
      transform: c.log ? 'log' : 'none',
      difference: c.difference,
      window: 1e9,
    });
    assert.deepEqual(fit.params.lags, c.lags, c.name);
    const phi = fit.params.phi as number[];
    c.phi.forEach((v, j) => close(phi[j], v, 1e-7, `${c.name} phi[${j}]`));
    close(fit.params.intercept as number, c.intercept, 1e-7, `${c.name} intercept`);
    close(fit.params.sigma as number, c.sigma, 1e-7, `${c.name} sigma`);
    const f = fit.forecast(c.h);
    c.forecast.forEach((v, k) => close(f.mean[k], v, 1e-7, `${c.name} forecast[${k}]`));
  }
});

test('default lags: 1..3 and p−1, p, p+1 per period; trimmed on short series', () => {
  assert.deepEqual(autoregLags([24, 168], 900), [1, 2, 3, 23, 24, 25, 167, 168, 169]);
  assert.deepEqual(autoregLags([52], 520), [1, 2, 3, 51, 52, 53]);
  assert.deepEqual(autoregLags([], 50), [1, 2, 3]);
  assert.deepEqual(autoregLags([24, 168], 180), [1, 2, 3, 23, 24, 25]);
  assert.deepEqual(autoregLags([], 100, { lags: [5, 1, 5] }), [1, 5]);
});

test('psi weights of an AR(1) are powers of phi', () => {
  const rng = new Rng(4);
  const x = new Float64Array(400);
  for (let t = 1; t < x.length; t++) x[t] = 0.6 * x[t - 1] + rng.normal();
  const fit = fitSubsetAr(x, new Uint8Array(x.length).fill(1), [1], 0)!;
  const psi = arPsi(fit, 5);
  for (let s = 0; s < 5; s++) assert.ok(Math.abs(psi[s] - fit.phi[0] ** s) < 1e-12);
});

/** Hourly-like positive series: daily and weekly cycles, noise. */
function hourly(n: number, seed = 1): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, t) => 100 + 10 * Math.sin((2 * Math.PI * t) / 24) + 5 * Math.cos((2 * Math.PI * t) / 168) + rng.normal());
}

test('autoreg forecasts two cycles, quantiles are monotone, output is deterministic', () => {
  const y = hourly(24 * 7 * 5 + 48);
  const train = y.slice(0, -48);
  const info = { period: 24, periods: [24, 168] };
  const f = autoreg.fit(train, info).forecast(48);
  const mae = y.slice(-48).reduce((s, v, k) => s + Math.abs(v - f.mean[k]), 0) / 48;
  assert.ok(mae < 2, `MAE ${mae}`);
  for (const s of f.steps) {
    let prev = -Infinity;
    for (const p of [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99]) {
      const q = s.quantile(p);
      assert.ok(q >= prev, 'quantiles non-decreasing');
      assert.ok(Math.abs(s.cdf(q) - p) < 1e-9, 'cdf inverts quantile');
      prev = q;
    }
  }
  const again = autoreg.fit(train, info).forecast(48);
  assert.deepEqual(Array.from(again.mean), Array.from(f.mean));
  assert.deepEqual(f.samplePaths(5, 3), again.samplePaths(5, 3));
  assert.notDeepEqual(f.samplePaths(5, 3), f.samplePaths(5, 4));
});

test('edge cases: short, gaps, trailing gaps, constant, negatives, explosive growth', () => {
  assert.throws(() => autoreg.fit([1, 2, 3, 4, 5], { period: 1 }), InsufficientDataError);
  const finite = (label: string, y: number[], h = 12, period = 12): void => {
    const fit = autoreg.fit(y, { period });
    const f = fit.forecast(h);
    assert.equal(f.mean.length, h, label);
    for (const s of f.steps) {
      for (const p of [0.025, 0.5, 0.975]) assert.ok(Number.isFinite(s.quantile(p)), `${label}: ${fit.model} ${fit.warnings}`);
    }
  };
  finite('short', [3, 5, 4, 6, 5, 7, 6, 8, 7, 9, 8, 10], 4, 1);
  const gappy = hourly(300).map((v, t) => (t % 17 === 5 ? NaN : v));
  finite('gaps', gappy, 24, 24);
  const trailing = [...hourly(300), NaN, NaN];
  const ft = autoreg.fit(trailing, { period: 24 });
  assert.equal(ft.forecast(10).mean.length, 10);
  const flat = autoreg.fit(new Array(60).fill(7), { period: 12 });
  const ff = flat.forecast(5);
  for (const s of ff.steps) assert.equal(s.quantile(0.975), 7);
  const neg = autoreg.fit(hourly(300).map((v) => v - 100), { period: 24 }, { transform: 'log' });
  assert.ok(neg.warnings.some((w) => w.includes('log transform skipped')));
  finite('explosive', Array.from({ length: 80 }, (_, t) => 1.1 ** t), 24, 1);
});

test('dominantGrowth: the spectral radius of the AR recursion', () => {
  const g = (lags: number[], phi: number[]) => dominantGrowth({ lags, phi: Float64Array.from(phi) });
  assert.ok(Math.abs(g([1], [0.9]) - 0.9) < 1e-9);
  assert.ok(Math.abs(g([1], [1.01]) - 1.01) < 1e-9);
  assert.ok(Math.abs(g([1], [-0.5]) - 0.5) < 1e-9);
  assert.ok(Math.abs(g([7], [1]) - 1) < 1e-9); // a seasonal unit root
  assert.ok(Math.abs(g([1, 2], [1.2, -0.8]) - Math.sqrt(0.8)) < 1e-3); // complex pair, modulus √0.8
  assert.ok(g([1, 7], [0.3, 0.69]) < 1 && g([1, 7], [0.3, 0.71]) > 1);
});

test('a slightly explosive fit is refitted for a long horizon, and kept for a short one', () => {
  // the demo store:paris demand (src/oracle/demo-data.ts): its log AR has Σφ ≈ 1.036, a dominant
  // mode ×1.005 a step, which stays in range for 48 steps and diverged to 2,564 by day 365
  const y: number[] = fixtureJson('demo-paris-demand.json');
  const plain = fitSubsetAr(Float64Array.from(y.slice(-70), Math.log), new Uint8Array(70).fill(1), [1, 2, 3, 6, 7, 8], 0)!;
  assert.ok(dominantGrowth(plain) > 1.001);
  const short = autoreg.fit(y, { period: 7 });
  short.forecast(48);
  assert.deepEqual(short.params.phi, [...plain.phi]);
  assert.deepEqual(short.warnings, []);
  const long = autoreg.fit(y, { period: 7 });
  const f = long.forecast(1000);
  assert.ok(long.warnings.some((w) => w.startsWith('explosive or singular fit: ridge')), String(long.warnings));
  assert.ok(dominantGrowth({ lags: long.params.lags as number[], phi: Float64Array.from(long.params.phi as number[]) }) ** 1000 <= 2);
  const inRange = (series: number[], forecast: { steps: readonly { quantile(p: number): number }[] }) => {
    // within the history's range widened by its width (the demo data trend 12% over two years)
    const [lo, hi] = [Math.min(...series), Math.max(...series)];
    for (const k of [99, 364, 999]) {
      const m = forecast.steps[k].quantile(0.5);
      assert.ok(m > lo - (hi - lo) && m < hi + (hi - lo), `step ${k + 1}: median ${m} far outside the history's ${lo}..${hi}`);
    }
  };
  inRange(y, f);
  // the two demo stores summed (the region of a depth query): a unit root with a drift in logs,
  // within the growth bound but leaving the recursion's range over 1,000 steps (median 23,788 before)
  const berlin: number[] = fixtureJson('demo-berlin-demand.json');
  const region = y.map((v, t) => v + berlin[t]);
  inRange(region, autoreg.fit(region, { period: 7 }).forecast(1000));
});

test('missing values: a lag whose filled-in value would contain its own target is left out, so intervals stay honest (every 2nd or 3rd value missing)', () => {
  const rng = new Rng(5);
  const noise = Array.from({ length: 400 }, () => 50 + 3 * rng.normal()); // the true 95% interval is 50 ± 5.9
  for (const [keep, dropped] of [[1, ''], [2, '1'], [3, '1, 2']] as const) {
    const y = noise.map((v, t) => (t % keep === (400 - 1) % keep ? v : NaN));
    const fitted = autoreg.fit(y, { period: 7 }, {});
    const step = fitted.forecast(1).steps[0];
    const width = step.quantile(0.975) - step.quantile(0.025);
    assert.ok(width > 9 && width < 16, `every ${keep}: width ${width} (${fitted.model})`);
    assert.equal(fitted.warnings.some((w) => w.startsWith(`lags ${dropped} left out`)), keep > 1, `every ${keep}: ${fitted.warnings.join('; ')}`);
  }
});

test('a recent gap longer than the window: the window reaches back to enough observations instead of refusing the series', () => {
  // 30 days, a gap of 60, then one day: the usual window (10 weeks) holds 1 observation
  const y = [...Array.from({ length: 30 }, (_, t) => 20 + (t % 7)), ...Array(60).fill(NaN), 24];
  const fitted = autoreg.fit(y, { period: 7 }, {});
  const step = fitted.forecast(1).steps[0];
  assert.ok(step.quantile(0.5) > 15 && step.quantile(0.5) < 30, `${step.quantile(0.5)}`);
  assert.throws(() => autoreg.fit([...Array(9).fill(5), ...Array(60).fill(NaN)], { period: 7 }, {}), InsufficientDataError);
});

test('a sparse series (one value every 20 days) that no autoregression fits gets a flat forecast with the spread of its data, not a certain one', () => {
  const rng = new Rng(11);
  const y = Array.from({ length: 365 }, (_, t) => (t % 20 === 0 ? 50 + 3 * rng.normal() : NaN));
  const fitted = autoreg.fit(y, { period: 7 }, {});
  assert.ok(fitted.warnings.includes('no stable autoregression: flat forecast with the spread of the data'), fitted.warnings.join('; '));
  const step = fitted.forecast(7).steps[6];
  const width = step.quantile(0.975) - step.quantile(0.025);
  assert.ok(width > 6 && width < 25, `width ${width}`);
});
