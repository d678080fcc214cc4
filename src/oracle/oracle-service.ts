/**
 * OracleService.Query: the engine's calibrated distribution for an entity's axes (API.md
 * section 5). Data is read as of the latest revision; each axis is forecast in the worker pool;
 * the query is recorded with its signed audit manifest (API.md section 7) before the answer.
 */
import { OracleServiceService, type QueryRequest } from '../../gen/forecast/v1/oracle_service.pb';
import { parseEntityId } from '../entities/entity-id';
import { MAX_AXES } from '../entities/entity-validation';
import type { EntityRecord, EntityStore } from '../entities/entity-store';
import type { ObservationStore } from '../entities/observation-store';
import { newId } from '../ids';
import type { ManifestRequest } from '../../gen/forecast/v1/manifest.pb';
import type { CanonicalJson } from '../manifests/canonical';
import { manifestInput, manifestModel, type EngineIdentity } from '../manifests/manifest-builder';
import type { ManifestSigner } from '../manifests/manifest-signer';
import { recordQuery } from '../manifests/query-recorder';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError, ServiceError } from '../rpc/errors';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { assembleForecast, forecastAxes } from './axis-forecast';
import type { ForecastPool } from './forecast-pool';
import type { QueryStore } from './query-store';
import { axisInfo, seedOf } from './engine-info';
import type { SeriesLoader } from './series-loader';
import { DEFAULT_QUANTILE_LEVELS } from './summary';
import { answerDepthQuery, checkReconciliation, type CheckedDepthRequest } from '../graph/depth-endpoint';
import type { DepthQueries } from '../graph/hierarchy-query';

export const MAX_DEPTH = 8;
export const MAX_HORIZON = 1000;
export const MAX_THRESHOLDS = 99;
export const MAX_QUANTILES = 99;
/** The model the service fits: the engine's automatic selection. */
export const SERVICE_MODEL = 'auto';

export interface OracleDeps {
  readonly entities: EntityStore;
  readonly observations: ObservationStore;
  readonly series: SeriesLoader;
  readonly pool: ForecastPool;
  readonly queries: QueryStore;
  readonly canonical: CanonicalJson;
  readonly signer: ManifestSigner;
  /** The engine identity recorded in manifests (`ENGINE_INFO`). */
  readonly engine: EngineIdentity;
  readonly depthQueries: DepthQueries;
}

interface CheckedRequest extends CheckedDepthRequest {
  readonly entity: string;
}

/** Validate the request fields that do not need the entity. */
function checkRequest(req: QueryRequest): Omit<CheckedRequest, 'axes'> {
  const { entity } = parseEntityId(req.entity);
  if (!Number.isInteger(req.depth) || req.depth < 0 || req.depth > MAX_DEPTH) throw invalidArgument('depth', `must be 0..${MAX_DEPTH}, got ${req.depth}`);
  const horizon = req.horizon || 1;
  if (!Number.isInteger(horizon) || horizon < 1 || horizon > MAX_HORIZON) throw invalidArgument('horizon', `must be 1..${MAX_HORIZON}, got ${req.horizon}`);
  if (req.thresholds.length > MAX_THRESHOLDS) throw invalidArgument('thresholds', `at most ${MAX_THRESHOLDS}, got ${req.thresholds.length}`);
  req.thresholds.forEach((t, i) => {
    if (!Number.isFinite(t)) throw invalidArgument(`thresholds[${i}]`, `must be finite, got ${t}`);
    if (i > 0 && !(t > req.thresholds[i - 1])) throw invalidArgument(`thresholds[${i}]`, `must be greater than thresholds[${i - 1}] (${req.thresholds[i - 1]}): thresholds are strictly ascending`);
  });
  if (req.quantiles.length > MAX_QUANTILES) throw invalidArgument('quantiles', `at most ${MAX_QUANTILES}, got ${req.quantiles.length}`);
  const seen = new Set<number>();
  req.quantiles.forEach((q, i) => {
    if (!(q > 0 && q < 1)) throw invalidArgument(`quantiles[${i}]`, `must be in (0, 1), got ${q}`);
    if (seen.has(q)) throw invalidArgument(`quantiles[${i}]`, `duplicate level ${q}`);
    seen.add(q);
  });
  return {
    entity,
    depth: req.depth,
    horizon,
    thresholds: req.thresholds.length > 0 ? [...req.thresholds] : undefined,
    levels: req.quantiles.length > 0 ? [...req.quantiles] : DEFAULT_QUANTILE_LEVELS,
    method: checkReconciliation(req.reconciliation),
  };
}

/** The normalised request the manifest records (defaults applied, axes resolved). */
function manifestRequest(req: QueryRequest, checked: Omit<CheckedRequest, 'axes'>, axes: readonly string[]): ManifestRequest {
  return {
    entity: checked.entity,
    depth: checked.depth,
    axes: [...axes],
    horizon: checked.horizon,
    thresholds: [...(checked.thresholds ?? [])],
    quantiles: [...checked.levels],
    includeManifest: req.includeManifest,
    // unused at depth 0, so not recorded there
    reconciliation: checked.depth > 0 ? checked.method : '',
  };
}

function resolveAxes(requested: readonly string[], entity: EntityRecord): string[] {
  if (requested.length > MAX_AXES) throw invalidArgument('axes', `at most ${MAX_AXES}, got ${requested.length}`);
  const names = new Set(entity.axes.map((a) => a.name));
  const seen = new Set<string>();
  requested.forEach((a, i) => {
    if (!names.has(a)) throw invalidArgument(`axes[${i}]`, `entity ${entity.entity} has no axis ${JSON.stringify(a.slice(0, 80))}`);
    if (seen.has(a)) throw invalidArgument(`axes[${i}]`, `duplicate axis ${a}`);
    seen.add(a);
  });
  // an entity holds at most MAX_AXES axes; one stored before that cap was kept must name its axes
  if (requested.length === 0 && entity.axes.length > MAX_AXES) {
    throw invalidArgument('axes', `entity ${entity.entity} has ${entity.axes.length} axes: name at most ${MAX_AXES} of them`);
  }
  const axes = requested.length > 0 ? [...requested] : entity.axes.map((a) => a.name);
  if (axes.length === 0) throw new ServiceError('failed_precondition', `entity ${entity.entity} has no axes to forecast`, { field: 'axes' });
  return axes;
}

export function oracleService(deps: OracleDeps): ServiceBinding {
  return bindService(OracleServiceService, {
    query: {
      access: 'forecast:read',
      async handle(req, ctx) {
        const accountId = accountOf(ctx);
        const checked = checkRequest(req);
        const entity = await deps.entities.get(accountId, checked.entity);
        if (!entity) throw new NotFoundError('entity', checked.entity);
        const axes = resolveAxes(req.axes, entity);
        const asOf = await deps.observations.latestRevision(accountId);
        if (checked.depth > 0) {
          const answer = await answerDepthQuery(deps, ctx, accountId, entity, { ...checked, axes }, asOf, manifestRequest(req, checked, axes));
          if (answer) return answer;
          // it contains nothing: the depth-0 answer (below), with the depth asked and nothing reconciled
        }
        const plans = await Promise.all(
          axes.map(async (name) => {
            const axis = entity.axes.find((a) => a.name === name)!;
            const series = await deps.series.load(accountId, entity, axis, asOf, ctx.signal);
            return { entity, axis, series, info: axisInfo(entity, axis), model: SERVICE_MODEL, seed: seedOf(series.digest) };
          }),
        );
        const spec = { horizon: checked.horizon, thresholds: checked.thresholds, levels: checked.levels };
        const outcomes = await forecastAxes(deps.pool, plans, spec, { owner: accountId, signal: ctx.signal }).catch(async (err: unknown) => {
          // no data because the entity was deleted while it was read (made again since, or not): that is a 404, not a 422
          if (err instanceof ServiceError && err.code === 'insufficient_data' && (await deps.entities.get(accountId, entity.entity))?.incarnation !== entity.incarnation) {
            throw new NotFoundError('entity', entity.entity);
          }
          throw err;
        });
        const forecast = assembleForecast(outcomes, spec, entity.frequency);
        return recordQuery(deps, {
          accountId,
          apiKeyId: ctx.principal!.keyId,
          signal: ctx.signal,
          createTime: ctx.clock.now(),
          dataRevision: asOf,
          request: manifestRequest(req, checked, axes),
          inputs: outcomes.map((o) => manifestInput(entity.entity, o.axis, entity.frequency, o.series)),
          models: outcomes.map((o) => manifestModel(entity.entity, o.axis.name, o.result, o.seed, o.info, o.series.digest)),
          response: { queryId: newId('q', ctx.clock), forecast, dataAsOf: String(asOf), entity: entity.entity, depth: checked.depth, descendants: [], reconciliation: '', manifest: undefined },
        });
      },
    },
  });
}
