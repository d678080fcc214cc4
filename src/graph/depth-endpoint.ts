/**
 * The oracle endpoint's `depth` ≥ 1 branch: validates the method, runs the depth query
 * (`hierarchy-query.ts`), records it with its signed manifest — every input series read and
 * every node model fitted (`manifests/query-recorder.ts`) — and shapes the response. The oracle
 * endpoint calls `answerDepthQuery` after its own checks.
 */
import type { ManifestRequest } from '../../gen/forecast/v1/manifest.pb';
import type { QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import type { EntityRecord } from '../entities/entity-store';
import { RECONCILE_METHODS, type ReconcileMethod } from '../engine/reconcile/index';
import { newId } from '../ids';
import { manifestInput, manifestModel } from '../manifests/manifest-builder';
import { recordQuery, type QueryRecorderDeps } from '../manifests/query-recorder';
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

export interface DepthEndpointDeps extends QueryRecorderDeps {
  readonly depthQueries: DepthQueries;
}

/** The manifest's inputs (every own series read) and models (every node forecast) of a depth query. */
export function depthManifestEntries(result: DepthResult, frequency: string) {
  return {
    inputs: result.inputs.map((i) => manifestInput(i.entity, i.axis, frequency, i.series)),
    models: result.models.map((m) => manifestModel(m.entity, m.axis, m.result, m.seed, m.info, m.seriesDigest, m.aggregated, m.bounds)),
  };
}

/**
 * Answer and record a depth ≥ 1 oracle query for `root` (which exists and has `axes`); undefined
 * when `root` contains nothing (the caller answers it as at depth 0: the same forecast).
 */
export async function answerDepthQuery(
  deps: DepthEndpointDeps,
  ctx: CallContext,
  accountId: string,
  root: EntityRecord,
  req: CheckedDepthRequest,
  asOf: number,
  request: ManifestRequest,
): Promise<QueryResponse | undefined> {
  const result = await deps.depthQueries.run({ accountId, root, ...req, asOf, signal: ctx.signal });
  if (!result) return undefined;
  const descendants = result.descendants.map((d) => ({ entity: d.entity, level: d.level, forecast: d.forecast }));
  return recordQuery(deps, {
    accountId,
    apiKeyId: ctx.principal!.keyId,
    signal: ctx.signal,
    createTime: ctx.clock.now(),
    dataRevision: asOf,
    request,
    ...depthManifestEntries(result, root.frequency),
    response: { queryId: newId('q', ctx.clock), forecast: result.forecast, dataAsOf: String(asOf), entity: root.entity, depth: req.depth, descendants, reconciliation: result.method, manifest: undefined },
  });
}
