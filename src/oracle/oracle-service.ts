/**
 * OracleService.Query: the engine's calibrated distribution for an entity's axes (API.md
 * section 5). Data is read as of the latest revision; each axis is forecast in the worker pool;
 * the query is recorded with its signed audit manifest (API.md section 7) before the answer.
 */
import { OracleServiceService, type QueryRequest } from '../../gen/forecast/v1/oracle_service.pb';
import { parseEntityId } from '../entities/entity-id';
import type { EntityRecord, EntityStore } from '../entities/entity-store';
import type { ObservationStore } from '../entities/observation-store';
import { newId } from '../ids';
import { jcs, sha256Hex, type CanonicalJson } from '../manifests/canonical';
import { buildManifest, type EngineIdentity } from '../manifests/manifest-builder';
import type { ManifestSigner } from '../manifests/manifest-signer';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError, ServiceError } from '../rpc/errors';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { assembleForecast, forecastAxes } from './axis-forecast';
import type { ForecastPool } from './forecast-pool';
import type { QueryStore } from './query-store';
import { seasonalInfo, seedOf } from './engine-info';
import type { SeriesLoader } from './series-loader';
import { DEFAULT_QUANTILE_LEVELS } from './summary';

export const MAX_DEPTH = 8;
export const MAX_HORIZON = 1000;
export const MAX_QUERY_AXES = 32;
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
}

interface CheckedRequest {
  readonly entity: string;
  readonly depth: number;
  readonly horizon: number;
  readonly axes: readonly string[];
  readonly thresholds: readonly number[] | undefined;
  readonly levels: readonly number[];
}

/** Validate the request fields that do not need the entity. */
function checkRequest(req: QueryRequest): Omit<CheckedRequest, 'axes'> {
  const { entity } = parseEntityId(req.entity);
  if (!Number.isInteger(req.depth) || req.depth < 0 || req.depth > MAX_DEPTH) throw invalidArgument('depth', `must be 0..${MAX_DEPTH}, got ${req.depth}`);
  if (req.depth > 0) throw invalidArgument('depth', `values above 0 (hierarchical reconciliation) are not supported yet; use 0`);
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
  };
}

function resolveAxes(requested: readonly string[], entity: EntityRecord): string[] {
  if (requested.length > MAX_QUERY_AXES) throw invalidArgument('axes', `at most ${MAX_QUERY_AXES}, got ${requested.length}`);
  const names = new Set(entity.axes.map((a) => a.name));
  const seen = new Set<string>();
  requested.forEach((a, i) => {
    if (!names.has(a)) throw invalidArgument(`axes[${i}]`, `entity ${entity.entity} has no axis ${JSON.stringify(a.slice(0, 80))}`);
    if (seen.has(a)) throw invalidArgument(`axes[${i}]`, `duplicate axis ${a}`);
    seen.add(a);
  });
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
        const asOf = await deps.observations.latestRevision();
        const info = seasonalInfo(entity);
        const plans = await Promise.all(
          axes.map(async (name) => {
            const axis = entity.axes.find((a) => a.name === name)!;
            const series = await deps.series.load(accountId, entity, axis, asOf);
            return { entity, axis, series, info: { ...info, kind: axis.kind }, model: SERVICE_MODEL, seed: seedOf(series.digest) };
          }),
        );
        const spec = { horizon: checked.horizon, thresholds: checked.thresholds, levels: checked.levels };
        const outcomes = await forecastAxes(deps.pool, plans, spec);
        const forecast = assembleForecast(outcomes, spec, entity.frequency);
        const output = jcs(deps.canonical.forecast(forecast));
        const outputDigest = sha256Hex(output);
        const queryId = newId('q', ctx.clock);
        const createTime = ctx.clock.now();
        const request = { entity: checked.entity, depth: checked.depth, axes, horizon: checked.horizon, thresholds: [...(checked.thresholds ?? [])], quantiles: [...checked.levels], includeManifest: req.includeManifest };
        const signed = await deps.signer.sign(buildManifest({ queryId, createTime, request, dataRevision: asOf, outcomes, engine: deps.engine, outputDigest }));
        // The record and the signed manifest are one row: committed together, before the answer.
        await deps.queries.save({
          queryId,
          accountId,
          entity: entity.entity,
          createTime,
          dataRevision: asOf,
          keyId: ctx.principal!.keyId,
          output,
          outputDigest,
          manifest: signed.json,
        });
        return {
          queryId,
          forecast,
          dataAsOf: String(asOf),
          entity: entity.entity,
          depth: checked.depth,
          manifest: req.includeManifest ? signed.manifest : undefined,
        };
      },
    },
  });
}
