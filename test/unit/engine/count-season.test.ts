import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { forecastSeries, InsufficientDataError, InvalidSeriesError } from '../../../src/engine';
import { countSeason, hasCountCycle } from '../../../src/engine/models/count-season';
import { AUTO_COUNT_SEASONAL_MODEL, COUNT_DEMAND_FLOOR, keepsOwnIntervals } from '../../../src/engine/registry';
import { Rng } from '../../../src/engine/rng';
import { IntegerSizeStep } from '../../../src/engine/models/croston-distribution';
import { logGamma, regularizedBeta } from '../../../src/engine/math/special';
import { hourlyRate, poisson } from '../../helpers/poisson';

const HOURLY = { period: 24, periods: [24, 168], kind: 'count' } as const;

function draw(seed: number, n: number, rate: (t: number) => number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, t) => poisson(rng, rate(t)));
}

test('count-season: hourly low counts get their day and week back, with integer, ordered quantiles', () => {
  const n = 24 * 42;
  const y = draw(3, n, (t) => hourlyRate(t, 1));
  const f = forecastSeries(y, HOURLY, { horizon: 48, model: 'count-season', confidence: false });
  assert.equal(f.model, 'Seasonal counts[24,168]');
  const profile = f.params.profile as Record<string, number[]>;
  assert.deepEqual(Object.keys(profile).sort(), ['168', '24']);
  assert.equal(profile['24'].length, 24);
  // the week's layer is one factor per day (a block of 24 hours)
  assert.equal(profile['168'].length, 7);
  let err = 0;
  for (let k = 0; k < 48; k++) {
    const truth = hourlyRate(n + k, 1);
    err += Math.abs(f.distribution.mean[k] - truth);
    const step = f.distribution.steps[k];
    let prev = -1;
    for (const p of [0.025, 0.1, 0.5, 0.9, 0.975]) {
      const q = step.quantile(p);
      assert.ok(Number.isInteger(q) && q >= prev, `step ${k + 1}: ${q} at ${p}`);
      prev = q;
    }
  }
  // a flat rate (the count default's law) errs by 0.9 on average here (rates 0.09–2.7)
  assert.ok(err / 48 < 0.3, `mean error against the true rate ${err / 48}`);
  // the afternoon above the night, by the profile
  assert.ok(f.distribution.mean[14] > 4 * f.distribution.mean[2], `${f.distribution.mean[14]} vs ${f.distribution.mean[2]}`);
});

test('count-season: 95% intervals hold at the busy hours (the count default covers them about 0.8 of the time)', () => {
  const n = 24 * 42;
  let inside = 0;
  let busy = 0;
  let insideAll = 0;
  let all = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const y = draw(100 + seed, n + 48, (t) => hourlyRate(t, 1));
    const f = forecastSeries(y.slice(0, n), HOURLY, { horizon: 48, model: 'count-season', confidence: false });
    for (let k = 0; k < 48; k++) {
      const v = y[n + k];
      const hit = v >= f.distribution.steps[k].quantile(0.025) && v <= f.distribution.steps[k].quantile(0.975);
      all++;
      if (hit) insideAll++;
      if (hourlyRate(n + k, 1) >= 1.5) {
        busy++;
        if (hit) inside++;
      }
    }
  }
  assert.ok(inside / busy >= 0.93, `busy hours covered ${inside / busy}`);
  // discrete laws of means under 3 cannot be tight at exactly 95%; over 99.5% would mean far too wide
  assert.ok(insideAll / all >= 0.93 && insideAll / all <= 0.995, `all hours covered ${insideAll / all}`);
});

test('count-season: no cycle in the data, no cycle in the forecast (the profile is shrunk to flat)', () => {
  const y = draw(9, 24 * 28, () => 1.2);
  const f = forecastSeries(y, HOURLY, { horizon: 24, model: 'count-season', confidence: false });
  const m = Array.from(f.distribution.mean);
  const mean = m.reduce((a, b) => a + b, 0) / m.length;
  for (const v of m) assert.ok(Math.abs(v / mean - 1) < 0.15, `${v} against ${mean}`);
});

test('count-season: the periods it can use (3 observed cycles; a longer period only as a multiple of the shorter)', () => {
  const daily = draw(4, 400, (t) => [0.6, 0.7, 0.7, 0.8, 1.1, 1.9, 1.2][t % 7]);
  // the year is no multiple of the week, and under 3 cycles anyway
  assert.equal(forecastSeries(daily, { period: 7, periods: [7, 365], kind: 'count' }, { horizon: 7, model: 'count-season', confidence: false }).model, 'Seasonal counts[7]');
  // 1-minute data: the day's layer is one factor per hour
  const minutes = draw(5, 3 * 1440, (t) => 0.5 + Math.floor((t % 1440) / 60) / 20);
  const f = forecastSeries(minutes, { period: 60, periods: [60, 1440], kind: 'count' }, { horizon: 60, model: 'count-season', confidence: false });
  assert.equal((f.params.profile as Record<string, number[]>)['1440'].length, 24);
  // a period that is no multiple of the shorter one is left out, said so
  const odd = forecastSeries(daily, { period: 5, periods: [5, 7], kind: 'count' }, { horizon: 7, model: 'count-season', confidence: false });
  assert.equal(odd.model, 'Seasonal counts[5]');
  assert.ok(odd.warnings.includes('period 7 left out of the profile: not a multiple of 5'), odd.warnings.join('; '));
  // two cycles only: a flat rate, said so
  const short = forecastSeries(daily.slice(0, 20), { period: 7, kind: 'count' }, { horizon: 7, model: 'count-season', confidence: false });
  assert.equal(short.model, 'Seasonal counts');
  assert.ok(short.warnings.some((w) => w.includes('no seasonal period with 3 observed cycles')));
});

test('count-season: bad input is refused with the offending value; gaps are skipped; zeros stay zero', () => {
  assert.throws(() => countSeason.fit([1, 2, 0.5, 3], { period: 1 }), (e: unknown) => e instanceof InvalidSeriesError && /y\[2\] is 0\.5/.test(e.message));
  assert.throws(() => countSeason.fit([1, -1, 3], { period: 1 }), InvalidSeriesError);
  assert.throws(() => countSeason.fit([1, Infinity, 3], { period: 1 }), InvalidSeriesError);
  assert.throws(() => countSeason.fit([NaN, 4, NaN], { period: 1 }), InsufficientDataError);
  // through the facade, continuous values are refused the same way
  assert.throws(() => forecastSeries([1.5, 2, 3, 4], { period: 1 }, { horizon: 2, model: 'count-season' }), InvalidSeriesError);
  const gappy = draw(6, 24 * 21, (t) => hourlyRate(t, 1)).map((v, t) => (t % 50 === 7 ? NaN : v));
  const g = forecastSeries(gappy, HOURLY, { horizon: 24, model: 'count-season', confidence: false });
  assert.ok(g.warnings.some((w) => /missing values skipped/.test(w)));
  assert.ok(g.distribution.mean.every(Number.isFinite));
  const zeros = forecastSeries(new Array(24 * 7).fill(0), HOURLY, { horizon: 5, model: 'count-season', confidence: false });
  for (const s of zeros.distribution.steps) assert.deepEqual([s.quantile(0.01), s.quantile(0.99), s.mean], [0, 0, 0]);
});

test('count-season: keeps its own count laws (no calibration scaling); deterministic; 100,000 steps of large counts', () => {
  assert.equal(keepsOwnIntervals('count-season'), true);
  const y = draw(7, 24 * 28, (t) => hourlyRate(t, 2));
  const a = forecastSeries(y, HOURLY, { horizon: 48, model: 'count-season', seed: 3 });
  const b = forecastSeries(y, HOURLY, { horizon: 48, model: 'count-season', seed: 3 });
  assert.equal(a.calibration, null);
  assert.deepEqual(Array.from(a.distribution.mean), Array.from(b.distribution.mean));
  assert.deepEqual(a.distribution.samplePaths(5, 3).map((p) => Array.from(p)), b.distribution.samplePaths(5, 3).map((p) => Array.from(p)));
  for (const path of a.distribution.samplePaths(20, 1)) assert.ok(path.every((v) => Number.isInteger(v) && v >= 0));
  // tens of thousands a step, 100,000 steps: Gaussian steps (rounded by the count law), not a table each
  const big = Array.from({ length: 24 * 7 }, (_, t) => 20000 + 500 * (t % 24));
  const f = forecastSeries(big, HOURLY, { horizon: 100_000, model: 'count-season', confidence: false, guard: false });
  assert.ok(Number.isInteger(f.distribution.steps[99_999].quantile(0.975)));
});

test('count-season: counts after a long run of zeros do not blow up the dispersion (a level of 0.2 forecast as 0.2, not 80)', () => {
  // as web traffic thinned to a view a day (T54): demand, then 80 silent days, then a 2 and a 1
  const y = [...draw(12, 200, (t) => [0.6, 0.7, 0.7, 0.8, 1.1, 1.9, 1.2][t % 7]), ...new Array(80).fill(0), 2, 0, 1, 0, 0, 0];
  const f = forecastSeries(y, { period: 7, kind: 'count' }, { horizon: 14, model: 'count-season', confidence: false });
  const level = f.params.level as number;
  assert.ok((f.params.dispersion as number) < 10, `dispersion ${f.params.dispersion}`);
  for (const m of f.distribution.mean) assert.ok(m < 3 * level + 0.5, `mean ${m} from a level of ${level}`);
  assert.ok(f.distribution.steps.every((s) => s.quantile(0.975) <= 5));
});

test('negative binomial from the incomplete beta function: the same cdf as the tabulated law', () => {
  // the tabulated law is 1 + X; the closed form is P(X ≤ k) = I_p(r, k + 1)
  for (const [m, v] of [[0.5, 2], [1, 30], [3, 10], [20, 400], [0.1, 5], [100, 5000], [2, 2.5]]) {
    const table = new IntegerSizeStep(m, v);
    const r = (m * m) / (v - m);
    for (let k = 0; k < 200; k += 7) assert.ok(Math.abs(table.cdf(k + 1) - regularizedBeta(r / (r + m), r, k + 1)) < 1e-11, `m ${m} v ${v} k ${k}`);
  }
  assert.ok(Math.abs(logGamma(10) - Math.log(362880)) < 1e-12);
  assert.ok(Math.abs(logGamma(0.5) - Math.log(Math.sqrt(Math.PI))) < 1e-12);
});

// found by QA: a law too wide for a table became a lognormal (no mass at 0), and one outlier made the
// dispersion 4,500 (95% intervals of [0, 0], 200,000-entry tables per step)
test('count-season: sparse large orders keep their zeros; one outlier does not make the law degenerate', () => {
  const orders = Array.from({ length: 100 }, (_, t) => (t % 10 === 3 ? 2000 : 0));
  const f = forecastSeries(orders, { period: 7, kind: 'count' }, { horizon: 3, model: 'count-season', confidence: false });
  for (const s of f.distribution.steps) {
    assert.ok(s.cdf(0) > 0.2, `P(0) ${s.cdf(0)}`);
    assert.equal(s.quantile(0.025), 0);
  }
  const week = [1, 0, 2, 1, 0, 1, 1];
  const z = Array.from({ length: 60 }, (_, t) => week[t % 7]);
  z[50] = 500;
  const g = forecastSeries(z, { period: 7, kind: 'count' }, { horizon: 2000, model: 'count-season', confidence: false });
  assert.ok((g.params.dispersion as number) < 50, `dispersion ${g.params.dispersion}`);
  for (const s of g.distribution.steps.slice(0, 14)) assert.ok(s.quantile(0.975) >= 2, `97.5% quantile ${s.quantile(0.975)}`);
  assert.ok(Number.isInteger(g.distribution.steps[1999].quantile(0.99)));
});

test('hasCountCycle: a cycle that replicates passes; a flat rate and one half\'s spikes do not', () => {
  // the hourly shape: day and week, 6 weeks at a mean of about 1
  assert.equal(hasCountCycle(draw(3, 24 * 42, (t) => hourlyRate(t, 1)), HOURLY), true);
  // the same counts at a flat rate
  for (const seed of [1, 2, 3]) assert.equal(hasCountCycle(draw(seed, 24 * 42, () => 1), HOURLY), false);
  // daily counts at a flat rate of 0.5 where one weekday turned busy (4 a day) in the last five weeks only:
  // the weekdays of the window's first half do not predict its second half's
  const daily = { period: 7, periods: [7, 365], kind: 'count' } as const;
  const y = draw(5, 7 * 20, () => 0.5);
  for (let week = 15; week < 20; week++) y[7 * week + 3] = 4;
  assert.equal(hasCountCycle(y, daily), false);
  // fewer than 3 cycles: no profile to test
  assert.equal(hasCountCycle(draw(3, 24 * 2, (t) => hourlyRate(t, 1)), HOURLY), false);
});

// found by QA (engine 1.12.0): the flat-rate test fired on counts without a cycle (5–61% of such series)
test('hasCountCycle: rare spikes, bursts and a wandering rate are no cycle', () => {
  const hours = 24 * 7 * 12;
  const spikes = (rng: Rng) => Array.from({ length: hours }, () => (rng.uniform() < 0.002 ? 20 + Math.floor(rng.uniform() * 41) : poisson(rng, 1)));
  // bursts: the rate ×8 for 2–8 hours, about one burst in three days
  const bursts = (rng: Rng) => {
    const rate = new Array<number>(hours).fill(1);
    for (let t = 0; t < hours; t++) {
      if (rng.uniform() >= 1 / 72) continue;
      const len = 2 + Math.floor(rng.uniform() * 7);
      for (let j = t; j < Math.min(hours, t + len); j++) rate[j] = 8;
    }
    const m = rate.reduce((s, v) => s + v, 0) / hours;
    return rate.map((v) => poisson(rng, v / m));
  };
  // a rate that wanders: log rate AR(1), coefficient 0.95, innovations of sd 0.3, mean 1
  const wandering = (rng: Rng) => {
    let z = 0;
    return Array.from({ length: hours }, () => {
      z = 0.95 * z + 0.3 * rng.normal();
      return poisson(rng, Math.exp(z - 0.045 / 0.0975));
    });
  };
  // the test before engine 1.15.0 fired on 11, 2 and 10 of these 20 seeds
  for (const [name, draw] of [['spikes', spikes], ['bursts', bursts], ['wandering', wandering]] as const) {
    const fired = [];
    for (let seed = 1; seed <= 20; seed++) if (hasCountCycle(draw(new Rng(seed)), HOURLY)) fired.push(seed);
    assert.deepEqual(fired, [], `${name}: fired on seeds ${fired}`);
  }
});

// found by QA (engine 1.15.0): one incident hour made its half's dispersion so large that the cycle went unseen
test('hasCountCycle: one wild count does not hide a cycle', () => {
  const n = 24 * 42;
  // 1,000 in the last hour; 200 at 03:00 of the last day; 1,000 at 03:00 five weeks back (1.15.0: 0, 4 and 0 of 10)
  for (const [size, at] of [[1000, n - 1], [200, n - 21], [1000, n - 24 * 35 + 3]]) {
    for (let seed = 1; seed <= 10; seed++) {
      const y = draw(seed, n, (t) => hourlyRate(t, 1));
      y[at] = size;
      assert.equal(hasCountCycle(y, HOURLY), true, `${size} at hour ${at}, seed ${seed}`);
    }
  }
});

test('auto: low counts with a cycle go to the pool of count-season and count-pool; without one, count-pool', () => {
  const n = 24 * 42;
  const y = draw(7, n, (t) => hourlyRate(t, 1));
  const f = forecastSeries(y, HOURLY, { horizon: 48, confidence: false });
  assert.equal(f.requestedModel, AUTO_COUNT_SEASONAL_MODEL);
  assert.ok(keepsOwnIntervals(f.requestedModel), 'hurdle and count laws keep their own intervals');
  // a busy weekday afternoon (15:00) against the night (03:00) of the next day
  const day = Math.floor(n / 24) % 7 >= 5 ? 2 : 0;
  const busy = f.distribution.steps[24 * day + 15];
  const night = f.distribution.steps[24 * day + 3];
  assert.ok(busy.quantile(0.975) > night.quantile(0.975) + 1, `busy ${busy.quantile(0.975)} night ${night.quantile(0.975)}`);
  assert.ok(f.distribution.mean[24 * day + 15] > 3 * f.distribution.mean[24 * day + 3]);
  const flat = forecastSeries(draw(7, n, () => 1), HOURLY, { horizon: 48, confidence: false });
  assert.equal(flat.requestedModel, 'count-pool');
  // continuous data of the same shape never take the count route
  assert.notEqual(forecastSeries(y, { ...HOURLY, kind: 'continuous' }, { horizon: 48, confidence: false }).requestedModel, AUTO_COUNT_SEASONAL_MODEL);
});

// found by QA (engine 1.12.0): count-season's level smooths to 0 after a run of zeros, and the pool halved count-pool's floor
test('auto on low counts with a cycle keeps the 3% demand floor after a run of zeros', () => {
  const y = draw(5, 24 * 42, (t) => hourlyRate(t, 1)).concat(new Array(24 * 7).fill(0));
  const f = forecastSeries(y, HOURLY, { horizon: 48, seed: 1, confidence: false });
  assert.equal(f.requestedModel, AUTO_COUNT_SEASONAL_MODEL);
  assert.match(f.model, /^count-cycle\(Seasonal counts\[24,168\], count-pool\(/);
  for (const [k, step] of f.distribution.steps.entries()) {
    assert.ok(1 - step.cdf(0) >= COUNT_DEMAND_FLOOR - 1e-12, `step ${k + 1}: P(>0) ${1 - step.cdf(0)}`);
    assert.ok(step.quantile(0.975) >= 1, `step ${k + 1}: the 97.5% quantile is 0`);
  }
});
