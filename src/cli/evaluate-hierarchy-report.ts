/**
 * Scores and printing for `forecast evaluate-hierarchy`: per series MASE, RMSSE, scaled CRPS and
 * 95% coverage of the base and each reconciled forecast, means per level and over all series,
 * and the largest coherence error of the reconciled forecasts.
 */
import { drawsStep, sampleCrps, type ReconciledDraws } from '../engine/reconcile/index';
import { mase, maseScale } from '../engine/metrics';
import type { HierarchyData } from './evaluate-hierarchy-data';

/** The four figures, for one series or as means over a set. */
export interface Scores {
  readonly mase: number;
  readonly rmsse: number;
  /** CRPS divided by the series' MASE scale (so series of every size weigh alike). */
  readonly crps: number;
  /** Share of test values inside the central 95% interval. */
  readonly coverage: number;
}

/** A method's figures: over all series, and per level. */
export interface MethodReport extends Scores {
  readonly levels: Record<string, Scores>;
}

/** Per step (k = 0..h−1): each node's mean and draws. */
export type StepForecasts = readonly { readonly means: ArrayLike<number>; readonly draws: readonly ArrayLike<number>[] }[];

/** RMSSE: √(mean squared error / mean squared seasonal difference of the training data). */
function rmsse(train: ArrayLike<number>, actual: ArrayLike<number>, forecast: ArrayLike<number>, period: number): number {
  const m = train.length > period ? period : 1;
  let den = 0;
  let nd = 0;
  for (let t = m; t < train.length; t++) {
    const d = train[t] - train[t - m];
    if (Number.isNaN(d)) continue;
    den += d * d;
    nd++;
  }
  let num = 0;
  let nn = 0;
  for (let k = 0; k < actual.length; k++) {
    if (Number.isNaN(actual[k])) continue;
    num += (actual[k] - forecast[k]) ** 2;
    nn++;
  }
  return Math.sqrt(num / nn / (den / nd));
}

/** Scores of every node for one method's forecasts. */
export function scoreNodes(data: HierarchyData, steps: StepForecasts): Scores[] {
  const { trainLength: T, horizon: h, period } = data;
  return data.nodes.map((node, i) => {
    const train = node.values.subarray(0, T);
    const actual = node.values.subarray(T, T + h);
    const forecast = steps.map((s) => s.means[i]);
    const scale = maseScale(train, period);
    let crps = 0;
    let inside = 0;
    let n = 0;
    steps.forEach((s, k) => {
      const y = actual[k];
      if (Number.isNaN(y)) return;
      const step = drawsStep(s.draws[i], s.means[i], 'continuous');
      crps += sampleCrps(s.draws[i], y);
      if (y >= step.quantile(0.025) && y <= step.quantile(0.975)) inside++;
      n++;
    });
    return { mase: mase(actual, forecast, scale), rmsse: rmsse(train, actual, forecast, period), crps: crps / n / scale, coverage: inside / n };
  });
}

/** Means over the series of each level and over all (non-finite scores are left out). */
export function methodReport(data: HierarchyData, scores: readonly Scores[]): MethodReport {
  const mean = (idx: readonly number[]): Scores => {
    const avg = (key: keyof Scores) => {
      const v = idx.map((i) => scores[i][key]).filter(Number.isFinite);
      return v.length > 0 ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
    };
    return { mase: avg('mase'), rmsse: avg('rmsse'), crps: avg('crps'), coverage: avg('coverage') };
  };
  const levels: Record<string, Scores> = {};
  for (const level of data.levels) levels[level] = mean(data.nodes.flatMap((n, i) => (n.level === level ? [i] : [])));
  return { ...mean(data.nodes.map((_, i) => i)), levels };
}

/**
 * Largest relative coherence error over steps, nodes and draws: |ỹ_i − Σ of the bottom nodes
 * beneath i| / |ỹ_i| (bottom nodes partition the leaves in a file's structure).
 */
export function coherenceError(data: HierarchyData, steps: readonly ReconciledDraws[]): number {
  const bottomOfLeaf = new Map<number, number>();
  data.nodes.forEach((n, i) => {
    if (n.bottom) for (const l of n.leaves) bottomOfLeaf.set(l, i);
  });
  const parts = data.nodes.map((n) => [...new Set(n.leaves.map((l) => bottomOfLeaf.get(l)!))]);
  let worst = 0;
  const check = (value: number, sum: number) => {
    const scale = Math.max(Math.abs(value), Math.abs(sum));
    if (scale > 0) worst = Math.max(worst, Math.abs(value - sum) / scale);
  };
  for (const s of steps) {
    parts.forEach((bottoms, i) => {
      if (data.nodes[i].bottom) return;
      check(s.means[i], bottoms.reduce((a, b) => a + s.means[b], 0));
      const K = s.draws[i].length;
      for (let j = 0; j < K; j++) check(s.draws[i][j], bottoms.reduce((a, b) => a + s.draws[b][j], 0));
    });
  }
  return worst;
}

const fmt = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : String(v));

/** A plain-text table: one row per method and level, then ALL. */
export function formatHierarchyReport(data: HierarchyData, reports: Readonly<Record<string, MethodReport>>, coherence: number, wallSeconds: number): string {
  const count = (level: string) => data.nodes.filter((n) => n.level === level).length;
  const lines = [['method', 'level', 'series', 'MASE', 'RMSSE', 'sCRPS', 'cover95'].map((c, i) => (i < 2 ? c.padEnd(i === 0 ? 12 : 20) : c.padStart(8))).join(' ')];
  for (const [method, r] of Object.entries(reports)) {
    const row = (level: string, n: number, s: Scores) =>
      [method.padEnd(12), level.padEnd(20), String(n).padStart(8), ...[s.mase, s.rmsse, s.crps, s.coverage].map((v) => fmt(v).padStart(8))].join(' ');
    for (const level of data.levels) lines.push(row(level, count(level), r.levels[level]));
    lines.push(row('ALL', data.nodes.length, r));
  }
  lines.push(`largest coherence error of the reconciled forecasts (relative, means and draws): ${coherence.toExponential(2)}`);
  lines.push(`sCRPS: CRPS / in-sample seasonal-naive MAE; cover95: share of test values in the central 95% interval`);
  lines.push(`wall time ${wallSeconds.toFixed(1)} s`);
  return lines.join('\n');
}
