import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { theta } from '../../../src/engine/models/theta';
import { InsufficientDataError } from '../../../src/engine/errors';
import { nelderMead } from '../../../src/engine/optim/nelder-mead';
import { fitThetaCore } from '../../../src/engine/models/theta-fit';
import { Rng } from '../../../src/engine/rng';
import { fixtureJson } from '../../helpers/files';

interface Case {
  name: string; period: number; h: number; y: number[]; alpha: number;
  mean: number[]; lower80: number[]; upper80: number[]; lower95: number[]; upper95: number[];
}
const cases: Case[] = fixtureJson('r/theta-thetaf.json');

test('standard Theta matches R thetaf (means 1e-4 relative, interval half-widths 2e-3 relative)', () => {
  // Tolerances: R fits (α, ℓ0) jointly by Nelder–Mead to reltol 1e-8; the engine profiles ℓ0 out
  // exactly, so the two optima agree to the optimiser's accuracy, not to rounding.
  for (const c of cases) {
    const fit = theta.fit(c.y, { period: c.period });
    const f = fit.forecast(c.h);
    const figure = fit.params.seasonalIndices as number[] | null;
    for (let k = 0; k < c.h; k++) {
      assert.ok(Math.abs(f.mean[k] - c.mean[k]) <= 1e-4 * Math.abs(c.mean[k]), `${c.name} mean[${k}] ${f.mean[k]} vs ${c.mean[k]}`);
      // R adds the unscaled sd to the reseasonalised mean; the engine scales it by the seasonal index.
      const idx = figure ? figure[(c.y.length + k) % c.period] : 1;
      const rHalf = (c.upper95[k] - c.lower95[k]) / 2;
      const half = (f.steps[k].quantile(0.975) - f.steps[k].quantile(0.025)) / 2;
      assert.ok(Math.abs(half / idx - rHalf) <= 2e-3 * rHalf, `${c.name} 95% half-width[${k}] ${half / idx} vs ${rHalf}`);
    }
    assert.ok(Math.abs((fit.params.alpha as number) - c.alpha) < 2e-3, `${c.name} alpha ${fit.params.alpha} vs ${c.alpha}`);
  }
});

test('OTM and DOTM: finite, fit at least as well as standard Theta in-sample on trending data', () => {
  for (const c of cases) {
    for (const variant of ['optimised', 'dynamic'] as const) {
      const fit = theta.fit(c.y, { period: c.period }, { variant });
      const f = fit.forecast(c.h);
      assert.ok(f.mean.every(Number.isFinite), `${c.name} ${variant}`);
      assert.ok((fit.params.theta as number) >= 1);
      const a = fit.params.alpha as number;
      assert.ok(a >= 0.1 && a <= 0.99);
    }
  }
  // A straight line: OTM recovers it (θ → the value that reproduces the slope), errors ~ 0.
  const line = Array.from({ length: 40 }, (_, i) => 10 + 2 * i);
  const f = theta.fit(line, { period: 1 }, { variant: 'optimised' }).forecast(3);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(f.mean[k] - (10 + 2 * (40 + k))) < 1e-6, `${f.mean[k]}`);
  const d = theta.fit(line, { period: 1 }, { variant: 'dynamic' }).forecast(3);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(d.mean[k] - (10 + 2 * (40 + k))) < 1e-6, `${d.mean[k]}`);
});

test('theta: quantiles monotone, same seed same paths, edge cases', () => {
  const air = cases[0];
  const f = theta.fit(air.y, { period: 12 }, { variant: 'dynamic' }).forecast(24);
  for (const s of f.steps) {
    let prev = -Infinity;
    for (const p of [0.01, 0.1, 0.5, 0.9, 0.99]) {
      const q = s.quantile(p);
      assert.ok(q > prev);
      prev = q;
      assert.ok(Math.abs(s.cdf(q) - p) < 1e-12);
    }
  }
  assert.deepEqual(f.samplePaths(10, 5), f.samplePaths(10, 5));
  const c = theta.fit([4, 4, 4, 4, 4, 4], { period: 1 }).forecast(3);
  assert.deepEqual(Array.from(c.mean), [4, 4, 4]);
  for (const variant of ['standard', 'optimised', 'dynamic'] as const) {
    const z = theta.fit([0, 0, 0, 0, 0, 0, 0], { period: 1 }, { variant }).forecast(2);
    assert.ok(z.mean.every((v) => Math.abs(v) < 1e-12), variant);
    const gaps = theta.fit([1, 2, NaN, 4, 5, 6, NaN, 8, NaN], { period: 1 }, { variant });
    assert.ok(gaps.warnings.length > 0);
    assert.ok(gaps.forecast(3).mean.every(Number.isFinite));
  }
  // leading/trailing gaps: the same model as on the observed stretch, the horizon counted from the series' end
  const base = theta.fit(air.y, { period: 12 }).forecast(5);
  const padded = theta.fit([NaN, NaN, ...air.y, NaN], { period: 12 }).forecast(4);
  for (let k = 0; k < 4; k++) assert.ok(Math.abs(padded.mean[k] - base.mean[k + 1]) < 1e-9 * base.mean[k + 1]);
  assert.throws(() => theta.fit([1, 2], { period: 1 }), InsufficientDataError);
  assert.throws(() => theta.fit([1, 2, 3, 4], { period: 1 }, { variant: 'dynamic' }), InsufficientDataError);
  const neg = theta.fit(air.y.map((v) => v - 300), { period: 12 }).forecast(12);
  assert.ok(neg.mean.every(Number.isFinite));
});

/** Independent transcription of the OTM/DOTM recursion of statsforecast `theta.cpp` (`calc`): Σ e[3:]². */
function referenceSse(y: number[], type: 'otm' | 'dotm', l0: number, alpha: number, th: number): number {
  const n = y.length;
  const w = 1 - 1 / th;
  let meany = y[0];
  let A: number;
  let B: number;
  if (type === 'dotm') {
    A = y[0];
    B = 0;
  } else {
    const ym = y.reduce((s, v) => s + v, 0) / n;
    const wa = y.reduce((s, v, i) => s + v * (i + 1), 0) / n;
    B = (6 * (2 * wa - (n + 1) * ym)) / (n * n - 1);
    A = ym - ((n + 1) * B) / 2;
  }
  let level = alpha * y[0] + (1 - alpha) * l0;
  let sse = 0;
  for (let i = 1; i < n; i++) {
    const mu = level + w * (A * (1 - alpha) ** i + (B * (1 - (1 - alpha) ** (i + 1))) / alpha);
    if (i >= 3) sse += (y[i] - mu) ** 2;
    const nm = (i * meany + y[i]) / (i + 1);
    if (type === 'dotm') {
      B = ((i - 1) * B + (6 * (y[i] - meany)) / (i + 1)) / (i + 2);
      A = nm - (B * (i + 2)) / 2;
    }
    level = alpha * y[i] + (1 - alpha) * level;
    meany = nm;
  }
  return sse;
}

test('OTM/DOTM parameters reproduce their SSE in the reference recursion and beat a 3-parameter search', () => {
  for (const c of cases.filter((x) => x.name === 'Nile' || x.name === 'austres')) {
    for (const type of ['otm', 'dotm'] as const) {
      const f = fitThetaCore(c.y, type);
      const mine = referenceSse(c.y, type, f.l0, f.alpha, 1 / (1 - f.w));
      assert.ok(Math.abs(mine - f.sse) <= 1e-9 * f.sse, `${c.name} ${type}: ${mine} vs ${f.sse}`);
      const r = nelderMead((x) => referenceSse(c.y, type, x[0], x[1], x[2]), [c.y[0], 0.5, 2], {
        lower: [-1e10, 0.1, 1], upper: [1e10, 0.99, 1e10], maxEvaluations: 4000, tolerance: 1e-14,
      });
      assert.ok(mine <= r.value * (1 + 1e-9), `${c.name} ${type}: ${mine} vs search ${r.value}`);
    }
  }
});

test('Theta and DOTM keep the daily cycle of a 3-day hourly history', () => {
  // 72 hours: before engine 1.18.0 the seasonality test could not pass with under 4 cycles,
  // and both forecast the next day flat
  const rng = new Rng(7);
  let e = 0;
  const y = Array.from({ length: 72 }, (_, t) => {
    e = 0.6 * e + 5 * rng.normal();
    return 100 + 20 * Math.sin((2 * Math.PI * t) / 24) + e;
  });
  for (const variant of ['standard', 'dynamic'] as const) {
    const fit = theta.fit(y, { period: 24 }, { variant });
    assert.equal(fit.params.seasonal, true, variant);
    const mean = fit.forecast(24).mean;
    // the forecast's swing over the next day is close to the true 40 (peak at hour 78, trough at 90)
    const swing = Math.max(...mean) - Math.min(...mean);
    assert.ok(swing > 30 && swing < 50, `${variant}: swing ${swing}`);
    assert.ok(mean[6] - mean[18] > 30, `${variant}: peak ${mean[6]} trough ${mean[18]}`);
  }
});
