/**
 * The aggregation structure of a hierarchy: which leaves every node sums. Rows of the summing
 * matrix S are the nodes; its columns are **atoms**, the leaves grouped by the set of nodes that
 * contain them (leaves no node tells apart are one atom). Grouped structures (a total split both
 * by state and by purpose), a leaf with several parents, and truncated hierarchies (a query
 * `depth` above the leaves) all reduce to this: every node is the sum of its atoms, each counted
 * once, so nothing is double counted however many paths lead to a leaf.
 */

/** Nodes × atoms structure (see the file comment). */
import { boundsFrom } from '../guard';
import type { SeriesInfo } from '../types';

export interface HierarchyStructure {
  /** Number of nodes (rows of S). */
  readonly nodes: number;
  /** Number of atoms (columns of S). */
  readonly atoms: number;
  /** S, nodes × atoms, row-major, entries 0/1. */
  readonly S: Float64Array;
  /** Per atom, the nodes that contain it (ascending). */
  readonly atomNodes: readonly Int32Array[];
  /** Per atom, how many leaves it stands for (the structural weights count leaves). */
  readonly atomLeaves: Int32Array;
  /** Per atom, the leaves it stands for (as given, in order of first appearance). */
  readonly atomMembers: readonly (readonly (string | number)[])[];
  /** Per node, how many leaves it sums. */
  readonly nodeLeaves: Int32Array;
  /** Nodes bottom-up reconciles from: those no other node of the structure lies beneath. */
  readonly bottom: Uint8Array;
}

/**
 * Build the structure from each node's leaves (`leaves[i]`: identifiers of the leaves node i
 * sums; a leaf may appear under many nodes) and which nodes are bottom nodes (`bottom[i]`:
 * node i has no child among the nodes). A leaf under no node is ignored; a node with no leaf
 * is refused (it could be anything).
 */
export function buildStructure(leaves: readonly (readonly (string | number)[])[], bottom: readonly boolean[]): HierarchyStructure {
  const n = leaves.length;
  if (bottom.length !== n) throw new RangeError(`bottom has ${bottom.length} entries for ${n} nodes`);
  const nodesOf = new Map<string | number, number[]>();
  leaves.forEach((list, i) => {
    if (list.length === 0) throw new RangeError(`node ${i} sums no leaf`);
    for (const leaf of new Set(list)) {
      const at = nodesOf.get(leaf);
      if (at) at.push(i);
      else nodesOf.set(leaf, [i]);
    }
  });
  // Atoms in order of first appearance of their signature: deterministic for a given input.
  const atomOf = new Map<string, number>();
  const atomNodes: Int32Array[] = [];
  const atomMembers: (string | number)[][] = [];
  for (const [leaf, nodes] of nodesOf) {
    const key = nodes.join(',');
    const a = atomOf.get(key);
    if (a !== undefined) {
      atomMembers[a].push(leaf);
      continue;
    }
    atomOf.set(key, atomNodes.length);
    atomNodes.push(Int32Array.from(nodes));
    atomMembers.push([leaf]);
  }
  const m = atomNodes.length;
  const atomLeaves = Int32Array.from(atomMembers, (l) => l.length);
  const S = new Float64Array(n * m);
  const nodeLeaves = new Int32Array(n);
  atomNodes.forEach((nodes, a) => {
    for (const i of nodes) {
      S[i * m + a] = 1;
      nodeLeaves[i] += atomLeaves[a];
    }
  });
  return { nodes: n, atoms: m, S, atomNodes, atomLeaves, atomMembers, nodeLeaves, bottom: Uint8Array.from(bottom, (b) => (b ? 1 : 0)) };
}

/** Per atom, 1 when every leaf it stands for satisfies `test` (e.g. has a non-negative history), else 0. */
export function atomsWhere(structure: HierarchyStructure, test: (leaf: string | number) => boolean): Uint8Array {
  return Uint8Array.from(structure.atomMembers, (leaves) => (leaves.every(test) ? 1 : 0));
}

/**
 * Per atom, the bounds of the sum of its leaves (`boundsOf`: a leaf's own, undefined for none): a
 * lower bound when every leaf has one (their sum), an upper bound likewise; undefined when neither.
 */
export function atomBounds(structure: HierarchyStructure, boundsOf: (leaf: string | number) => SeriesInfo['bounds']): (SeriesInfo['bounds'] | undefined)[] {
  return structure.atomMembers.map((leaves) => sumOfBounds(leaves.map(boundsOf)));
}

type Bounds = NonNullable<SeriesInfo['bounds']>;

/** The bounds of a sum of values each within `all`'s: an end where every value has one (their sum); undefined when neither. */
export function sumOfBounds(all: readonly (Bounds | undefined)[]): Bounds | undefined {
  const sum = (end: 'lower' | 'upper') => (all.length > 0 && all.every((b) => b?.[end] !== undefined) ? all.reduce((s, b) => s + b![end]!, 0) : undefined);
  return boundsFrom(sum('lower'), sum('upper'));
}

/** Both bounds at once, the tighter end of each; `a`'s alone where they leave nothing between them (a node's own bounds over its leaves' sum). */
export function intersectBounds(a: Bounds | undefined, b: Bounds | undefined): Bounds | undefined {
  if (!a || !b) return a ?? b;
  const lower = a.lower === undefined ? b.lower : b.lower === undefined ? a.lower : Math.max(a.lower, b.lower);
  const upper = a.upper === undefined ? b.upper : b.upper === undefined ? a.upper : Math.min(a.upper, b.upper);
  return lower !== undefined && upper !== undefined && !(lower < upper) ? a : boundsFrom(lower, upper);
}

/** ỹ = S β for one atom vector β (length atoms): each node sums its atoms. */
export function aggregate(structure: HierarchyStructure, beta: ArrayLike<number>): Float64Array {
  const out = new Float64Array(structure.nodes);
  structure.atomNodes.forEach((nodes, a) => {
    const b = beta[a];
    for (const i of nodes) out[i] += b;
  });
  return out;
}
