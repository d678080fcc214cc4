/**
 * Linear forecast reconciliation: ỹ = S G ŷ with G = (Sᵀ Λ S)⁻¹ Sᵀ Λ, the coherent forecast closest
 * to the base forecasts ŷ in the metric Λ (Hyndman et al. 2011; Wickramasuriya, Athanasopoulos &
 * Hyndman 2019). The methods differ only in Λ:
 * - `mint_shrink`: Λ = W⁻¹ with W the shrunk covariance of the in-sample one-step errors
 *   (`covariance.ts`) — the trace-minimising (MinT) reconciliation;
 * - `wls_struct`: Λ = diag(1 / leaves summed by each node) — structural scaling (Athanasopoulos,
 *   Hyndman, Kourentzes & Petropoulos 2017), no residuals needed;
 * - `ols`: Λ = I (Hyndman et al. 2011);
 * - `bottom_up`: Λ = 1 on the bottom nodes and 0 elsewhere: the bottom nodes' forecasts summed up.
 * β = G ŷ are the atoms' values (`structure.ts`); every node is then a sum of atoms, so the
 * result is coherent by construction whatever the rounding. When Sᵀ Λ S is singular (a truncated
 * grouped structure whose bottom nodes overlap, or bottom-up over nodes that do not identify the
 * atoms) a ridge of 1e-9 of its largest diagonal entry selects the smallest-norm atoms among the
 * equally good ones; the coherent forecast moves by a relative 1e-9 at most (a warning says so).
 */
import { completeRows, shrinkCovariance } from './covariance';
import { cholesky, choleskySolve, choleskyWithRidge } from './linalg';
import type { HierarchyStructure } from './structure';

/** The reconciliation methods (API.md section 9). */
export const RECONCILE_METHODS = ['mint_shrink', 'wls_struct', 'ols', 'bottom_up'] as const;
export type ReconcileMethod = (typeof RECONCILE_METHODS)[number];

/** Ridge (relative to the largest diagonal entry) for singular normal equations. */
const RIDGE = 1e-9;
/** Jitter (relative to the mean variance) added when the shrunk covariance is singular. */
const COVARIANCE_JITTER = 1e-8;

/** A fitted linear reconciliation. */
export interface Reconciler {
  /** The method actually used (MinT falls back to `wls_struct` without residuals). */
  readonly method: ReconcileMethod;
  readonly structure: HierarchyStructure;
  /** G, atoms × nodes, row-major. */
  readonly G: Float64Array;
  /** Shrinkage intensity (MinT only, else null). */
  readonly lambda: number | null;
  readonly warnings: readonly string[];
}

/**
 * Fit `method` on `structure`. `residuals[i]` are node i's in-sample one-step errors on a time
 * grid common to all nodes (NaN where absent); only `mint_shrink` reads them, and falls back to
 * `wls_struct` (saying so) when fewer than 2 time points have an error for every node, or when
 * those errors give no usable covariance (all zero: series a model fits exactly, e.g. all zeros).
 */
export function buildReconciler(structure: HierarchyStructure, method: ReconcileMethod, residuals?: readonly ArrayLike<number>[]): Reconciler {
  const { nodes: n, atoms: m, S } = structure;
  const warnings: string[] = [];
  if (method === 'mint_shrink') {
    const rows = residuals && residuals.length === n ? completeRows(residuals) : { X: new Float64Array(0), T: 0 };
    const shrunk = shrinkCovariance(rows.X, rows.T, n);
    // X = Λ S (n×m): the precision applied to S
    const X = shrunk ? solveCovariance(shrunk.W, n, S, m, warnings) : null;
    const G = X ? normalEquations(structure, X, method, warnings) : null;
    if (G && shrunk) return { method, structure, G, lambda: shrunk.lambda, warnings };
    warnings.push(
      shrunk
        ? 'mint_shrink: the in-sample errors give no usable covariance (all zero, or too nearly singular): wls_struct used'
        : `mint_shrink needs in-sample errors of every node at 2 or more common times (${rows.T} available): wls_struct used`,
    );
    method = 'wls_struct';
  }
  const weight = (i: number): number => (method === 'wls_struct' ? 1 / structure.nodeLeaves[i] : method === 'ols' ? 1 : structure.bottom[i] ? 1 : 0);
  const X = new Float64Array(n * m);
  for (let i = 0; i < n; i++) {
    const w = weight(i);
    if (w !== 0) for (let a = 0; a < m; a++) X[i * m + a] = w * S[i * m + a];
  }
  const G = normalEquations(structure, X, method, warnings);
  if (!G) throw new RangeError(`${method}: the structure gives no usable normal equations`);
  return { method, structure, G, lambda: null, warnings };
}

/** G = (Sᵀ Λ S)⁻¹ (Λ S)ᵀ for X = Λ S (n×m), or null when Sᵀ Λ S cannot be factored (even with the ridge). */
function normalEquations(structure: HierarchyStructure, X: Float64Array, method: ReconcileMethod, warnings: string[]): Float64Array | null {
  const { S, nodes: n, atoms: m } = structure;
  // A = Sᵀ Λ S (m×m), symmetric
  const A = new Float64Array(m * m);
  for (let i = 0; i < n; i++) {
    const ri = i * m;
    for (let a = 0; a < m; a++) {
      if (S[ri + a] === 0) continue;
      const ra = a * m;
      for (let b = 0; b < m; b++) A[ra + b] += X[ri + b];
    }
  }
  if (!A.every(Number.isFinite)) return null;
  const factor = choleskyWithRidge(A, m, RIDGE);
  if (!factor) return null;
  if (factor.ridge > 0) warnings.push(`${method}: the nodes do not identify every leaf group; the smallest coherent adjustment was taken (ridge ${RIDGE})`);
  // G = A⁻¹ (Λ S)ᵀ: solve A G = Xᵀ
  const G = new Float64Array(m * n);
  for (let i = 0; i < n; i++) for (let a = 0; a < m; a++) G[a * n + i] = X[i * m + a];
  choleskySolve(factor.L, m, G, n);
  return G.every(Number.isFinite) ? G : null;
}

/**
 * W⁻¹ S by Cholesky, with a small diagonal jitter when W is singular; null when W has no positive
 * variance to scale a jitter by (every error zero) or stays unusable.
 */
function solveCovariance(W: Float64Array, n: number, S: Float64Array, m: number, warnings: string[]): Float64Array | null {
  let L = cholesky(W, n);
  if (!L) {
    let mean = 0;
    for (let i = 0; i < n; i++) mean += W[i * n + i] / n;
    if (!(mean > 0 && Number.isFinite(mean))) return null;
    const jittered = Float64Array.from(W);
    const add = mean * COVARIANCE_JITTER;
    for (let i = 0; i < n; i++) jittered[i * n + i] += add;
    L = cholesky(jittered, n, 0);
    if (!L) return null;
    warnings.push('mint_shrink: the error covariance is singular; a jitter of 1e-8 of the mean variance was added');
  }
  return choleskySolve(L, n, Float64Array.from(S), m);
}

/** β = G ŷ: the atoms' values for node values `y`. */
export function atomsOf(r: Reconciler, y: ArrayLike<number>): Float64Array {
  const { atoms: m, nodes: n } = r.structure;
  const beta = new Float64Array(m);
  for (let a = 0; a < m; a++) {
    let s = 0;
    const row = a * n;
    for (let i = 0; i < n; i++) s += r.G[row + i] * y[i];
    beta[a] = s;
  }
  return beta;
}
