/**
 * The `contains` hierarchy under an entity, as a depth query uses it: every descendant (to the
 * leaves, whatever the depth: a node's value is the sum of the leaves beneath it), each node's
 * level (its shortest distance from the root), its children, and its leaves. Bounded by
 * `MAX_GRAPH_NODES` (400 above).
 */
import type { EntityRecord, EntityStore } from '../entities/entity-store';
import { ServiceError } from '../rpc/errors';
import { CONTAINS } from './relation-endpoints';
import type { RelationStore } from './relation-store';
import { MAX_GRAPH_NODES, tooManyNodes } from './traversal';

/** The loaded hierarchy. */
export interface Hierarchy {
  readonly root: string;
  /** Every entity in the closure (root first, then by level and name). */
  readonly entities: readonly string[];
  readonly records: ReadonlyMap<string, EntityRecord>;
  /** Shortest distance from the root. */
  readonly level: ReadonlyMap<string, number>;
  /** `contains` children within the closure (sorted). */
  readonly children: ReadonlyMap<string, readonly string[]>;
  /** For each entity, the leaves (entities without children) beneath it; a leaf's is itself. */
  readonly leaves: ReadonlyMap<string, readonly string[]>;
}

/**
 * Load the closure under `root` (its record is given: the caller checked it exists). A read not yet
 * made when `signal` aborts is not made: the load fails with the signal's reason (found by QA: ten
 * cold depth queries over 800 leaves at once read their hierarchies for 2.5 s past their deadlines).
 */
export async function loadHierarchy(entities: EntityStore, relations: RelationStore, accountId: string, root: EntityRecord, signal?: AbortSignal): Promise<Hierarchy> {
  const level = new Map([[root.entity, 0]]);
  const children = new Map<string, string[]>();
  let frontier = [root.entity];
  for (let d = 1; frontier.length > 0; d++) {
    const next: string[] = [];
    for (const e of frontier) children.set(e, []);
    for (const edge of await relations.edgesOf(accountId, frontier, CONTAINS, 'down', signal)) {
      children.get(edge.parent)!.push(edge.child);
      if (level.has(edge.child)) continue;
      level.set(edge.child, d);
      next.push(edge.child);
    }
    if (level.size > MAX_GRAPH_NODES) throw tooManyNodes('depth', `the contains hierarchy under ${root.entity}`);
    frontier = next;
  }
  for (const list of children.values()) list.sort();
  const ordered = [...level.keys()].sort((a, b) => level.get(a)! - level.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
  const records = new Map((await entities.getMany(accountId, ordered, signal)).map((r) => [r.entity, r]));
  for (const e of ordered) {
    const r = records.get(e);
    // deleted between the reads: a relation to it may outlive it for a moment
    if (!r) throw new ServiceError('unavailable', `the hierarchy under ${root.entity} changed while it was read; retry`);
    if (r.frequency !== root.frequency) {
      throw new ServiceError('failed_precondition', `depth: ${e} has frequency ${r.frequency}, the hierarchy under ${root.entity} is ${root.frequency}: every descendant must share it`, {
        field: 'depth',
        entity: e,
      });
    }
  }
  // leaves by memoised recursion (a DAG: a node's leaves are the union of its children's)
  const leaves = new Map<string, string[]>();
  const leavesOf = (e: string): string[] => {
    const known = leaves.get(e);
    if (known) return known;
    const kids = children.get(e) ?? [];
    const out = kids.length === 0 ? [e] : [...new Set(kids.flatMap(leavesOf))].sort();
    leaves.set(e, out);
    return out;
  };
  for (const e of ordered) leavesOf(e);
  return { root: root.entity, entities: ordered, records, level, children, leaves };
}
