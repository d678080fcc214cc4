/**
 * Reproducing a recorded query from its signed manifest: the same request, on the data as of
 * the recorded revision (checked against the recorded series digests), fitting the recorded
 * model specification with the recorded seed and seasonal periods, through the oracle's own
 * forecasting code (`oracle/axis-forecast.ts`) — but fitted afresh, never from a cache.
 */
import type { ManifestInput, ManifestModel } from '../../gen/forecast/v1/manifest.pb';
import type { ReproduceResponse } from '../../gen/forecast/v1/forensics_service.pb';
import type { AxisKind, EntityStore } from '../entities/entity-store';
import type { CanonicalJson } from '../manifests/canonical';
import { jcs, sha256Hex } from '../manifests/canonical';
import type { EngineIdentity } from '../manifests/manifest-builder';
import type { ManifestStore } from '../manifests/manifest-store';
import { assembleForecast, forecastAxes, type AxisPlan } from '../oracle/axis-forecast';
import type { ForecastPool } from '../oracle/forecast-pool';
import type { SeriesLoader } from '../oracle/series-loader';
import { NotFoundError, ServiceError } from '../rpc/errors';
import { differences } from './differences';

/** What a reproduction needs: the stored manifest, the data as of its revision, the worker pool. */
export interface ForensicsDeps {
  readonly manifests: ManifestStore;
  readonly canonical: CanonicalJson;
  readonly entities: EntityStore;
  readonly series: SeriesLoader;
  readonly pool: ForecastPool;
  /** The running engine's identity (`ENGINE_INFO`). */
  readonly engine: EngineIdentity;
}

/** 400 `failed_precondition` naming the input whose data is gone and what is missing. */
function gone(input: ManifestInput, missing: 'entity' | 'axis' | 'observations', message: string): ServiceError {
  return new ServiceError('failed_precondition', message, { entity: input.entity, axis: input.axis, missing });
}

/** The replay plan of one recorded input: its data as of `revision`, which must be what the query read. */
async function planOf(deps: ForensicsDeps, accountId: string, input: ManifestInput, model: ManifestModel | undefined, revision: number): Promise<AxisPlan> {
  if (!model || model.entity !== input.entity || model.axis !== input.axis) throw new Error(`manifest models do not match its inputs at ${input.entity}/${input.axis}`);
  const entity = await deps.entities.get(accountId, input.entity);
  if (!entity) throw gone(input, 'entity', `entity ${input.entity}, read by this query, has been deleted: the data the query used is gone`);
  const axis = entity.axes.find((a) => a.name === input.axis);
  if (!axis) throw gone(input, 'axis', `axis ${input.axis} of ${input.entity}, read by this query, has been deleted`);
  if (entity.frequency !== input.frequency || axis.kind !== input.kind) {
    throw gone(input, 'entity', `entity ${input.entity} was deleted and re-created (now ${entity.frequency} ${axis.kind}, the query read ${input.frequency} ${input.kind}): the data the query used is gone`);
  }
  const series = await deps.series.load(accountId, entity, axis, revision);
  if (series.digest !== input.seriesDigest) {
    throw gone(
      input,
      'observations',
      `the observations of ${input.entity} axis ${input.axis} as of revision ${revision} are not those the query read (${input.observations} then, ${series.nobs} now): they were deleted`,
    );
  }
  return { entity, axis, series, info: { period: model.seasonLength, periods: [...model.seasonalPeriods], kind: input.kind as AxisKind }, model: model.spec, seed: model.seed };
}

/** Reproduce one of the account's queries (404 if it has no manifest for the account). */
export async function reproduce(deps: ForensicsDeps, accountId: string, queryId: string): Promise<ReproduceResponse> {
  const stored = await deps.manifests.get(accountId, queryId);
  if (!stored) throw new NotFoundError('query', queryId);
  const manifest = deps.canonical.parseManifest(stored.json);
  const request = manifest.request!;
  // Hierarchical queries (depth ≥ 1) reconcile their series: replaying them belongs with that feature.
  if (request.depth > 0) throw new ServiceError('failed_precondition', `query ${queryId} has depth ${request.depth}: reproducing hierarchical queries is not supported yet`, { query_id: queryId });
  const revision = Number(manifest.dataRevision);
  const plans = await Promise.all(manifest.inputs.map((input, i) => planOf(deps, accountId, input, manifest.models[i], revision)));
  const spec = { horizon: request.horizon, thresholds: request.thresholds.length > 0 ? request.thresholds : undefined, levels: request.quantiles };
  const outcomes = await forecastAxes(deps.pool, plans, spec, true);
  const forecast = assembleForecast(outcomes, spec, plans[0].entity.frequency);
  const reproducedJson = deps.canonical.forecast(forecast);
  const digest = sha256Hex(jcs(reproducedJson));
  const diffs = differences(JSON.parse(stored.output), reproducedJson as never, 'forecast');
  const reproduced = digest === manifest.outputDigest;
  const recorded = manifest.engine!;
  const engineVersionChanged = recorded.version !== deps.engine.version;
  const notes: string[] = [];
  if (engineVersionChanged) {
    notes.push(`the engine version differs: recorded ${recorded.version}, running ${deps.engine.version}; reproduced with the running engine, ${reproduced ? 'and the output is identical' : 'and the output differs (see differences)'}`);
  } else if (!reproduced) {
    notes.push('the output differs although the engine version is the same (see differences)');
  }
  if (recorded.runtime !== deps.engine.runtime) notes.push(`the runtime differs: recorded ${recorded.runtime}, running ${deps.engine.runtime}`);
  return {
    queryId,
    reproduced,
    originalOutputDigest: manifest.outputDigest,
    reproducedOutputDigest: digest,
    differences: diffs.map((d) => ({ path: d.path, original: d.original, reproduced: d.reproduced })),
    forecast,
    dataRevision: manifest.dataRevision,
    recordedEngineVersion: recorded.version,
    engineVersion: deps.engine.version,
    engineVersionChanged,
    notes,
  };
}
