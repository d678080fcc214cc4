/**
 * Path traversal (API.md section 9): the neighbourhood of an entity within `depth` steps is read
 * level by level (one query per level and direction), then simple paths are enumerated in memory
 * depth-first, neighbours in ascending entity order. A page resumes after the last path of the
 * previous one, or where its walk stopped (below) (keyset: the order is lexicographic on the entity
 * sequence, a prefix before its extensions), so edges added during a walk never repeat or skip a
 * path already passed.
 *
 * With `to`, the walk enters an entity only when a path from it to `to` within the steps left
 * avoids the entities already on the path (one breadth-first search from `to` per entity entered,
 * answering for all its neighbours), so every entity entered leads to at least one answer: found by QA, 43 entities — a bottleneck, then 20 entities each linked to
 * 20 more — made one depth-8 query walk every simple path of the cluster past the bottleneck,
 * none of which could reach `to` again, blocking the process for seconds (~K⁵ in the fan-out K).
 * And a page ends once its walk has examined `MAX_STEPS_PER_PAGE` edges (those searches included),
 * found paths or not, so a query holds the process for a bounded time per page. Such a page may
 * hold fewer paths than asked, even none, with a cursor that resumes exactly where the walk
 * stopped (the order, and so the concatenated pages, are the same for any budget).
 */
import { ServiceError } from '../rpc/errors';
import type { RelationStore } from './relation-store';

/** Most entities a traversal or hierarchy may reach (API: "more than 5,000 nodes → 400"). */
export const MAX_GRAPH_NODES = 5000;

/**
 * Edges after which one page's walk stops (see the file comment), counted after the page is back
 * where the last one stopped (that costs up to one search per entity of the cursor, at most 8) and
 * checked after each step, so one search runs to its end. Why 100,000: about 20 ms of the event
 * loop (`bench/graph.ts`: 18 ms for a page of a random graph's walk that used it all), while a page
 * of the 200 paths a walk without `to` can return needs at most 200 × (depth + the widest fan-out).
 */
export const MAX_STEPS_PER_PAGE = 100_000;

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

/**
 * 400 for a graph over the limit, naming it and what to change: a lower `field`, or where one
 * step already reaches too many (`oneStep`: an entity with more than 5,000 neighbours, where no
 * depth is lower) listing its relations page by page (found by QA: "lower depth" at depth 1).
 */
export function tooManyNodes(field: string, what: string, oneStep?: string): ServiceError {
  const remedy = oneStep ? `its relations alone are more: list them page by page with GET /v1/relations?${oneStep}` : `lower ${field}`;
  return new ServiceError('invalid_argument', `${field}: ${what} reaches more than ${MAX_GRAPH_NODES} entities; at most ${MAX_GRAPH_NODES} per query (${remedy})`, {
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
    if (seen.size > MAX_GRAPH_NODES) {
      const oneStep = level === 0 ? `${direction === 'up' ? 'child' : 'parent'}=${from}${direction === 'both' ? ` (and child=${from})` : ''}` : undefined;
      throw tooManyNodes('depth', `the traversal from ${from} within ${depth} steps`, oneStep);
    }
    frontier = next;
  }
  for (const list of adjacency.values()) list.sort((a, b) => (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0));
  return adjacency;
}

/** The adjacency reversed: for each entity, the entities with an edge to it. */
function reversed(adjacency: Adjacency): Map<string, string[]> {
  const reverse = new Map<string, string[]>();
  for (const [from, list] of adjacency) for (const n of list) (reverse.get(n.entity) ?? reverse.set(n.entity, []).get(n.entity)!).push(from);
  return reverse;
}

/**
 * Steps from each entity to `to`, at most `maxSteps`, on paths that enter no entity of `blocked`
 * (breadth-first on the reversed edges: shortest paths, hence simple ones), and the edges examined.
 */
function distancesAvoiding(reverse: ReadonlyMap<string, readonly string[]>, to: string, maxSteps: number, blocked: ReadonlySet<string>): { dist: Map<string, number>; work: number } {
  let work = 0;
  const dist = new Map([[to, 0]]);
  let frontier = [to];
  for (let d = 1; d <= maxSteps && frontier.length > 0; d++) {
    const next: string[] = [];
    for (const e of frontier) {
      for (const p of reverse.get(e) ?? []) {
        work++;
        if (blocked.has(p) || dist.has(p)) continue;
        dist.set(p, d);
        next.push(p);
      }
    }
    frontier = next;
  }
  return { dist, work };
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
  /** With `to`: each entity's steps to `to` off the path up to this node (within the steps left). */
  readonly reach?: ReadonlyMap<string, number>;
}

/** One page of paths, and where the next page resumes (`undefined`: the walk is complete). */
export interface PathPage {
  readonly paths: PathStep[][];
  /** The entity sequence the next page starts after (the last path, or where the walk stopped). */
  readonly resume: string[] | undefined;
}

/**
 * One page of the simple paths from `from` with 1..`depth` steps (only those ending at `to` when
 * given), after the entity sequence `after` (exclusive: what a previous page's `resume` named),
 * at most `limit`, examining at most `maxSteps` edges.
 */
export function pagePaths(
  adjacency: Adjacency,
  from: string,
  options: { readonly depth: number; readonly to?: string },
  after: readonly string[] | undefined,
  limit: number,
  maxSteps = MAX_STEPS_PER_PAGE,
): PathPage {
  const { depth, to } = options;
  const reverse = to === undefined ? undefined : reversed(adjacency);
  const expandable = (node: string, steps: number) => steps < depth && node !== to;
  const onPath = new Set<string>();
  const stack: Frame[] = [];
  let examined = 0;
  /**
   * Step onto `node`, `steps` steps from `from`. With `to`, one search from `to` off the new path
   * says which of its neighbours can still reach it (why once per entity entered, not per
   * neighbour: a review measured a search per neighbour at 0.24 s a page around a million edges).
   */
  const enter = (node: PathStep, steps: number): void => {
    onPath.add(node.entity);
    const neighbours = expandable(node.entity, steps) ? adjacency.get(node.entity) ?? [] : [];
    let reach: Map<string, number> | undefined;
    if (reverse && neighbours.length > 0) {
      const found = distancesAvoiding(reverse, to!, depth - steps - 1, onPath);
      examined += found.work;
      reach = found.dist;
    }
    stack.push({ node, neighbours, next: 0, reach });
  };
  /** Whether the walk may step from the top of the stack to `nb`: off the path, and (with `to`) still reaching it. */
  const enterable = (nb: PathStep): boolean => {
    if (onPath.has(nb.entity)) return false;
    const reach = stack[stack.length - 1].reach;
    return !reach || (reach.get(nb.entity) ?? Infinity) <= depth - stack.length;
  };
  enter({ entity: from, step: '' }, 0);
  // Resume: walk down the previous page's last sequence; where it no longer exists, continue after
  // it; where the walk may not enter it (it was examined and passed by), continue past it, so a
  // page cut there does not stop there again.
  if (after && after[0] === from) {
    for (let i = 1; i < after.length; i++) {
      const top = stack[stack.length - 1];
      const at = lowerBound(top.neighbours, after[i]);
      const hit = top.neighbours[at];
      if (!hit || hit.entity !== after[i]) {
        top.next = at;
        break;
      }
      top.next = at + 1;
      if (!enterable(hit)) break;
      enter(hit, stack.length);
    }
  }
  // the budget counts the page's own walk: getting back to where the last page stopped (searches
  // included) would otherwise spend it again on every page, one step a page around a large search
  examined = 0;
  const paths: PathStep[][] = [];
  const entities = () => stack.map((f) => f.node.entity);
  while (stack.length > 0 && paths.length <= limit) {
    const top = stack[stack.length - 1];
    if (top.next >= top.neighbours.length) {
      onPath.delete(top.node.entity);
      stack.pop();
      continue;
    }
    const nb = top.neighbours[top.next++];
    const steps = stack.length;
    const valid = enterable(nb);
    if (valid && (to === undefined || nb.entity === to)) paths.push([...stack.map((f) => f.node), nb]);
    const pushed = valid && expandable(nb.entity, steps);
    if (pushed) enter(nb, steps);
    if (++examined >= maxSteps && paths.length <= limit && stack.length > 0) {
      // out of budget: resume after the sequence just examined (a path or not; its extensions, not yet walked, come next)
      return { paths, resume: pushed ? entities() : [...entities(), nb.entity] };
    }
  }
  if (paths.length > limit) return { paths: paths.slice(0, limit), resume: paths[limit - 1].map((s) => s.entity) };
  return { paths, resume: undefined };
}
