/**
 * The series each node of a depth query is forecast from, per axis: its own observations when
 * it has any, else the sum of the leaves beneath it that have some ("an entity with no own data
 * is forecast from its descendants"). A node with both is checked against its leaves: when they
 * disagree by more than `DISAGREEMENT` (or do not overlap) it is forecast from the sum, with a
 * warning. Sums line up on the frequency grid: a leaf counts 0 before its first observation, and
 * the sum ends where the earliest-ending leaf ends (later times are not yet known for all).
 * "Leaves" here are data-bearing: an entity with data whose descendants have none (children
 * made but not yet fed) is a leaf, so its ancestors' sums still count it.
 */
import type { AxisKind, AxisRecord } from '../entities/entity-store';
import { formatTime } from '../clock';
import { timeOf } from '../entities/frequency';
import { digestOf, type LoadedSeries, type RevisionMemo, type SeriesLoader } from '../oracle/series-loader';
import type { Hierarchy } from './hierarchy-graph';
import { ServiceError } from '../rpc/errors';

/** Relative difference between a node's own data and its leaves' sum above which a warning is given. */
export const DISAGREEMENT = 1e-3;

/** A node of one axis's reconciliation. */
export interface AxisNode {
  readonly entity: string;
  readonly level: number;
  /** The series its base forecast is fitted to. */
  readonly series: LoadedSeries;
  /** True when `series` is the node's own data, false when it sums `leaves`. */
  readonly own: boolean;
  /** The data-bearing leaves beneath it (itself when nothing beneath it has data). */
  readonly leaves: readonly string[];
  /** No other node of the axis lies beneath it. */
  readonly bottom: boolean;
}

/** One axis of a depth query: its nodes (root first) and every own series read. */
export interface AxisHierarchy {
  readonly axis: string;
  readonly kind: AxisKind;
  readonly nodes: readonly AxisNode[];
  /** Own series of every entity read (nodes and leaves), by entity: the query's inputs. */
  readonly inputs: ReadonlyMap<string, LoadedSeries>;
  readonly warnings: readonly string[];
  /** Where a node's sum stops short because some leaves' data end early: the sentence saying which, by node. */
  readonly sumEnds: ReadonlyMap<string, string>;
}

/** Sum of leaf series on the grid (see the file comment). */
function sumSeries(hierarchy: Hierarchy, axis: AxisRecord, parts: readonly LoadedSeries[]): LoadedSeries {
  const first = Math.min(...parts.map((p) => p.firstIndex));
  const last = Math.min(...parts.map((p) => p.lastIndex));
  const values = new Float64Array(last - first + 1);
  for (const p of parts) for (let t = p.firstIndex; t <= last; t++) values[t - first] += p.values[t - p.firstIndex];
  const frequency = hierarchy.records.get(hierarchy.root)!.frequency;
  let nobs = 0;
  for (const v of values) if (!Number.isNaN(v)) nobs++;
  return {
    axis: axis.name,
    values,
    firstIndex: first,
    lastIndex: last,
    nobs,
    firstTime: timeOf(frequency, first),
    lastTime: timeOf(frequency, last),
    digest: digestOf({ frequency }, axis, first, values),
  };
}

/** Largest relative gap between own data and the leaves' sum, and where; null without overlap. */
function disagreement(own: LoadedSeries, sum: LoadedSeries): { gap: number; index: number } | null {
  let worst: { gap: number; index: number } | null = null;
  const from = Math.max(own.firstIndex, sum.firstIndex);
  const to = Math.min(own.lastIndex, sum.lastIndex);
  for (let t = from; t <= to; t++) {
    const a = own.values[t - own.firstIndex];
    const b = sum.values[t - sum.firstIndex];
    if (Number.isNaN(a) || Number.isNaN(b)) continue;
    const scale = Math.max(Math.abs(a), Math.abs(b));
    const gap = scale > 0 ? Math.abs(a - b) / scale : 0;
    if (!worst || gap > worst.gap) worst = { gap, index: t };
  }
  return worst;
}

/** The warning naming an entity of the hierarchy that a query left out: neither it nor a leaf beneath it has data on the axis. */
export function leftOutWarning(axis: string, entity: string): string {
  return `${axis}: ${entity} has no observations and no leaf beneath it has any: left out`;
}

/**
 * The entities `leftOutWarning` named in `warnings`, as `<entity> axis <axis> (no observations)`:
 * how forensics tells a hierarchy that gained or lost an entity without data (not among the
 * series read, so not in the manifest's inputs) from one that did not change.
 */
export function leftOutEntities(warnings: readonly string[]): string[] {
  return warnings.flatMap((w) => {
    const m = /^([^:]+): (.+) has no observations and no leaf beneath it has any: left out$/.exec(w);
    return m ? [`${m[2]} axis ${m[1]} (no observations)`] : [];
  });
}

/**
 * The nodes of axis `axisName` down to `depth` levels (see the file comment). Nodes with no
 * data of their own and no data-bearing leaf are left out with a warning; the caller decides
 * what a root without data means.
 */
export async function axisHierarchy(
  hierarchy: Hierarchy,
  depth: number,
  axisName: string,
  load: SeriesLoader,
  accountId: string,
  asOf: number,
  /** Aborted when the answer is no longer wanted: reads not yet made are not made. */
  signal?: AbortSignal,
  /** The query's newest revision of each entity, read once (`RevisionMemo`). */
  revisions?: RevisionMemo,
): Promise<AxisHierarchy> {
  const root = hierarchy.records.get(hierarchy.root)!;
  const axis = root.axes.find((a) => a.name === axisName)!;
  const inQuery = hierarchy.entities.filter((e) => hierarchy.level.get(e)! <= depth);
  const needed = [...new Set([...inQuery, ...inQuery.flatMap((e) => hierarchy.leaves.get(e)!)])];
  const inputs = new Map<string, LoadedSeries>();
  const loads = new Map<string, Promise<void>>();
  const loadOwn = (e: string): Promise<void> => {
    let done = loads.get(e);
    if (!done) loads.set(e, (done = readOwn(e)));
    return done;
  };
  const readOwn = async (e: string): Promise<void> => {
    const record = hierarchy.records.get(e)!;
    const own = record.axes.find((a) => a.name === axisName);
    if (!own) return;
    if (own.kind !== axis.kind) {
      // as for frequencies (`hierarchy-graph.ts`): a sum of counts and continuous values is neither
      throw new ServiceError('failed_precondition', `depth: ${e} has axis ${axisName} of kind ${own.kind}, the hierarchy under ${hierarchy.root} has it as ${axis.kind}: every descendant must share it`, {
        field: 'depth',
        entity: e,
      });
    }
    const series = await load.load(accountId, record, own, asOf, signal, revisions);
    if (series.nobs > 0) inputs.set(e, series);
  };
  await Promise.all(needed.map(loadOwn));
  // The data-bearing leaves beneath each entity: the leaves with data, and where nothing beneath
  // an entity has data (children made but not yet fed), the entity itself when it has its own —
  // so an ancestor's sum still counts it.
  const sources = new Map<string, Promise<string[]>>();
  const sourcesOf = (e: string): Promise<string[]> => {
    let found = sources.get(e);
    if (!found) {
      found = (async () => {
        const below = (await Promise.all((hierarchy.children.get(e) ?? []).map(sourcesOf))).flat();
        if (below.length > 0) return [...new Set(below)].sort();
        await loadOwn(e);
        return inputs.has(e) ? [e] : [];
      })();
      sources.set(e, found);
    }
    return found;
  };
  const leavesOf = new Map(await Promise.all(inQuery.map(async (e) => [e, await sourcesOf(e)] as const)));
  const warnings: string[] = [];
  const sumEnds = new Map<string, string>();
  const nodes: { entity: string; level: number; series: LoadedSeries; own: boolean; leaves: string[] }[] = [];
  for (const e of inQuery) {
    const dataLeaves = leavesOf.get(e)!;
    const own = inputs.get(e);
    const stands = dataLeaves.length === 1 && dataLeaves[0] === e; // its own data are its leaf
    const sum = dataLeaves.length > 0 && !stands ? sumSeries(hierarchy, axis, dataLeaves.map((l) => inputs.get(l)!)) : undefined;
    // Own data serve when they agree with the leaves' sum (where both exist): the answer must
    // equal that sum, and a base forecast from data of another scale or scope (a parent reported
    // in thousands, or counting stores not in the graph) would drag the leaves to fit it instead.
    let useOwn = own !== undefined;
    if (own && sum) {
      const d = disagreement(own, sum);
      if (!d || d.gap > DISAGREEMENT) {
        useOwn = false;
        const how = d ? `differ from the sum of its ${dataLeaves.length} leaves by up to ${(100 * d.gap).toPrecision(3)}% (at ${formatTime(timeOf(root.frequency, d.index))})` : `do not overlap the sum of its ${dataLeaves.length} leaves`;
        warnings.push(`${axisName}: ${e}'s own data ${how}; it is forecast from that sum`);
      }
    }
    if (sum && !useOwn) {
      // the sum is known only while every leaf reports: say which leaves end it early
      const ends = dataLeaves.map((l) => ({ l, last: inputs.get(l)!.lastIndex }));
      const latest = Math.max(...ends.map((x) => x.last));
      if (sum.lastIndex < latest) {
        const early = ends.filter((x) => x.last === sum.lastIndex).map((x) => x.l);
        const named = early.slice(0, 3).join(', ') + (early.length > 3 ? ` and ${early.length - 3} more` : '');
        sumEnds.set(e, `the sum beneath ${e} ends at ${formatTime(timeOf(root.frequency, sum.lastIndex))}, where the data of ${named} end (other leaves run to ${formatTime(timeOf(root.frequency, latest))})`);
        warnings.push(`${axisName}: ${sumEnds.get(e)}`);
      }
    }
    const series = useOwn ? own : sum;
    if (!series) {
      if (e !== hierarchy.root) warnings.push(leftOutWarning(axisName, e));
      continue;
    }
    nodes.push({ entity: e, level: hierarchy.level.get(e)!, series, own: useOwn, leaves: dataLeaves });
  }
  const members = new Set(nodes.map((n) => n.entity));
  const withBottom = nodes.map((n) => ({ ...n, bottom: !(hierarchy.children.get(n.entity) ?? []).some((c) => members.has(c) && hierarchy.level.get(c)! <= depth) }));
  // In the hierarchy's order, not the reads' (they finish in any order): a manifest lists the same
  // query's inputs alike every time (found by CI: two identical queries on PostgreSQL listed them
  // in two orders).
  const ordered = new Map(hierarchy.entities.filter((e) => inputs.has(e)).map((e) => [e, inputs.get(e)!]));
  return { axis: axisName, kind: axis.kind, nodes: withBottom, inputs: ordered, warnings, sumEnds };
}
