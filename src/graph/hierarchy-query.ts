/**
 * Oracle queries with `depth` ≥ 1 (API.md sections 5 and 9): the entity and its `contains`
 * descendants down to `depth` levels are forecast (the worker pool's fits, shared with depth-0
 * queries), reconciled per axis in the reconcile worker, and answered as the entity's forecast
 * plus one entry per descendant used — coherent: every node equals the sum of the leaves
 * beneath it. Whole answers are cached by everything they depend on (the structure, every
 * series digest, the request), so a repeated query costs the reads that prove nothing changed.
 */
import { createHash } from 'node:crypto';
import type { Forecast } from '../../gen/forecast/v1/oracle_service.pb';
import { formatTime } from '../clock';
import type { AxisRecord, EntityRecord, EntityStore } from '../entities/entity-store';
import { timeOf } from '../entities/frequency';
import { DEFAULT_DRAWS, ORIGIN_DRAWS, type ReconcileMethod } from '../engine/reconcile/index';
import { floorsAtZero } from '../engine/guard';
import { observationsNeeded } from '../engine/index';
import type { SeriesInfo } from '../engine/types';
import type { ForecastJobResult } from '../oracle/forecast-job';
import type { ForecastPool } from '../oracle/forecast-pool';
import { seriesRead, type SeriesLoader, type SeriesRead } from '../oracle/series-loader';
import { axisInfo, seasonalInfo, seedOf } from '../oracle/engine-info';
import { ServiceError } from '../rpc/errors';
import { SharedRuns } from '../shared-runs';
import { checkDepthSteps } from './depth-steps';
import { loadHierarchy, type Hierarchy } from './hierarchy-graph';
import type { AxisReconcileOutput } from './hierarchy-reconcile';
import { axisHierarchy, type AxisHierarchy, type AxisNode } from './hierarchy-series';
import { fittedShape, NODE_MODEL, nodeBounds, nodeJob, ownAxis, runNodeJob, type NodeReplay } from './node-jobs';
import type { ReconcilePool } from './reconcile-pool';
import type { RelationStore } from './relation-store';

/** Most steps a node may be forecast ahead to reach the common target (as the oracle's horizon limit). */
const MAX_NODE_HORIZON = 1000;
/** Whole answers kept (each up to a few hundred kilobytes for a 425-node hierarchy). */
const CACHE_SIZE = 64;

/** A depth query, validated by the oracle endpoint. */
export interface DepthQuery {
  readonly accountId: string;
  readonly root: EntityRecord;
  readonly depth: number;
  readonly axes: readonly string[];
  readonly horizon: number;
  /** For the queried entity only (descendants get the default thresholds of their own scale). */
  readonly thresholds: readonly number[] | undefined;
  readonly levels: readonly number[];
  readonly method: ReconcileMethod;
  readonly asOf: number;
  /**
   * Forensics: fit every node afresh (no fit or answer cache is read or written) with the
   * model specification recorded for its (entity, axis), `auto` where none is.
   */
  readonly replay?: NodeReplay;
  /**
   * Aborted when the answer is no longer wanted (the caller went away, its deadline passed): fits
   * not yet started are dropped and a reconciliation running is stopped (`ThreadRpc`).
   */
  readonly signal?: AbortSignal;
}

/** A series a depth query read: one entity's own observations of one axis. */
export interface DepthInput {
  readonly entity: string;
  /** The entity's own axis (name, kind, bounds). */
  readonly axis: AxisRecord;
  /** Without its values: the answer is cached, and would keep every series it read alive. */
  readonly series: SeriesRead;
}

/** A node forecast a depth query made, before reconciliation. */
export interface DepthModel {
  readonly entity: string;
  readonly axis: string;
  /** Digest of the series fitted: the entity's own, or the sum of its leaves (`aggregated`). */
  readonly seriesDigest: string;
  readonly aggregated: boolean;
  readonly result: ForecastJobResult;
  readonly seed: number;
  /** Seasonal periods, kind and bounds the node's model was given. */
  readonly info: SeriesInfo;
  /** The bounds its reconciled forecast was censored to (`nodeBounds`). */
  readonly bounds: SeriesInfo['bounds'];
}

/** The answer of a depth query. */
/**
 * Most entities a depth query reconciles (the whole `contains` closure under the entity, to its
 * leaves, whatever the depth). Why, below API.md's 5,000 for traversals: the reconciliation is
 * dense linear algebra on one thread, growing with the cube of the hierarchy's size — found by QA,
 * 4,950 entities ran for more than 11 minutes there (515 CPU-seconds, 1.2 GB, never finished),
 * queueing every account's depth queries behind it; 1,000 entities reconcile in 4–7 s (a warm query
 * with another method, 2-core machine under load), 425 in about 0.5 s.
 */
export const MAX_RECONCILED_ENTITIES = 1000;

export interface DepthResult {
  readonly forecast: Forecast;
  readonly descendants: readonly { readonly entity: string; readonly level: number; readonly forecast: Forecast }[];
  /** The method used (of the first axis; a fallback on another axis is in the warnings). */
  readonly method: ReconcileMethod;
  readonly inputs: readonly DepthInput[];
  readonly models: readonly DepthModel[];
}

export interface DepthDeps {
  readonly entities: EntityStore;
  readonly relations: RelationStore;
  readonly series: SeriesLoader;
  readonly pool: ForecastPool;
  readonly reconcile: ReconcilePool;
  /** Most grid steps of series a query reads (`checkDepthSteps`), default `MAX_DEPTH_QUERY_STEPS`. */
  readonly maxSteps?: number;
}

/** One axis forecast and reconciled. */
interface AxisOutcome {
  readonly hierarchy: AxisHierarchy;
  readonly nodes: readonly AxisNode[];
  readonly results: readonly ForecastJobResult[];
  readonly seeds: readonly number[];
  readonly target: number;
  readonly reconciled: AxisReconcileOutput;
  readonly warnings: readonly string[];
}

/** True when no other member lies beneath `entity` within the query. */
function isBottom(hierarchy: Hierarchy, entity: string, members: ReadonlySet<string>): boolean {
  const stack = [...(hierarchy.children.get(entity) ?? [])];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (seen.has(e)) continue;
    seen.add(e);
    if (members.has(e)) return false;
    stack.push(...(hierarchy.children.get(e) ?? []));
  }
  return true;
}

export class DepthQueries {
  private readonly cache = new Map<string, DepthResult>();
  private readonly running = new SharedRuns<DepthResult>();
  /** Computations started, joined by an identical query in flight, abandoned by every caller. */
  readonly stats = this.running.stats;

  constructor(private readonly deps: DepthDeps) {}

  /**
   * Answer a depth query (see the file comment); undefined when the entity contains nothing: its
   * answer is then the depth-0 one (the caller's), not a one-node reconciliation of draws that
   * would differ from it for nothing.
   */
  async run(q: DepthQuery): Promise<DepthResult | undefined> {
    const hierarchy = await loadHierarchy(this.deps.entities, this.deps.relations, q.accountId, q.root, q.signal);
    if (hierarchy.entities.length === 1) return undefined;
    if (hierarchy.entities.length > MAX_RECONCILED_ENTITIES) {
      throw new ServiceError(
        'invalid_argument',
        `depth: the contains hierarchy under ${q.root.entity} has ${hierarchy.entities.length} entities; a reconciled answer (depth ≥ 1) covers at most ${MAX_RECONCILED_ENTITIES} (query an entity lower in it, or at depth 0)`,
        { field: 'depth', limit: MAX_RECONCILED_ENTITIES },
      );
    }
    // each entity's newest revision read once for the whole query (`RevisionMemo`)
    const revisions = this.deps.series.revisions();
    await checkDepthSteps(this.deps.series, hierarchy, { ...q, revisions }, this.deps.maxSteps);
    const axes = await Promise.all(q.axes.map((a) => axisHierarchy(hierarchy, q.depth, a, this.deps.series, q.accountId, q.asOf, q.signal, revisions)));
    for (const a of axes) {
      if (a.nodes[0]?.entity !== q.root.entity) {
        // the need the engine will name once data come (as a depth-0 query with none names it)
        const { need } = observationsNeeded([], { ...seasonalInfo(q.root), kind: a.kind }, NODE_MODEL);
        throw new ServiceError('insufficient_data', `axis ${a.axis} of ${q.root.entity} has no observations, and no leaf beneath it has any; at least ${need} are needed to forecast it`, { axis: a.axis, have: 0, need });
      }
    }
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          // one account's: another's identical query (same names, same data) neither reads its answer nor waits on it
          account: q.accountId,
          m: q.method,
          h: q.horizon,
          t: q.thresholds ?? null,
          l: q.levels,
          // the warnings too: an entity left out (no data) changes them, not the nodes
          // and each node's bounds (a node without data of its own may change them) and each leaf's
          // (a leaf deleted and made again with the same data may have others), and each node's
          // seasons (found by QA: a node's new `season_length` got the answer fitted with the old)
          a: axes.map((a) => [
            a.axis,
            a.kind,
            a.nodes.map((n) => [n.entity, n.level, n.own, n.series.digest, n.leaves, n.bottom, nodeBounds(hierarchy, q.replay, a.axis, n.entity) ?? null, seasonalInfo(hierarchy.records.get(n.entity)!)]),
            [...new Set(a.nodes.flatMap((n) => n.leaves))].map((l) => nodeBounds(hierarchy, undefined, a.axis, l) ?? null),
            a.warnings,
          ]),
        }),
      )
      .digest('hex');
    const cached = q.replay ? undefined : this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    // Identical queries in flight share one computation (`SharedRuns`: each caller may still leave
    // alone; its fits and reconciliation stop when all have left, and what it queued is dropped if
    // it fails); a replay never shares (it fits afresh with recorded specifications).
    return this.running.run(q.replay ? undefined : key, q.signal, async (signal) => {
      const outcomes: AxisOutcome[] = [];
      for (const [i, a] of axes.entries()) outcomes.push(await this.axis(hierarchy, a, q, i === 0, signal));
      const result = this.assemble(hierarchy, q, outcomes);
      if (q.replay) return result;
      this.cache.set(key, result);
      if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      return result;
    });
  }

  /** Forecast every node of one axis to the common target step, then reconcile (until `signal` aborts). */
  private async axis(hierarchy: Hierarchy, a: AxisHierarchy, q: DepthQuery, report: boolean, signal: AbortSignal): Promise<AxisOutcome> {
    const target = Math.max(...a.nodes.map((n) => n.series.lastIndex)) + q.horizon;
    const warnings = [...a.warnings];
    const outcomes = await Promise.all(
      a.nodes.map((n) => {
        const steps = target - n.series.lastIndex;
        if (steps > MAX_NODE_HORIZON) {
          return { ok: false as const, reason: `its data end ${steps - q.horizon} steps before the others'; at most ${MAX_NODE_HORIZON} steps are forecast` };
        }
        const replay = q.replay ? { fresh: true, model: q.replay.specOf(n.entity, a.axis) ?? NODE_MODEL } : {};
        return runNodeJob(this.deps.pool, nodeJob(hierarchy.records.get(n.entity)!, fittedShape(hierarchy, q.replay, a, n), n.series, steps, { levels: [], detail: { draws: DEFAULT_DRAWS, originDraws: ORIGIN_DRAWS }, ...replay }), { owner: q.accountId, signal });
      }),
    );
    const rootOutcome = outcomes[0];
    if (!rootOutcome.ok) {
      // a sum cut short by leaves whose data end early: name them, they are what to fix
      const ends = a.sumEnds.get(q.root.entity);
      throw new ServiceError('insufficient_data', `axis ${a.axis} of ${q.root.entity}: ${rootOutcome.reason}${ends ? `; ${ends}` : ''}`, { axis: a.axis });
    }
    const kept = a.nodes.flatMap((n, i) => {
      const o = outcomes[i];
      if (o.ok) return [{ node: n, result: o.result, seed: o.seed }];
      warnings.push(`${a.axis}: ${n.entity} left out: ${o.reason}`);
      return [];
    });
    const members = new Set(kept.map((k) => k.node.entity));
    const nodes = kept.map((k) => ({ ...k.node, bottom: isBottom(hierarchy, k.node.entity, members) }));
    const leaves = [...new Set(nodes.flatMap((n) => n.leaves))];
    const reconciled = await this.deps.reconcile.call({
      kind: a.kind,
      method: q.method,
      horizon: q.horizon,
      seed: seedOf(nodes[0].series.digest),
      nonNegativeLeaves: leaves.filter((l) => floorsAtZero(a.inputs.get(l)!.values)),
      // a leaf has data of its own, so its bounds cannot have changed since (a replay meets the same)
      leafBounds: leaves.flatMap((l) => {
        const b = nodeBounds(hierarchy, undefined, a.axis, l);
        return b ? [[l, b] as const] : [];
      }),
      nodes: kept.map((k, i) => {
        const d = k.result.detail!;
        const bounds = nodeBounds(hierarchy, q.replay, a.axis, k.node.entity);
        return { entity: k.node.entity, leaves: nodes[i].leaves, bottom: nodes[i].bottom, start: k.node.series.firstIndex, mean: d.mean, grid: d.grid, residuals: d.residuals, origins: d.origins, bounds };
      }),
      report: report ? { levels: q.levels, thresholds: kept.map((_, i) => (i === 0 ? q.thresholds : undefined)) } : undefined,
    }, { owner: q.accountId, signal });
    warnings.push(...reconciled.warnings.map((w) => `${a.axis}: ${w}`));
    return { hierarchy: a, nodes, results: kept.map((k) => k.result), seeds: kept.map((k) => k.seed), target, reconciled, warnings };
  }

  /** The answer: the root's forecast and one entry per descendant used. */
  private assemble(hierarchy: Hierarchy, q: DepthQuery, outcomes: readonly AxisOutcome[]): DepthResult {
    const frequency = q.root.frequency;
    const [first] = outcomes;
    const forecastOf = (entity: string, warnings: string[]): Forecast => {
      const i = first.nodes.findIndex((n) => n.entity === entity);
      const summary = i >= 0 ? first.reconciled.summaries![i] : undefined;
      const confidence = i >= 0 ? first.reconciled.confidence![i] : null;
      // why none: a reconciled node's confidence needs backtest origins every node shares, with this
      // node's value observed there (found by QA: "the history is too short" was said of leaves with
      // 1,008 values whose hierarchy shared no origin)
      if (i >= 0 && confidence === null) warnings.push(`${first.hierarchy.axis}: confidence is 0: no backtest origin shared by every node of the hierarchy could be scored for this one`);
      const axesResolved: Record<string, number> = {};
      const models: Record<string, string> = {};
      for (const o of outcomes) {
        const k = o.nodes.findIndex((n) => n.entity === entity);
        if (k < 0) continue;
        axesResolved[o.hierarchy.axis] = o.reconciled.means[k];
        models[o.hierarchy.axis] = o.results[k].model;
      }
      return {
        distribution: summary?.distribution ?? [],
        confidence: confidence ?? 0,
        axesResolved,
        thresholds: summary?.thresholds ?? [],
        quantiles: summary ? Object.fromEntries(q.levels.map((p, j) => [String(p), summary.quantiles[j]])) : {},
        horizon: q.horizon,
        targetTime: formatTime(timeOf(frequency, first.target)),
        model: models[first.hierarchy.axis] ?? '',
        warnings,
        models,
      };
    };
    const rootWarnings = outcomes.flatMap((o) => [...o.warnings, ...o.results[0].warnings.map((w) => `${o.hierarchy.axis}: ${w}`)]);
    const forecast = forecastOf(q.root.entity, rootWarnings);
    const used = hierarchy.entities.filter((e) => e !== q.root.entity && outcomes.some((o) => o.nodes.some((n) => n.entity === e)));
    // each descendant with its own forecast's warnings, as at depth 0 (found by QA: a leaf's
    // "intervals widened for the interpolated values" was dropped at depth 1)
    const ownWarnings = (entity: string): string[] =>
      outcomes.flatMap((o) => {
        const k = o.nodes.findIndex((n) => n.entity === entity);
        return k < 0 ? [] : o.results[k].warnings.map((w) => `${o.hierarchy.axis}: ${w}`);
      });
    const descendants = used.map((entity) => ({ entity, level: hierarchy.level.get(entity)!, forecast: forecastOf(entity, ownWarnings(entity)) }));
    const inputs = outcomes.flatMap((o) => [...o.hierarchy.inputs].map(([entity, series]) => ({ entity, axis: ownAxis(hierarchy, entity, o.hierarchy.axis)!, series: seriesRead(series) })));
    const models = outcomes.flatMap((o) =>
      // without the reconciliation detail (large arrays): the record needs the model, not its draws
      o.nodes.map((n, k) => ({
        entity: n.entity,
        axis: o.hierarchy.axis,
        seriesDigest: n.series.digest,
        aggregated: !n.own,
        result: { ...o.results[k], detail: undefined },
        seed: o.seeds[k],
        info: axisInfo(hierarchy.records.get(n.entity)!, fittedShape(hierarchy, q.replay, o.hierarchy, n)),
        bounds: nodeBounds(hierarchy, q.replay, o.hierarchy.axis, n.entity),
      })),
    );
    return { forecast, descendants, method: first.reconciled.method, inputs, models };
  }
}
