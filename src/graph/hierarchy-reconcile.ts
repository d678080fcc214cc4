/**
 * Reconcile one axis of a depth query (pure; runs in the reconcile worker): the nodes' base
 * forecasts at the query's step and at each backtest origin every node shares go through one
 * fitted reconciliation and one copula (`engine/reconcile`), censored at 0 where every leaf
 * beneath a node has a non-negative history (as depth 0 censors). Out: each node's reconciled mean,
 * and for the reported axis its reconciled distribution summary and `confidence` — the CRPS
 * skill of the *reconciled* backtest forecasts over seasonal naive, max(0, 1 − Σ CRPS / Σ
 * CRPS_snaive) over the shared origins at the query's step.
 */
import { atomBounds, atomsWhere, buildStructure, drawsStep, errorRows, intersectBounds, reconcile, sampleCrps, sumOfBounds, type ReconcileMethod } from '../engine/reconcile/index';
import type { OriginDetail, Residuals } from './node-detail';
import type { SeriesInfo } from '../engine/types';
import { boundsText } from '../engine/guard';
import { summariseStep, type StepSummary } from '../oracle/summary';

/** One node's base forecast and errors, as the reconcile worker receives them. */
export interface ReconcileNode {
  /** Structural leaves (see `hierarchy-series.ts`). */
  readonly leaves: readonly string[];
  readonly bottom: boolean;
  /** Grid index of the node's series[0] (origins and residuals are placed by it). */
  readonly start: number;
  readonly mean: number;
  readonly grid: Float64Array;
  readonly residuals: Residuals;
  readonly origins: readonly OriginDetail[];
  /** The node's axis's bounds, where it has any: its reconciled draws are censored to them. */
  readonly bounds?: SeriesInfo['bounds'];
  /** The node's entity (for warnings). */
  readonly entity: string;
}

/** One axis to reconcile. */
export interface AxisReconcileInput {
  readonly kind: 'continuous' | 'count';
  readonly method: ReconcileMethod;
  /** The query's horizon (steps of the backtest errors MinT may use). */
  readonly horizon: number;
  readonly seed: number;
  readonly nodes: readonly ReconcileNode[];
  /** The leaves whose forecasts a depth-0 query censors at 0 (`floorsAtZero`): every draw of every node summing only these stays ≥ 0. */
  readonly nonNegativeLeaves: readonly string[];
  /** The leaves with bounds (their axis's), and the bounds: every draw of every node summing only bounded leaves stays within their sum's. */
  readonly leafBounds?: readonly (readonly [string, NonNullable<SeriesInfo['bounds']>])[];
  /** For the reported axis: summaries (per node thresholds, undefined = default) and confidence. */
  readonly report?: { readonly levels: readonly number[]; readonly thresholds: readonly (readonly number[] | undefined)[] };
}

/** The reconciled axis. */
export interface AxisReconcileOutput {
  readonly method: ReconcileMethod;
  readonly lambda: number | null;
  readonly errorSource: string | null;
  readonly warnings: readonly string[];
  readonly means: readonly number[];
  /** With `report`: per node. */
  readonly summaries?: readonly StepSummary[];
  readonly confidence?: readonly (number | null)[];
}

/** Origins (grid index of the first step) that every node has. */
function sharedOrigins(nodes: readonly ReconcileNode[]): number[] {
  const [first, ...rest] = nodes;
  return first.origins
    .map((o) => first.start + o.origin)
    .filter((g) => rest.every((n) => n.origins.some((o) => n.start + o.origin === g)))
    .sort((a, b) => a - b);
}

/** Reconcile one axis (see the file comment). */
export function reconcileAxis(input: AxisReconcileInput): AxisReconcileOutput {
  const { nodes, kind } = input;
  const structure = buildStructure(
    nodes.map((n) => n.leaves),
    nodes.map((n) => n.bottom),
  );
  const shared = input.report ? sharedOrigins(nodes) : [];
  const originOf = (n: ReconcileNode, g: number) => n.origins.find((o) => n.start + o.origin === g)!;
  const errors = errorRows(
    nodes.map((n) => ({ start: n.start + n.residuals.from, inSample: n.residuals.values, backtest: n.origins.map((o) => ({ origin: n.start + o.origin, errors: o.errors })) })),
    input.horizon,
  );
  const steps = [
    { means: nodes.map((n) => n.mean), draws: nodes.map((n) => n.grid) },
    ...shared.map((g) => ({ means: nodes.map((n) => originOf(n, g).mean), draws: nodes.map((n) => originOf(n, g).grid) })),
  ];
  const floored = new Set(input.nonNegativeLeaves);
  const nonNegative = atomsWhere(structure, (leaf) => floored.has(leaf as string));
  const leafBounds = new Map(input.leafBounds ?? []);
  const bounds = { atomBounds: atomBounds(structure, (leaf) => leafBounds.get(leaf as string)), bounds: nodes.map((n) => n.bounds) };
  const out = reconcile({ structure, method: input.method, errors, steps, kind, nonNegative, ...bounds, seed: input.seed });
  const [now, ...past] = out.steps;
  const result = { method: out.method, lambda: out.lambda, errorSource: out.errorSource, warnings: [...out.warnings], means: Array.from(now.means) };
  out.censored.forEach((moved, i) => {
    if (moved === 0) return;
    const draws = now.draws[i].length;
    result.warnings.push(`${nodes[i].entity}'s reconciled forecast was censored to its bounds ${boundsText(nodes[i].bounds!)} in ${moved} of ${draws} joint draws: there it no longer adds up exactly with the nodes above and beneath it`);
  });
  if (!input.report) return result;
  const { levels, thresholds } = input.report;
  // the bounds each node's draws stay within (its own and its leaves' sum), for its default thresholds
  const within = nodes.map((n) => intersectBounds(n.bounds, sumOfBounds([...new Set(n.leaves)].map((leaf) => leafBounds.get(leaf)))));
  const summaries = nodes.map((_, i) => summariseStep(drawsStep(now.draws[i], now.means[i], kind), now.means[i], thresholds[i], levels, kind, within[i]));
  const confidence = nodes.map((n, i) => {
    let model = 0;
    let baseline = 0;
    let used = 0;
    past.forEach((p, k) => {
      const o = originOf(n, shared[k]);
      if (!Number.isFinite(o.actual) || !Number.isFinite(o.baselineCrps)) return;
      model += sampleCrps(p.draws[i], o.actual);
      baseline += o.baselineCrps;
      used++;
    });
    if (used === 0) return null;
    if (!(baseline > 0)) return model > 0 ? 0 : 1;
    return Math.max(0, 1 - model / baseline);
  });
  if (shared.length === 0) result.warnings.push('no backtest origin is shared by every node: confidence is 0');
  return { ...result, summaries, confidence };
}
