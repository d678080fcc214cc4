/**
 * Reproducing a recorded query from its signed manifest: the same request, on the data as of
 * the recorded revision (checked against the recorded series digests), fitting the recorded
 * model specification with the recorded seed and seasonal periods — afresh, never from a cache —
 * through the code that answered it: the oracle's (`oracle/axis-forecast.ts`) at depth 0, the
 * graph's depth query (`graph/hierarchy-query.ts`, replay mode) at depth ≥ 1.
 */
import type { Manifest, ManifestInput, ManifestModel } from '../../gen/forecast/v1/manifest.pb';
import type { ReproduceResponse } from '../../gen/forecast/v1/forensics_service.pb';
import type { Descendant, Forecast } from '../../gen/forecast/v1/oracle_service.pb';
import type { AxisKind, AxisRecord, EntityRecord, EntityStore } from '../entities/entity-store';
import { indexOf, isFrequency } from '../entities/frequency';
import type { ReconcileMethod } from '../engine/reconcile/index';
import { depthManifestEntries } from '../graph/depth-endpoint';
import { leftOutEntities } from '../graph/hierarchy-series';
import type { DepthQueries } from '../graph/hierarchy-query';
import { jcs, sha256Hex, type CanonicalJson } from '../manifests/canonical';
import type { EngineIdentity } from '../manifests/manifest-builder';
import type { ManifestStore } from '../manifests/manifest-store';
import { assembleForecast, forecastAxes } from '../oracle/axis-forecast';
import type { ForecastPool } from '../oracle/forecast-pool';
import { boundsOf, withBounds } from '../oracle/engine-info';
import { boundsText } from '../engine/guard';
import type { LoadedSeries, SeriesLoader } from '../oracle/series-loader';
import { NotFoundError, ServiceError } from '../rpc/errors';
import { differences } from './differences';

/** What a reproduction needs: the stored manifest, the data as of its revision, the forecasting code. */
export interface ForensicsDeps {
  readonly manifests: ManifestStore;
  readonly canonical: CanonicalJson;
  readonly entities: EntityStore;
  readonly series: SeriesLoader;
  readonly pool: ForecastPool;
  readonly depthQueries: DepthQueries;
  /** The running engine's identity (`ENGINE_INFO`). */
  readonly engine: EngineIdentity;
}

type Missing = 'entity' | 'axis' | 'observations' | 'hierarchy';

/** 400 `failed_precondition` naming the series whose data is gone and what is missing. */
function gone(entity: string, axis: string, missing: Missing, message: string): ServiceError {
  return new ServiceError('failed_precondition', message, { entity, axis, missing });
}

/** An input's data as of `revision`, which must be what the query read (else it is gone). */
async function readInput(deps: ForensicsDeps, accountId: string, input: ManifestInput, revision: number): Promise<{ entity: EntityRecord; axis: AxisRecord; series: LoadedSeries }> {
  const entity = await deps.entities.get(accountId, input.entity);
  if (!entity) throw gone(input.entity, input.axis, 'entity', `entity ${input.entity}, read by this query, has been deleted: the data the query used is gone`);
  const axis = entity.axes.find((a) => a.name === input.axis);
  if (!axis) throw gone(input.entity, input.axis, 'axis', `axis ${input.axis} of ${input.entity}, read by this query, has been deleted`);
  // bounds cannot change while an axis has data: other bounds mean another incarnation of the entity
  if (entity.frequency !== input.frequency || axis.kind !== input.kind || axis.lowerBound !== input.lowerBound || axis.upperBound !== input.upperBound) {
    const shape = (frequency: string, kind: string, lower?: number, upper?: number) => `${frequency} ${kind}${lower === undefined && upper === undefined ? '' : ` ${boundsText({ lower, upper })}`}`;
    throw gone(
      input.entity,
      input.axis,
      'entity',
      `entity ${input.entity} was deleted and re-created (now ${shape(entity.frequency, axis.kind, axis.lowerBound, axis.upperBound)}, the query read ${shape(input.frequency, input.kind, input.lowerBound, input.upperBound)}): the data the query used is gone`,
    );
  }
  const series = await deps.series.load(accountId, entity, axis, revision);
  if (series.digest !== input.seriesDigest) {
    throw gone(input.entity, input.axis, 'observations', `the observations of ${input.entity} axis ${input.axis} as of revision ${revision} are not those the query read (${input.observations} then, ${series.nobs} now): they were deleted`);
  }
  return { entity, axis, series };
}

/** The output of a depth-0 query again: each recorded model refitted to its series. */
async function replayDepth0(deps: ForensicsDeps, accountId: string, manifest: Manifest, revision: number, signal?: AbortSignal): Promise<Output> {
  const request = manifest.request!;
  const plans = await Promise.all(
    manifest.inputs.map(async (input, i) => {
      const model: ManifestModel | undefined = manifest.models[i];
      if (!model || model.entity !== input.entity || model.axis !== input.axis) throw new Error(`manifest ${manifest.queryId}: models do not match inputs at ${input.entity}/${input.axis}`);
      const { entity, axis, series } = await readInput(deps, accountId, input, revision);
      const info = withBounds({ period: model.seasonLength, periods: [...model.seasonalPeriods], kind: input.kind as AxisKind }, input);
      return { entity, axis, series, info, model: model.spec, seed: model.seed };
    }),
  );
  const spec = { horizon: request.horizon, thresholds: request.thresholds.length > 0 ? request.thresholds : undefined, levels: request.quantiles };
  const outcomes = await forecastAxes(deps.pool, plans, spec, { fresh: true, owner: accountId, signal });
  return { forecast: assembleForecast(outcomes, spec, plans[0].entity.frequency), descendants: [], reconciliation: '' };
}

/** Grid steps of a recorded input, first to last observation (0: none read). */
function inputSteps(input: ManifestInput): number {
  if (!isFrequency(input.frequency) || !input.firstTime || !input.lastTime) return 0;
  const first = indexOf(input.frequency, Date.parse(input.firstTime));
  const last = indexOf(input.frequency, Date.parse(input.lastTime));
  return first === undefined || last === undefined ? 0 : last - first + 1;
}

/**
 * The output of a depth ≥ 1 query again: the depth query in replay mode, on the same hierarchy;
 * undefined when the entity contains nothing (answered as at depth 0, so replayed so too).
 */
async function replayDepth(deps: ForensicsDeps, accountId: string, manifest: Manifest, original: RecordedOutput, revision: number, signal?: AbortSignal): Promise<Output | undefined> {
  const request = manifest.request!;
  for (const input of manifest.inputs) await readInput(deps, accountId, input, revision);
  const root = await deps.entities.get(accountId, request.entity);
  if (!root) throw gone(request.entity, request.axes[0] ?? '', 'entity', `entity ${request.entity}, the queried entity, has been deleted`);
  const specs = new Map(manifest.models.map((m) => [`${m.entity}\u0000${m.axis}`, m]));
  const result = await deps.depthQueries.run({
    accountId,
    root,
    depth: request.depth,
    axes: request.axes,
    horizon: request.horizon,
    thresholds: request.thresholds.length > 0 ? request.thresholds : undefined,
    levels: request.quantiles,
    method: request.reconciliation as ReconcileMethod,
    asOf: revision,
    replay: {
      specOf: (entity, axis) => specs.get(`${entity}\u0000${axis}`)?.spec,
      boundsOf: (entity, axis) => {
        const m = specs.get(`${entity}\u0000${axis}`);
        return m ? boundsOf(m) : undefined;
      },
      seasonsOf: (entity, axis) => {
        const m = specs.get(`${entity}\u0000${axis}`);
        return m ? { period: m.seasonLength, periods: [...m.seasonalPeriods] } : undefined;
      },
      steps: manifest.inputs.reduce((n, input) => n + inputSteps(input), 0),
    },
    signal,
  });
  if (!result) return undefined;
  // Relations are not versioned: the replay must have read exactly the series and nodes the
  // query did. Inputs are compared first: a series read or no longer read names the relation
  // that changed, where a node's changed sum would only be its consequence.
  const now = depthManifestEntries(result, root.frequency);
  const key = (e: { entity: string; axis: string; seriesDigest: string }) => `${e.entity} axis ${e.axis} (${e.seriesDigest.slice(0, 12)})`;
  for (const [then, again] of [
    [manifest.inputs.map(key), now.inputs.map(key)],
    [manifest.models.map(key), now.models.map(key)],
    // entities without data are not read as series: the warnings that left them out name them
    [leftOutEntities(original.forecast?.warnings ?? []), leftOutEntities(result.forecast.warnings)],
  ]) {
    const missing = then.find((k) => !again.includes(k));
    const extra = again.find((k) => !then.includes(k));
    if (missing === undefined && extra === undefined) continue;
    const [entity, rest] = (missing ?? extra)!.split(' axis ');
    throw gone(entity, rest.split(' (')[0], 'hierarchy', `the hierarchy under ${request.entity} is no longer the one the query read: ${missing ? `${missing} is no longer part of it` : `${extra} is part of it now`} (contains relations changed)`);
  }
  const descendants: Descendant[] = result.descendants.map((d) => ({ entity: d.entity, level: d.level, forecast: d.forecast }));
  return { forecast: result.forecast, descendants, reconciliation: result.method };
}

/** The recorded output as stored (JSON), as far as a replay reads it. */
interface RecordedOutput {
  readonly reconciliation?: string;
  readonly forecast?: { readonly warnings?: readonly string[] };
}

/** A query's output: what the digest covers. */
interface Output {
  readonly forecast: Forecast;
  readonly descendants: Descendant[];
  readonly reconciliation: string;
}

/** Reproduce one of the account's queries (404 if it has no manifest for the account); its fits are given up once `signal` aborts. */
export async function reproduce(deps: ForensicsDeps, accountId: string, queryId: string, signal?: AbortSignal): Promise<ReproduceResponse> {
  const stored = await deps.manifests.get(accountId, queryId);
  if (!stored) throw new NotFoundError('query', queryId);
  const manifest = deps.canonical.parseManifest(stored.json);
  const revision = Number(manifest.dataRevision);
  const request = manifest.request!;
  const original = JSON.parse(stored.output) as RecordedOutput;
  let output = request.depth > 0 ? await replayDepth(deps, accountId, manifest, original, revision, signal) : undefined;
  if (!output) {
    // answered by reconciliation, but the entity contains nothing now
    if (request.depth > 0 && original.reconciliation) {
      throw gone(request.entity, request.axes[0] ?? '', 'hierarchy', `the hierarchy under ${request.entity} is no longer the one the query read: it contains nothing now (contains relations changed)`);
    }
    output = await replayDepth0(deps, accountId, manifest, revision, signal);
  }
  const reproducedJson = deps.canonical.output(output);
  const digest = sha256Hex(jcs(reproducedJson));
  const diffs = differences(JSON.parse(stored.output), reproducedJson as never);
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
    forecast: output.forecast,
    dataRevision: manifest.dataRevision,
    recordedEngineVersion: recorded.version,
    engineVersion: deps.engine.version,
    engineVersionChanged,
    notes,
    descendants: output.descendants,
    reconciliation: output.reconciliation,
  };
}
