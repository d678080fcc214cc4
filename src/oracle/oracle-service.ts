/**
 * OracleService.Query: the engine's calibrated distribution for an entity's axes (API.md
 * section 5). Data is read as of the latest revision; each axis is forecast in the worker pool;
 * the query and everything an audit needs are recorded.
 */
import { OracleServiceService, type QueryRequest } from '../../gen/forecast/v1/oracle_service.pb';
import { formatTime } from '../clock';
import { parseEntityId } from '../entities/entity-id';
import type { EntityRecord, EntityStore } from '../entities/entity-store';
import { timeOf } from '../entities/frequency';
import type { ObservationStore } from '../entities/observation-store';
import { newId } from '../ids';
import { accountOf } from '../rpc/context';
import { invalidArgument, NotFoundError, ServiceError } from '../rpc/errors';
import { bindService, type ServiceBinding } from '../rpc/registry';
import { ForecastJobFailed, type ForecastPool } from './forecast-pool';
import type { ForecastJobResult } from './forecast-job';
import type { QueryStore } from './query-store';
import { ENGINE_INFO, seasonalInfo, seedOf } from './engine-info';
import type { SeriesLoader } from './series-loader';
import { DEFAULT_QUANTILE_LEVELS } from './summary';
import { answerDepthQuery, checkReconciliation, type CheckedDepthRequest } from '../graph/depth-endpoint';
import type { DepthQueries } from '../graph/hierarchy-query';

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
  readonly depthQueries: DepthQueries;
}

interface CheckedRequest extends CheckedDepthRequest {
  readonly entity: string;
}

/** Validate the request fields that do not need the entity. */
function checkRequest(req: QueryRequest): Omit<CheckedRequest, 'axes'> {
  const { entity } = parseEntityId(req.entity);
  if (!Number.isInteger(req.depth) || req.depth < 0 || req.depth > MAX_DEPTH) throw invalidArgument('depth', `must be 0..${MAX_DEPTH}, got ${req.depth}`);
  if (req.includeManifest) throw invalidArgument('include_manifest', 'audit manifests are not available yet; omit it or send false (the query is recorded either way)');
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

/** Engine failures in a worker → the contract's errors, naming the axis. */
function jobError(err: unknown, entity: string, axis: string): unknown {
  if (!(err instanceof ForecastJobFailed)) return err;
  const e = err.error;
  if (e.name === 'InsufficientDataError') {
    return new ServiceError('insufficient_data', `axis ${axis} of ${entity} has ${e.have} observations; at least ${e.need} are needed to forecast it`, {
      axis,
      have: e.have,
      need: e.need,
    });
  }
  if (e.name === 'InvalidSeriesError' || e.name === 'UnknownModelError') return new ServiceError('failed_precondition', `axis ${axis} of ${entity}: ${e.message}`, { axis });
  return new ServiceError('internal', 'internal error', undefined, undefined, { cause: new Error(`${e.name}: ${e.message}`) });
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
        if (checked.depth > 0) return answerDepthQuery(deps, ctx, accountId, entity, { ...checked, axes }, asOf);
        const info = seasonalInfo(entity);
        const results = await Promise.all(
          axes.map(async (name, i) => {
            const axis = entity.axes.find((a) => a.name === name)!;
            const series = await deps.series.load(accountId, entity, axis, asOf);
            const seed = seedOf(series.digest);
            const axisInfo = { ...info, kind: axis.kind };
            const fitKey = `${series.digest}|${SERVICE_MODEL}|h${checked.horizon}|s${seed}|p${info.period}|${(info.periods ?? []).join(',')}|${axis.kind}`;
            let result: ForecastJobResult;
            try {
              result = await deps.pool.run({
                fitKey,
                series: series.values,
                info: axisInfo,
                horizon: checked.horizon,
                seed,
                model: SERVICE_MODEL,
                thresholds: i === 0 ? checked.thresholds : undefined,
                levels: i === 0 ? checked.levels : [],
              });
            } catch (err) {
              throw jobError(err, entity.entity, name);
            }
            return { name, axis, series, seed, result };
          }),
        );
        const first = results[0];
        const summary = first.result.summary;
        const forecast = {
          distribution: summary.distribution,
          confidence: first.result.confidence ?? 0,
          axesResolved: Object.fromEntries(results.map((r) => [r.name, r.result.summary.mean])),
          thresholds: summary.thresholds,
          quantiles: Object.fromEntries(checked.levels.map((p, i) => [String(p), summary.quantiles[i]])),
          horizon: checked.horizon,
          targetTime: formatTime(timeOf(entity.frequency, first.series.lastIndex + checked.horizon)),
          model: first.result.model,
          warnings: results.flatMap((r) => r.result.warnings.map((w) => `${r.name}: ${w}`)),
          models: Object.fromEntries(results.map((r) => [r.name, r.result.model])),
        };
        if (first.result.confidence === null) forecast.warnings.push(`${first.name}: confidence is 0 because the history is too short to backtest`);
        const queryId = newId('q', ctx.clock);
        await deps.queries.save({
          queryId,
          accountId,
          entity: entity.entity,
          createTime: ctx.clock.now(),
          dataRevision: asOf,
          keyId: ctx.principal!.keyId,
          request: { entity: checked.entity, depth: checked.depth, axes, horizon: checked.horizon, thresholds: checked.thresholds ?? null, quantiles: checked.levels, include_manifest: false },
          engine: ENGINE_INFO,
          axes: results.map((r) => ({
            axis: r.name,
            kind: r.axis.kind,
            observations: r.series.nobs,
            firstTime: r.series.firstTime === undefined ? '' : formatTime(r.series.firstTime),
            lastTime: r.series.lastTime === undefined ? '' : formatTime(r.series.lastTime),
            seriesDigest: r.series.digest,
            model: r.result.model,
            requestedModel: r.result.requestedModel,
            params: r.result.params,
            seed: r.seed,
            intervalMethod: r.result.intervalMethod,
            warnings: r.result.warnings,
          })),
          output: forecast,
        });
        return { queryId, forecast, dataAsOf: String(asOf), entity: entity.entity, depth: checked.depth, descendants: [], reconciliation: '' };
      },
    },
  });
}
