/**
 * Mean forecasts of the nodes on a traversal page (QueryPaths with `axes`): each entity's own
 * series when it has observations, else the sum of the `contains` leaves beneath it — the series
 * a depth-0 forecast of that node would use in a hierarchy, fitted by the same jobs (and cache).
 */
import type { EntityStore } from '../entities/entity-store';
import type { ForecastPool } from '../oracle/forecast-pool';
import type { SeriesLoader } from '../oracle/series-loader';
import { boundsOf } from '../oracle/engine-info';
import { ServiceError } from '../rpc/errors';
import { loadHierarchy } from './hierarchy-graph';
import { axisHierarchy } from './hierarchy-series';
import { nodeBounds, nodeJob, runNodeJob } from './node-jobs';
import { intersectBounds, sumOfBounds } from '../engine/reconcile/index';
import type { RelationStore } from './relation-store';

/** One node's means and the reasons for any axis it lacks. */
export interface NodeMeans {
  readonly axesResolved: Record<string, number>;
  readonly warnings: readonly string[];
}

/** What traversal needs: the means of many entities. */
export interface NodeForecaster {
  /** `signal`: aborted when the answer is no longer wanted (fits not started are dropped). */
  means(accountId: string, entities: readonly string[], axes: readonly string[], horizon: number, signal?: AbortSignal): Promise<Map<string, NodeMeans>>;
}

export interface NodeForecastDeps {
  readonly entities: EntityStore;
  readonly relations: RelationStore;
  readonly series: SeriesLoader;
  readonly pool: ForecastPool;
  readonly observations: { latestRevision(accountId: string): Promise<number> };
}

/** The node forecaster over the service's stores and worker pool. */
export function nodeForecaster(deps: NodeForecastDeps): NodeForecaster {
  return {
    async means(accountId, entities, axes, horizon, signal) {
      const asOf = await deps.observations.latestRevision(accountId);
      // each entity's newest revision read once for the page (its axes, and leaves shared by sums)
      const revisions = deps.series.revisions();
      const records = new Map((await deps.entities.getMany(accountId, entities, signal)).map((r) => [r.entity, r]));
      const out = new Map<string, NodeMeans>();
      await Promise.all(
        entities.map(async (entity) => {
          const record = records.get(entity);
          const axesResolved: Record<string, number> = {};
          const warnings: string[] = [];
          if (!record) return void out.set(entity, { axesResolved, warnings: ['deleted during the traversal'] });
          for (const name of axes) {
            const axis = record.axes.find((a) => a.name === name);
            if (!axis) {
              warnings.push(`${name}: ${entity} has no such axis`);
              continue;
            }
            let series = await deps.series.load(accountId, record, axis, asOf, signal, revisions);
            const own = series.nobs > 0;
            // what the answer is censored to: the node's own bounds, and for a sum its leaves' bounds' sum too
            let censor = boundsOf(axis);
            if (!own) {
              // no data of its own: the sum of its leaves, as a hierarchy would forecast it
              try {
                const hierarchy = await loadHierarchy(deps.entities, deps.relations, accountId, record, signal);
                const tree = await axisHierarchy(hierarchy, 0, name, deps.series, accountId, asOf, signal, revisions);
                const node = tree.nodes[0];
                // what the sum is made of, e.g. that it ends where a leaf's data end (found by QA: a
                // region whose leaves ended in 1900 and 2199 got the 1900 sum's forecast, unwarned)
                warnings.push(...tree.warnings);
                series = node?.series ?? series;
                if (node) censor = intersectBounds(censor, sumOfBounds(node.leaves.map((l) => nodeBounds(hierarchy, undefined, name, l))));
              } catch (err) {
                // the call is over (its deadline's error is a ServiceError too): not a warning of this node's
                if (signal?.aborted || !(err instanceof ServiceError)) throw err;
                warnings.push(`${name}: ${err.message}`);
                continue;
              }
            }
            if (series.nobs === 0) {
              warnings.push(`${name}: ${entity} has no observations, and no leaf beneath it has any`);
              continue;
            }
            // a sum's forecast is fitted without the node's bounds (they describe its own data), its answer
            // censored to them and to what its leaves can sum to (found by QA: two [0, 100] leaves' parent at 201.6)
            const job = own ? nodeJob(record, axis, series, horizon, { levels: [] }) : nodeJob(record, { kind: axis.kind }, series, horizon, { levels: [], censor });
            const outcome = await runNodeJob(deps.pool, job, { owner: accountId, signal });
            if (outcome.ok) axesResolved[name] = outcome.result.summary.mean;
            else warnings.push(`${name}: ${outcome.reason}`);
          }
          out.set(entity, { axesResolved, warnings });
        }),
      );
      return out;
    },
  };
}
