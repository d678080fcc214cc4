/**
 * The reconciliation engine (src/engine/reconcile): structures, each method against hand-derived
 * values, the Schäfer–Strimmer shrinkage against a direct transcription of hts::shrink.estim,
 * coherence of means and draws, count axes, non-negative continuous data, determinism.
 */
import { describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { completeRows, shrinkCovariance } from '../../../src/engine/reconcile/covariance';
import { buildReconciler, atomsOf } from '../../../src/engine/reconcile/methods';
import { aggregate, atomsWhere, baseDraws, buildStructure, errorRows, reconcile, sampleCrps, drawsStep, quantileGrid } from '../../../src/engine/reconcile/index';
import { cholesky, choleskySolve } from '../../../src/engine/reconcile/linalg';
import { EmpiricalStep } from '../../../src/engine/distributions/empirical-step';
import { NormalStep } from '../../../src/engine/distributions/normal-step';
import { ClampedStep } from '../../../src/engine/guard';
import { quantileGridMean } from '../../../src/engine/distributions/moments';
import { summariseStep } from '../../../src/oracle/summary';
import { Rng } from '../../../src/engine/rng';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

/** Total = A + B, A and B leaves. */
const simple = () => buildStructure([['a', 'b'], ['a'], ['b']], [false, true, true]);

/** Total split by region (N, S) and by purpose (H, W): 4 leaves, 7 nodes. */
const grouped = () =>
  buildStructure(
    [['NH', 'NW', 'SH', 'SW'], ['NH', 'NW'], ['SH', 'SW'], ['NH', 'SH'], ['NW', 'SW'], ['NH'], ['NW'], ['SH'], ['SW']],
    [false, false, false, false, false, true, true, true, true],
  );

describe('structure', () => {
  test('atoms are the leaves told apart by the nodes; a leaf under several parents counts once', () => {
    const s = grouped();
    assert.equal(s.nodes, 9);
    assert.equal(s.atoms, 4);
    assert.deepEqual(Array.from(s.nodeLeaves), [4, 2, 2, 2, 2, 1, 1, 1, 1]);
    assert.deepEqual(Array.from(aggregate(s, [1, 2, 3, 4])), [10, 3, 7, 4, 6, 1, 2, 3, 4]);
    // a truncated grouped structure: the leaves no node tells apart merge into one atom
    const t = buildStructure([['NH', 'NW', 'SH', 'SW'], ['NH', 'NW'], ['SH', 'SW']], [false, true, true]);
    assert.equal(t.atoms, 2);
    assert.deepEqual(Array.from(t.atomLeaves), [2, 2]);
    assert.throws(() => buildStructure([[]], [true]), /sums no leaf/);
  });
});

describe('linear methods', () => {
  test('OLS on Total = A + B matches the hand-derived projection', () => {
    const r = buildReconciler(simple(), 'ols');
    const y = aggregate(r.structure, atomsOf(r, [10, 4, 5]));
    [29 / 3, 13 / 3, 16 / 3].forEach((v, i) => close(y[i], v));
  });

  test('structural WLS weights a node by the leaves it sums; bottom-up keeps the bottom forecasts', () => {
    // Λ = diag(1/2, 1, 1): Sᵀ Λ S = [[1.5, .5], [.5, 1.5]], Sᵀ Λ ŷ = (5 + 4, 5 + 5)
    const wls = buildReconciler(simple(), 'wls_struct');
    const beta = atomsOf(wls, [10, 4, 5]);
    close(beta[0], (1.5 * 9 - 0.5 * 10) / 2);
    close(beta[1], (1.5 * 10 - 0.5 * 9) / 2);
    const bu = buildReconciler(grouped(), 'bottom_up');
    const base = [100, 40, 60, 55, 45, 11, 22, 33, 44];
    assert.deepEqual(Array.from(aggregate(bu.structure, atomsOf(bu, base))), [110, 33, 77, 44, 66, 11, 22, 33, 44]);
    assert.deepEqual(bu.warnings, []);
  });

  test('a coherent base forecast is left unchanged by every method; bottom-up over overlapping nodes warns', () => {
    const s = grouped();
    const coherent = Array.from(aggregate(s, [3, 1, 4, 1.5]));
    const rng = new Rng(3);
    const residuals = Array.from({ length: 9 }, () => Float64Array.from({ length: 40 }, () => rng.normal()));
    for (const method of ['mint_shrink', 'wls_struct', 'ols', 'bottom_up'] as const) {
      const r = buildReconciler(s, method, residuals);
      assert.equal(r.method, method);
      const y = aggregate(s, atomsOf(r, coherent));
      coherent.forEach((v, i) => close(y[i], v, 1e-12));
    }
    const truncated = buildStructure([['NH', 'NW', 'SH', 'SW'], ['NH', 'NW'], ['SH', 'SW'], ['NH', 'SH'], ['NW', 'SW']], [false, true, true, true, true]);
    const r = buildReconciler(truncated, 'bottom_up');
    assert.match(r.warnings.join(), /do not identify every leaf group/);
    const y = aggregate(truncated, atomsOf(r, [10, 4, 6, 5, 5]));
    close(y[0], y[1] + y[2]);
    close(y[0], y[3] + y[4]);
  });

  test('MinT on errors that are all zero (children a model fits exactly) falls back to structural WLS, not an exception', () => {
    const zeros = () => new Array(30).fill(0);
    const r = buildReconciler(simple(), 'mint_shrink', [zeros(), zeros(), zeros()]);
    assert.equal(r.method, 'wls_struct');
    assert.ok(r.warnings.some((w) => w.includes('no usable covariance')), String(r.warnings));
    assert.deepEqual(r.G, buildReconciler(simple(), 'wls_struct').G);
  });

  test('MinT without residuals falls back to structural WLS and says so', () => {
    const r = buildReconciler(simple(), 'mint_shrink', [[NaN], [NaN], [NaN]]);
    assert.equal(r.method, 'wls_struct');
    assert.match(r.warnings[0], /wls_struct used/);
  });
});

/** hts::shrink.estim transcribed as directly as possible (R: crossprod = XᵀX). */
function htsShrink(X: number[][]): { W: number[][]; lambda: number } {
  const n = X.length;
  const p = X[0].length;
  const crossprod = (A: number[][]) => Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => A.reduce((s, row) => s + row[i] * row[j], 0)));
  const covm = crossprod(X).map((r) => r.map((v) => v / n));
  const sd = covm.map((r, i) => Math.sqrt(r[i]));
  const corm = covm.map((r, i) => r.map((v, j) => v / (sd[i] * sd[j])));
  const xs = X.map((row) => row.map((v, j) => v / sd[j]));
  const xs2 = crossprod(xs.map((r) => r.map((v) => v * v)));
  const xs1 = crossprod(xs);
  let num = 0;
  let den = 0;
  for (let i = 0; i < p; i++)
    for (let j = 0; j < p; j++) {
      if (i === j) continue;
      num += (1 / (n * (n - 1))) * (xs2[i][j] - (1 / n) * xs1[i][j] ** 2);
      den += corm[i][j] ** 2; // the target's correlation matrix is the identity
    }
  const lambda = Math.max(0, Math.min(1, num / den));
  return { W: covm.map((r, i) => r.map((v, j) => (i === j ? v : (1 - lambda) * v))), lambda };
}

describe('shrinkage covariance', () => {
  test('matches hts::shrink.estim, rows with a missing value skipped', () => {
    const rng = new Rng(11);
    const T = 30;
    const p = 5;
    const common = Array.from({ length: T }, () => rng.normal());
    const series = Array.from({ length: p }, (_, i) => Float64Array.from({ length: T }, (_, t) => (i + 1) * (0.6 * common[t] + rng.normal())));
    series[2][7] = NaN;
    const { X, T: used } = completeRows(series);
    assert.equal(used, T - 1);
    const ours = shrinkCovariance(X, used, p)!;
    const rows = Array.from({ length: used }, (_, r) => Array.from({ length: p }, (_, i) => X[r * p + i]));
    const ref = htsShrink(rows);
    close(ours.lambda, ref.lambda, 1e-12);
    for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) close(ours.W[i * p + j], ref.W[i][j], 1e-12);
    assert.equal(shrinkCovariance(X, 1, p), null);
  });

  test('Cholesky solves an SPD system', () => {
    const A = Float64Array.from([4, 2, 0.6, 2, 5, 1, 0.6, 1, 3]);
    const L = cholesky(A, 3)!;
    const x = choleskySolve(L, 3, Float64Array.from([1, 2, 3]), 1);
    for (let i = 0; i < 3; i++) close(A[i * 3] * x[0] + A[i * 3 + 1] * x[1] + A[i * 3 + 2] * x[2], i + 1, 1e-12);
    assert.equal(cholesky(Float64Array.from([1, 1, 1, 1]), 2), null);
  });
});

describe('probabilistic reconciliation', () => {
  const K = 200;
  const s = grouped();
  const rng = new Rng(5);
  const T = 48;
  const shock = Array.from({ length: T }, () => rng.normal());
  const leafRes = Array.from({ length: 4 }, () => Float64Array.from({ length: T }, (_, t) => shock[t] + rng.normal()));
  const nodeRes = Array.from({ length: 9 }, (_, i) => Float64Array.from({ length: T }, (_, t) => s.atomNodes.reduce((acc, nodes, a) => acc + (nodes.includes(i) ? leafRes[a][t] : 0), 0)));
  const means = [30, 14, 17, 12, 19, 5, 8, 7, 11];
  const sds = [4, 2.5, 3, 2, 3, 1, 1.5, 1.2, 2];
  const draws = means.map((m, i) => quantileGrid(new EmpiricalStep(Array.from({ length: 2000 }, () => m + sds[i] * rng.normal())), K));
  const errors = errorRows(
    nodeRes.map((r) => ({ start: 0, inSample: r, backtest: [] })),
    1,
  );

  test('every joint draw and the means are coherent; the mean is the projection of the base means', () => {
    for (const method of ['mint_shrink', 'wls_struct', 'ols', 'bottom_up'] as const) {
      const out = reconcile({ structure: s, method, errors, steps: [{ means, draws }], kind: 'continuous', seed: 9 });
      const [step] = out.steps;
      const check = (v: (i: number) => number) => {
        close(v(0), v(1) + v(2), 1e-9);
        close(v(0), v(3) + v(4), 1e-9);
        close(v(1), v(5) + v(6), 1e-9);
        close(v(4), v(6) + v(8), 1e-9);
      };
      check((i) => step.means[i]);
      for (let j = 0; j < K; j += 17) check((i) => step.draws[i][j]);
      for (let i = 0; i < 9; i++) close(step.draws[i].reduce((a, b) => a + b, 0) / K, step.means[i], 1e-9);
      assert.equal(out.errorSource, method === 'mint_shrink' ? 'in-sample' : null);
    }
  });

  test('the copula carries the errors\' dependence: the total spreads more than with independent draws', () => {
    const joint = reconcile({ structure: s, method: 'bottom_up', errors, steps: [{ means, draws }], kind: 'continuous', seed: 9 }).steps[0];
    const none = errorRows(
      nodeRes.map(() => ({ start: 0, inSample: [NaN], backtest: [] })),
      1,
    );
    const indep = reconcile({ structure: s, method: 'bottom_up', errors: none, steps: [{ means, draws }], kind: 'continuous', seed: 9 });
    assert.match(indep.warnings.join(), /joined independently/);
    const spread = (d: Float64Array) => drawsStep(d, 0, 'continuous').quantile(0.9) - drawsStep(d, 0, 'continuous').quantile(0.1);
    assert.ok(spread(joint.draws[0]) > 1.2 * spread(indep.steps[0].draws[0]), `${spread(joint.draws[0])} vs ${spread(indep.steps[0].draws[0])}`);
  });

  test('count data: every draw non-negative and integer, still coherent', () => {
    const low = means.map((m) => m / 10 - 1.5);
    const countDraws = low.map((m, i) => quantileGrid(new EmpiricalStep(Array.from({ length: 500 }, () => Math.max(0, Math.round(m + sds[i] * rng.normal())))), K));
    const out = reconcile({ structure: s, method: 'mint_shrink', errors, steps: [{ means: low, draws: countDraws }], kind: 'count', seed: 2 }).steps[0];
    for (let i = 0; i < 9; i++) {
      assert.ok(out.means[i] >= 0);
      for (const v of out.draws[i]) assert.ok(v >= 0 && Number.isInteger(v), `${i}: ${v}`);
    }
    for (let j = 0; j < K; j++) assert.equal(out.draws[0][j], out.draws[5][j] + out.draws[6][j] + out.draws[7][j] + out.draws[8][j]);
    close(out.means[0], out.means[1] + out.means[2], 1e-12);
    const step = drawsStep(out.draws[0], out.means[0], 'count');
    assert.ok(Number.isInteger(step.quantile(0.37)));
  });

  test('continuous data whose leaves are non-negative: no draw of a node summing only them below 0, still coherent, means the censored draws\' means', () => {
    // small leaves near 0 (a region's rare purposes): the linear map gives them negative draws
    const low = means.map((m) => m / 10 - 1);
    const lowDraws = low.map((m, i) => quantileGrid(new ClampedStep(new NormalStep(m, sds[i]), 0, Infinity), K));
    const floored = new Set(['NH', 'NW', 'SH']); // SW's history has negative values: it is not censored
    const nonNegative = atomsWhere(s, (leaf) => floored.has(leaf as string));
    assert.deepEqual(Array.from(nonNegative), [1, 1, 1, 0]);
    for (const method of ['mint_shrink', 'wls_struct', 'ols', 'bottom_up'] as const) {
      const input = { structure: s, method, errors, steps: [{ means: low, draws: lowDraws }], kind: 'continuous' as const, seed: 3 };
      const linear = reconcile(input).steps[0];
      assert.ok(linear.draws[5].some((v) => v < 0), `${method}: negative draws to censor`);
      const out = reconcile({ ...input, nonNegative }).steps[0];
      // N = NH + NW (node 1), H = NH + SH (node 3) and the leaves NH, NW, SH (5, 6, 7) sum only floored leaves
      for (const i of [1, 3, 5, 6, 7]) {
        for (const v of out.draws[i]) assert.ok(v >= 0, `${method} node ${i}: ${v}`);
        const step = drawsStep(out.draws[i], out.means[i], 'continuous');
        assert.ok(step.quantile(0.01) >= 0 && out.means[i] >= 0);
        // the atom at 0 is in the bin that starts at 0, as a depth-0 forecast's censored law puts it
        const { distribution } = summariseStep(step, out.means[i], [-1, 0, 1], [0.05], 'continuous');
        assert.deepEqual(distribution.slice(0, 2), [0, 0], `${method} node ${i}`);
        close(out.means[i], out.draws[i].reduce((a, b) => a + b, 0) / K, 1e-9);
      }
      assert.ok(out.draws[8].some((v) => v < 0), `${method}: SW is not censored`);
      for (let j = 0; j < K; j += 7) {
        close(out.draws[0][j], out.draws[1][j] + out.draws[2][j], 1e-9);
        close(out.draws[0][j], out.draws[5][j] + out.draws[6][j] + out.draws[7][j] + out.draws[8][j], 1e-9);
      }
      close(out.means[0], out.means[1] + out.means[2], 1e-12);
      close(out.means[0], out.means[3] + out.means[4], 1e-12);
      close(out.means[4], out.means[6] + out.means[8], 1e-12);
      // an atom none of whose draws was censored keeps its linear mean exactly
      assert.equal(out.means[8], linear.means[8]);
    }
  });

  test('a base forecast censored at 0 is reconciled without its floor, and the floor set after: a leaf keeps its depth-0 law', () => {
    // a wide forecast of a non-negative series (band from −200): point forecast 10, a fifth of the law at the 0 floor
    const wide = new ClampedStep(new NormalStep(10, 12), 0, Infinity, -200);
    const base = baseDraws(wide, K);
    assert.deepEqual(base.grid, quantileGrid(new NormalStep(10, 12), K));
    // the law's own mean (on the quantile grid), so the draws are not moved
    close(base.mean, 10, 1e-12);
    // a step with no floor above the band, or no band, is taken as it is, with its law's mean
    const banded = new ClampedStep(new NormalStep(10, 12), 5, 30);
    assert.deepEqual(baseDraws(banded, K), { mean: quantileGridMean(banded), grid: quantileGrid(banded, K) });
    assert.ok(quantileGridMean(banded) > 12, "the band's atom at 5 lifts the mean");
    close(baseDraws(new NormalStep(10, 12), K).mean, 10, 1e-12);
    // a model in logs: its step's \`mean\` is its median; the draws are re-centred on the law's mean (found by review: 3% low)
    const logModel = { mean: 10, quantile: (p: number) => 10 * Math.exp(0.5 * (p - 0.5)), cdf: (x: number) => Math.min(1, Math.max(0, Math.log(x / 10) / 0.5 + 0.5)) };
    close(baseDraws(logModel, K).mean, (10 * (Math.exp(0.25) - Math.exp(-0.25))) / 0.5, 1e-6);
    // bottom-up of two such leaves: each gets its depth-0 quantiles back, and the censored law's mean
    const leaves = [10, 5].map((m) => new ClampedStep(new NormalStep(m, 12), 0, Infinity, -200));
    const structure = simple();
    const draws = [new NormalStep(15, 17), ...leaves].map((l) => baseDraws(l, K));
    const out = reconcile({
      structure,
      method: 'bottom_up',
      errors: errorRows([0, 1, 2].map(() => ({ start: 0, inSample: [NaN], backtest: [] })), 1),
      steps: [{ means: draws.map((d) => d.mean), draws: draws.map((d) => d.grid) }],
      kind: 'continuous',
      nonNegative: atomsWhere(structure, () => true),
      seed: 1,
    }).steps[0];
    leaves.forEach((leaf, i) => {
      const step = drawsStep(out.draws[i + 1], out.means[i + 1], 'continuous');
      const depth0 = drawsStep(quantileGrid(leaf, K), 0, 'continuous');
      for (const p of [0.1, 0.25, 0.5, 0.9]) close(step.quantile(p), depth0.quantile(p), 1e-9);
      // E[max(0, X)] = μΦ(μ/σ) + σφ(μ/σ): 11.36 for N(10, 12²), 7.69 for N(5, 12²); not the point forecasts
      close(out.means[i + 1], [11.36, 7.69][i], 0.01);
    });
    close(out.means[0], out.means[1] + out.means[2], 1e-12);
  });

  test('nodes whose forecasts span more than 12 orders of magnitude are reconciled under a warning (found by QA: a leaf near 1e-7 beside one at 5e99 got a median of 2.9e76)', () => {
    const run = (factor: number) => {
      // the first leaf (node 5) shrunk by `factor`, every node containing it alike
      const scaled = means.map((m, i) => (i === 5 ? m / factor : m));
      const scaledDraws = draws.map((d, i) => (i === 5 ? Float64Array.from(d, (v) => v / factor) : d));
      return reconcile({ structure: s, method: 'mint_shrink', errors, steps: [{ means: scaled, draws: scaledDraws }], kind: 'continuous', seed: 9 }).warnings;
    };
    assert.deepEqual(run(1).filter((w) => w.includes('orders of magnitude')), []);
    assert.deepEqual(run(1e10).filter((w) => w.includes('orders of magnitude')), []);
    const [w] = run(1e14).filter((x) => x.includes('orders of magnitude'));
    assert.match(w, /span 15 orders of magnitude \(5\.00e-14 to 30\.0\)/);
    // a fraction of the largest (1e-12 of it, not 1e+12), and a count of orders even where the ratio overflows a double
    assert.match(w, /nodes below 1e-12 of the largest carry its rounding/);
    assert.match(run(1e308).filter((x) => x.includes('orders of magnitude'))[0], /span 309 orders of magnitude \(5\.00e-308 to 30\.0\)/);
  });

  test('same input and seed → identical output; another seed → other draws', () => {
    const run = (seed: number) => reconcile({ structure: s, method: 'mint_shrink', errors, steps: [{ means, draws }], kind: 'continuous', seed }).steps[0];
    assert.deepEqual(run(4), run(4));
    assert.notDeepEqual(run(4).draws[0], run(5).draws[0]);
  });

  test('backtest errors replace the in-sample residuals for MinT when there are enough rows', () => {
    const nodes = nodeRes.map((r, i) => ({
      start: 0,
      inSample: r,
      backtest: [40, 43, 46].map((origin) => ({ origin, errors: Float64Array.from({ length: 4 }, (_, k) => r[origin - 20 + k] * (1 + i / 10)) })),
    }));
    assert.equal(errorRows(nodes, 4).source, 'backtest');
    assert.equal(errorRows(nodes, 3).source, 'in-sample'); // 9 rows < 12
    assert.equal(errorRows(nodes, 4).covariance[0].length, 12);
  });

  test('sample CRPS: exact for small sets', () => {
    // draws {0, 1}, y = 0: E|X − y| = 0.5, E|X − X'| = 0.5 → 0.5 − 0.25
    close(sampleCrps([0, 1], 0), 0.25, 1e-15);
    close(sampleCrps([2, 2, 2], 3), 1, 1e-15);
  });
});
