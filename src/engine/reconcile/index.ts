/**
 * Hierarchical forecast reconciliation, the facade: base forecasts of every node of a hierarchy
 * (means and draws of one or more forecast steps) in, coherent forecasts out — every node equal
 * to the sum of the leaves beneath it, in the mean and in every joint draw, and no mass below 0
 * where every leaf beneath has a non-negative history (`nonNegative`). Methods: MinT with a
 * shrinkage covariance (default), structural WLS, OLS, bottom-up (`methods.ts`); distributions by
 * reconciling joint draws (`probabilistic.ts`). Pure and deterministic: same input and seed →
 * bit-identical output.
 */
import { buildReconciler, type ReconcileMethod } from './methods';
import { independentRanks, reconcileDraws, residualCopula, type CopulaRanks, type ReconciledDraws } from './probabilistic';
import type { ErrorRows } from './errors';
import type { HierarchyStructure } from './structure';
import { clamp } from '../guard';
import type { SeriesInfo } from '../types';

export { buildStructure, aggregate, atomBounds, atomsWhere, intersectBounds, sumOfBounds, type HierarchyStructure } from './structure';
export { RECONCILE_METHODS, buildReconciler, type ReconcileMethod, type Reconciler } from './methods';
export { baseDraws, drawsStep, quantileGrid, sampleCrps } from './draws';
export { errorRows, MIN_BACKTEST_ROWS, type ErrorRows, type NodeErrors } from './errors';
export type { ReconciledDraws } from './probabilistic';

/** Draws per node per step the service reconciles (enough for 1%-level quantiles). */
export const DEFAULT_DRAWS = 500;
/** Draws per node of each backtest origin (they only feed a mean CRPS, `confidence`). */
export const ORIGIN_DRAWS = 200;

/** The base forecasts of one step (or one backtest origin) for every node. */
export interface BaseStep {
  /** Per node, the base mean. */
  readonly means: ArrayLike<number>;
  /** Per node, K draws of the base marginal (`quantileGrid`), the same K for every node of a step. */
  readonly draws: readonly ArrayLike<number>[];
}

/** Input of `reconcile`. */
export interface ReconcileInput {
  readonly structure: HierarchyStructure;
  readonly method: ReconcileMethod;
  /** Per node, forecast errors on common rows (`errorRows`): MinT's covariance, the copula. */
  readonly errors: ErrorRows;
  readonly steps: readonly BaseStep[];
  readonly kind: 'continuous' | 'count';
  /**
   * Per atom of `structure` (`atomsWhere`), 1 when its leaves' histories are non-negative: its
   * reconciled draws are censored at 0 (`probabilistic.ts`). Default: none (count data always are).
   */
  readonly nonNegative?: Uint8Array;
  /**
   * Per atom, the bounds of its leaves' values (`atomBounds`): set on the atoms' reconciled draws
   * after the 0 floor, so every node summing them stays coherent (`probabilistic.ts`).
   */
  readonly atomBounds?: readonly (SeriesInfo['bounds'] | undefined)[];
  /**
   * Per node, the values it can take (`SeriesInfo.bounds`), undefined where it has none: its
   * reconciled draws are censored to them last (`censorToNodeBounds`); a node whose bounds are
   * its atoms' (a leaf) is within them already.
   */
  readonly bounds?: readonly (SeriesInfo['bounds'] | undefined)[];
  /** Seed of the copula's random times and tie keys. */
  readonly seed: number;
}

/** Output of `reconcile`. */
export interface ReconcileOutput {
  /** The method used (`mint_shrink` falls back to `wls_struct` without residuals). */
  readonly method: ReconcileMethod;
  /** MinT's shrinkage intensity, else null. */
  readonly lambda: number | null;
  /** Which errors MinT's covariance came from (null for the other methods). */
  readonly errorSource: ErrorRows['source'] | null;
  /** One per input step, same order. */
  readonly steps: readonly ReconciledDraws[];
  /** Per node, how many of its draws of the first step its bounds censored (all 0 without `bounds`). */
  readonly censored: readonly number[];
  readonly warnings: readonly string[];
}

/**
 * Widest ratio of two nodes' base means for which the reconciled values of the smaller are
 * reliable. Why: reconciliation moves every node by a share of the hierarchy's incoherence, which
 * is computed in double precision at the largest node's scale (rounding of about 1e-16 of it);
 * found by QA, a leaf near 1e-7 beside a sibling at 5e99 got a reconciled mean of 0 and a median
 * of 2.9e76, and with a ratio of 1e12 OLS already set a small leaf to 0 (the default method held
 * to 1e20).
 */
export const MAX_RELIABLE_SCALE_RATIO = 1e12;

/** A warning when the nodes' base means (first step) span more than `MAX_RELIABLE_SCALE_RATIO`. */
function scaleWarning(means: ArrayLike<number>): string | undefined {
  let largest = 0;
  let smallest = Infinity;
  for (let i = 0; i < means.length; i++) {
    const m = Math.abs(means[i]);
    if (!Number.isFinite(m) || m === 0) continue;
    largest = Math.max(largest, m);
    smallest = Math.min(smallest, m);
  }
  if (!(largest / smallest > MAX_RELIABLE_SCALE_RATIO)) return undefined;
  // the logs' difference, not the ratio's log: the ratio of 5e-308 and 30 is Infinity in a double
  return `the nodes' forecasts span ${(Math.log10(largest) - Math.log10(smallest)).toFixed(0)} orders of magnitude (${smallest.toPrecision(3)} to ${largest.toPrecision(3)}): reconciled in double precision, nodes below ${(1 / MAX_RELIABLE_SCALE_RATIO).toExponential(0)} of the largest carry its rounding, so their reconciled values are not reliable (forecast them at depth 0, or in a hierarchy of their own scale)`;
}

/** Reconcile every step of `input` with one fitted map and the errors' copula (see the file comment). */
export function reconcile(input: ReconcileInput): ReconcileOutput {
  const { structure, steps } = input;
  const reconciler = buildReconciler(structure, input.method, input.errors.covariance);
  const warnings = [...reconciler.warnings];
  const scale = steps.length > 0 ? scaleWarning(steps[0].means) : undefined;
  if (scale) warnings.push(scale);
  // one copula per number of draws (the steps may differ: backtest origins need fewer)
  const copulas = new Map<number, CopulaRanks>();
  const copulaFor = (K: number): CopulaRanks => {
    let ranks = copulas.get(K) ?? residualCopula(input.errors.copula, K, input.seed);
    if (!ranks) {
      if (copulas.size === 0) warnings.push("fewer than 2 times with an in-sample error for every node: the nodes' draws were joined independently");
      ranks = independentRanks(structure.nodes, K, input.seed);
    }
    copulas.set(K, ranks);
    return ranks;
  };
  const reconciled = steps.map((s) => reconcileDraws(reconciler, s.means, s.draws, copulaFor(s.draws[0]?.length ?? 0), input.kind, input.nonNegative, input.atomBounds));
  const censored = reconciled.map((s) => censorToNodeBounds(s, input.bounds ?? []));
  return {
    method: reconciler.method,
    lambda: reconciler.lambda,
    errorSource: reconciler.method === 'mint_shrink' ? input.errors.source : null,
    steps: reconciled,
    censored: censored[0] ?? new Array<number>(structure.nodes).fill(0),
    warnings,
  };
}

/**
 * Censor each bounded node's reconciled draws to its bounds, in place; returns per node how many
 * draws moved. Where none moved the node is untouched (so coherence, exact before, stays exact):
 * leaves are, their bounds set on the atoms already (`atomBounds`). Where some did (a node whose
 * own bounds are tighter than its leaves' sum can reach), its mean moves by the draws' mean change
 * and its draws no longer equal the sum of its children's (or add up to its parent's) at those
 * draws: a node's own bounds, a fact about its data, take precedence over the sum.
 */
export function censorToNodeBounds(step: ReconciledDraws, bounds: readonly (SeriesInfo['bounds'] | undefined)[]): number[] {
  return step.draws.map((draws, i) => {
    const b = bounds[i];
    if (!b) return 0;
    const lo = b.lower ?? -Infinity;
    const hi = b.upper ?? Infinity;
    let moved = 0;
    let shift = 0;
    for (let j = 0; j < draws.length; j++) {
      const v = clamp(draws[j], lo, hi);
      if (v === draws[j]) continue;
      shift += v - draws[j];
      draws[j] = v;
      moved++;
    }
    step.means[i] = clamp(step.means[i] + (moved > 0 ? shift / draws.length : 0), lo, hi);
    return moved;
  });
}
