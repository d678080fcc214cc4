/**
 * Path traversal (API.md section 9): the neighbourhood of an entity within `depth` steps is read
 * level by level (one query per level and direction), then simple paths are enumerated in memory
 * depth-first, neighbours in ascending entity order. A page resumes from the last path of the
 * previous one (keyset: the order is lexicographic on the entity sequence, a prefix before its
 * extensions), so edges added during a walk never repeat or skip a path already passed.
 */
import { ServiceError } from '../rpc/errors';
import type { RelationStore } from './relation-store';

/** Most entities a traversal or hierarchy may reach (API: "more than 5,000 nodes → 400"). */
export const MAX_GRAPH_NODES = 5000;

/** Which way edges are followed: parent → child, child → parent, or both. */
export type Direction = 'down' | 'up' | 'both';

/** One step of a path: the entity reached and how. */
export interface PathStep {
  readonly entity: string;
  /** `down` (from its parent), `up` (from its child), or '' for the first node. */
  readonly step: '' | 'down' | 'up';
}

/** Adjacency within the loaded neighbourhood: entity → neighbours sorted by entity. */
export type Adjacency = ReadonlyMap<string, readonly PathStep[]>;

/** 400 for a graph over the limit, naming it and what to change. */
export function tooManyNodes(field: string, what: string): ServiceError {
  return new ServiceError('invalid_argument', `${field}: ${what} reaches more than ${MAX_GRAPH_NODES} entities; at most ${MAX_GRAPH_NODES} per query (lower ${field})`, {
    field,
    limit: MAX_GRAPH_NODES,
  });
}

/**
 * The neighbourhood of `from`: adjacency lists of every entity closer than `depth` steps (the
 * ones at exactly `depth` are reached but not expanded). Throws 400 above `MAX_GRAPH_NODES`.
 */
export async function loadNeighbourhood(
  relations: RelationStore,
  accountId: string,
  from: string,
  kind: string,
  direction: Direction,
  depth: number,
): Promise<Adjacency> {
  const adjacency = new Map<string, PathStep[]>();
  const seen = new Set([from]);
  let frontier = [from];
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    for (const e of frontier) adjacency.set(e, []);
    const [down, up] = await Promise.all([
      direction === 'up' ? [] : relations.edgesOf(accountId, frontier, kind, 'down'),
      direction === 'down' ? [] : relations.edgesOf(accountId, frontier, kind, 'up'),
    ]);
    const next: string[] = [];
    const reach = (at: string, to: string, step: 'down' | 'up') => {
      adjacency.get(at)!.push({ entity: to, step });
      if (seen.has(to)) return;
      seen.add(to);
      next.push(to);
    };
    for (const r of down) reach(r.parent, r.child, 'down');
    for (const r of up) reach(r.child, r.parent, 'up');
    if (seen.size > MAX_GRAPH_NODES) throw tooManyNodes('depth', `the traversal from ${from} within ${depth} steps`);
    frontier = next;
  }
  for (const list of adjacency.values()) list.sort((a, b) => (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0));
  return adjacency;
}

/** Steps from each entity to `to` following the adjacency (breadth-first on reversed edges). */
function distancesTo(adjacency: Adjacency, to: string): Map<string, number> {
  const reverse = new Map<string, string[]>();
  for (const [from, list] of adjacency) for (const n of list) (reverse.get(n.entity) ?? reverse.set(n.entity, []).get(n.entity)!).push(from);
  const dist = new Map([[to, 0]]);
  let frontier = [to];
  for (let d = 1; frontier.length > 0; d++) {
    const next: string[] = [];
    for (const e of frontier) for (const p of reverse.get(e) ?? []) if (!dist.has(p)) (dist.set(p, d), next.push(p));
    frontier = next;
  }
  return dist;
}

/** First index of `sorted` whose entity is ≥ `entity`. */
function lowerBound(sorted: readonly PathStep[], entity: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid].entity < entity) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Frame {
  readonly node: PathStep;
  readonly neighbours: readonly PathStep[];
  next: number;
}

/**
 * One page of the simple paths from `from` with 1..`depth` steps (only those ending at `to` when
 * given), after the path `after` (its entity sequence; exclusive), at most `limit`.
 */
export function pagePaths(
  adjacency: Adjacency,
  from: string,
  options: { readonly depth: number; readonly to?: string },
  after: readonly string[] | undefined,
  limit: number,
): { paths: PathStep[][]; more: boolean } {
  const { depth, to } = options;
  const toDist = to === undefined ? undefined : distancesTo(adjacency, to);
  const expandable = (node: string, steps: number) => steps < depth && node !== to;
  const frame = (node: PathStep, steps: number): Frame => ({ node, neighbours: expandable(node.entity, steps) ? adjacency.get(node.entity) ?? [] : [], next: 0 });
  const stack: Frame[] = [frame({ entity: from, step: '' }, 0)];
  const onPath = new Set([from]);
  // Resume: walk down the previous page's last path; where it no longer exists, continue after it.
  if (after && after[0] === from) {
    for (let i = 1; i < after.length; i++) {
      const top = stack[stack.length - 1];
      const at = lowerBound(top.neighbours, after[i]);
      const hit = top.neighbours[at];
      if (!hit || hit.entity !== after[i] || onPath.has(hit.entity)) {
        top.next = at;
        break;
      }
      top.next = at + 1;
      stack.push(frame(hit, stack.length));
      onPath.add(hit.entity);
    }
  }
  const paths: PathStep[][] = [];
  while (stack.length > 0 && paths.length <= limit) {
    const top = stack[stack.length - 1];
    if (top.next >= top.neighbours.length) {
      onPath.delete(top.node.entity);
      stack.pop();
      continue;
    }
    const nb = top.neighbours[top.next++];
    if (onPath.has(nb.entity)) continue;
    const steps = stack.length;
    if (toDist && !((toDist.get(nb.entity) ?? Infinity) <= depth - steps)) continue;
    if (to === undefined || nb.entity === to) paths.push([...stack.map((f) => f.node), nb]);
    if (expandable(nb.entity, steps)) {
      stack.push(frame(nb, steps));
      onPath.add(nb.entity);
    }
  }
  return paths.length > limit ? { paths: paths.slice(0, limit), more: true } : { paths, more: false };
}
