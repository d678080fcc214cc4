/**
 * How much series a depth query may read: the grid steps of the own series of every entity of
 * the hierarchy on the queried axes, summed, is checked before any series is read (each series'
 * first and last observation, `SeriesLoader.steps`), and a query over the limit is refused naming
 * how to narrow it.
 *
 * Why a limit and not a read of each series' tail only (the last `MAX_FIT_STEPS` steps, all the
 * engine fits): the answer depends on each whole series, so a tail would change it. The seed of
 * every node's sample paths and of the reconciliation is the SHA-256 of the whole series
 * (`seedOf(series.digest)`), which the manifest records as the input's fingerprint with its
 * observation count and first and last times; the engine validates every value and names the
 * whole length in its warning ("fitted on the last 20000 of the series' N steps"); a node with
 * data of its own is checked against the sum of its leaves over their whole overlap
 * (`hierarchy-series.ts`), and a leaf's forecasts are floored at 0 by its whole history
 * (`floorsAtZero`). Replays of recorded answers must reproduce them bit for bit.
 */
import type { AxisRecord, EntityRecord } from '../entities/entity-store';
import type { RevisionMemo, SeriesLoader } from '../oracle/series-loader';
import { ServiceError } from '../rpc/errors';
import type { Hierarchy } from './hierarchy-graph';

/**
 * Most grid steps of series one depth query reads, every own series of its hierarchy on its axes
 * together, first to last observation each, gaps included (8 bytes a step when loaded: 160 MB).
 * Why: one axis may cover 200,000 steps and a depth query 1,000 entities, 1.6 GB of series, with
 * as much again in what the fits return (measured: a cold query over 200 leaves of 200,000 hourly
 * steps took the process from 278 MB to 1.9 GB). 20,000,000 is 100 such series, or 1,000 of
 * 20,000 steps (all that the engine fits).
 */
export const MAX_DEPTH_QUERY_STEPS = 20_000_000;

/** What the check needs of a depth query. */
export interface StepsQuery {
  readonly accountId: string;
  /** A forensics replay: the grid steps the recorded query read (`NodeReplay.steps`). */
  readonly replay?: { readonly steps: number };
  readonly axes: readonly string[];
  readonly asOf: number;
  readonly signal?: AbortSignal;
  /** The query's newest revisions, read once per entity for this check and the reads after it. */
  readonly revisions?: RevisionMemo;
}

/**
 * Refuse (400 `invalid_argument` naming `depth`, as for too many entities) a depth query whose
 * hierarchy's series on its axes cover more than `limit` grid steps, before any is read. Counted:
 * every entity of the hierarchy with the axis, whether or not the query reads it (an entity
 * below `depth` with data of its own is read only where nothing beneath it has data).
 */
export async function checkDepthSteps(series: SeriesLoader, hierarchy: Hierarchy, q: StepsQuery, limit = MAX_DEPTH_QUERY_STEPS): Promise<void> {
  const reads: { axis: AxisRecord; entity: EntityRecord }[] = [];
  for (const name of q.axes) {
    for (const e of hierarchy.entities) {
      const entity = hierarchy.records.get(e)!;
      const axis = entity.axes.find((a) => a.name === name);
      if (axis) reads.push({ axis, entity });
    }
  }
  const steps = await Promise.all(reads.map((r) => series.steps(q.accountId, r.entity, r.axis, q.asOf, q.signal, q.revisions)));
  const total = steps.reduce((a, b) => a + b, 0);
  // A replay (forensics) reads what its query read, as of the same revision: over the limit only
  // if relations added since bring in more series (its answer would then differ anyway, and
  // reading them all first only to say so would be the very read the limit prevents: found by
  // review), or if the query was recorded before the limit and read more than it (then allowed).
  if (total <= (q.replay ? Math.max(limit, q.replay.steps) : limit)) return;
  if (q.replay) {
    throw new ServiceError(
      'failed_precondition',
      `the hierarchy under ${hierarchy.root} is no longer the one the query read: its series now cover ${total} grid points on the axes queried, where the query read ${q.replay.steps} (contains relations changed)`,
      { field: 'depth', steps: total, limit },
    );
  }
  const perAxis = q.axes.map((name) => `${name} ${steps.reduce((n, s, i) => n + (reads[i].axis.name === name ? s : 0), 0)}`);
  throw new ServiceError(
    'invalid_argument',
    `depth: the series of the ${hierarchy.entities.length} entities of the contains hierarchy under ${hierarchy.root} cover ${total} grid points on the axes queried (${perAxis.join(', ')}); a reconciled answer (depth ≥ 1) reads at most ${limit} (query an entity lower in it, fewer axes, or at depth 0)`,
    { field: 'depth', steps: total, limit },
  );
}
