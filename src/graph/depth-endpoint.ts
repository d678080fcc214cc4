/**
 * The oracle endpoint's `depth` ≥ 1 branch: validates the method, runs the depth query
 * (`hierarchy-query.ts`), records it with every input series read and every node forecast made,
 * and shapes the response. The oracle endpoint calls `answerDepthQuery` after its own checks.
 */
import type { QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { formatTime } from '../clock';
import type { EntityRecord } from '../entities/entity-store';
import { RECONCILE_METHODS, type ReconcileMethod } from '../engine/reconcile/index';
import { newId } from '../ids';
import { ENGINE_INFO } from '../oracle/engine-info';
import type { AxisRecordOfQuery, QueryStore } from '../oracle/query-store';
import type { LoadedSeries } from '../oracle/series-loader';
import type { CallContext } from '../rpc/context';
import { invalidArgument } from '../rpc/errors';
import type { DepthQueries, DepthResult } from './hierarchy-query';

/** The request's `reconciliation`, `mint_shrink` when empty. Throws 400 naming the field. */
export function checkReconciliation(value: string): ReconcileMethod {
  if (value === '') return 'mint_shrink';
  if (!(RECONCILE_METHODS as readonly string[]).includes(value)) {
    throw invalidArgument('reconciliation', `must be one of ${RECONCILE_METHODS.join(', ')}, got ${JSON.stringify(value.slice(0, 40))}`);
  }
  return value as ReconcileMethod;
}

/** The oracle's validated request, as the depth branch needs it. */
export interface CheckedDepthRequest {
  readonly depth: number;
  readonly horizon: number;
  readonly axes: readonly string[];
  readonly thresholds: readonly number[] | undefined;
  readonly levels: readonly number[];
  readonly method: ReconcileMethod;
}

export interface DepthEndpointDeps {
  readonly depthQueries: DepthQueries;
  readonly queries: QueryStore;
}

/** The series facts a record keeps of a series. */
function seriesFacts(series: LoadedSeries) {
  return {
    observations: series.nobs,
    firstTime: series.firstTime === undefined ? '' : formatTime(series.firstTime),
    lastTime: series.lastTime === undefined ? '' : formatTime(series.lastTime),
    seriesDigest: series.digest,
  };
}

/**
 * The record's per-series entries: every node forecast (its fitted series: the entity's own, or
 * the sum of its leaves, `aggregated`), then every own series read that no node forecast used
 * directly (leaves below the queried depth, summed into their ancestors).
 */
function recordEntries(result: DepthResult): AxisRecordOfQuery[] {
  const fitted = new Set<string>();
  const inputOf = new Map(result.inputs.map((i) => [`${i.entity}\u0000${i.axis}`, i]));
  const kindOf = new Map(result.inputs.map((i) => [i.axis, i.kind]));
  const models = result.models.map((m) => {
    const key = `${m.entity}\u0000${m.axis}`;
    if (!m.aggregated) fitted.add(key);
    const input = inputOf.get(key);
    return {
      entity: m.entity,
      axis: m.axis,
      kind: kindOf.get(m.axis) ?? '',
      aggregated: m.aggregated,
      ...(input && !m.aggregated ? seriesFacts(input.series) : { observations: 0, firstTime: '', lastTime: '', seriesDigest: m.seriesDigest }),
      model: m.result.model,
      requestedModel: m.result.requestedModel,
      params: m.result.params,
      seed: m.seed,
      intervalMethod: m.result.intervalMethod,
      warnings: m.result.warnings,
    };
  });
  const inputs = result.inputs
    .filter((i) => !fitted.has(`${i.entity}\u0000${i.axis}`))
    .map((i) => ({ entity: i.entity, axis: i.axis, kind: i.kind, ...seriesFacts(i.series), model: '', requestedModel: '', params: {}, seed: 0, intervalMethod: '', warnings: [] }));
  return [...models, ...inputs];
}

/** Answer and record a depth ≥ 1 oracle query for `root` (which exists and has `axes`). */
export async function answerDepthQuery(deps: DepthEndpointDeps, ctx: CallContext, accountId: string, root: EntityRecord, req: CheckedDepthRequest, asOf: number): Promise<QueryResponse> {
  const result = await deps.depthQueries.run({ accountId, root, ...req, asOf });
  const queryId = newId('q', ctx.clock);
  const descendants = result.descendants.map((d) => ({ entity: d.entity, level: d.level, forecast: d.forecast }));
  await deps.queries.save({
    queryId,
    accountId,
    entity: root.entity,
    createTime: ctx.clock.now(),
    dataRevision: asOf,
    keyId: ctx.principal!.keyId,
    request: {
      entity: root.entity,
      depth: req.depth,
      axes: req.axes,
      horizon: req.horizon,
      thresholds: req.thresholds ?? null,
      quantiles: req.levels,
      reconciliation: req.method,
      include_manifest: false,
    },
    engine: ENGINE_INFO,
    axes: recordEntries(result),
    output: { forecast: result.forecast, descendants, reconciliation: result.method },
  });
  return { queryId, forecast: result.forecast, dataAsOf: String(asOf), entity: root.entity, depth: req.depth, descendants, reconciliation: result.method };
}
