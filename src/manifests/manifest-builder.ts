/**
 * The manifest of a query, from what the query computed (the `Manifest` proto documents every
 * field). Unsigned here: `ManifestSigner` adds `key_id` and `signature`. The inputs and models
 * are lists keyed by (entity, axis), so a depth-0 query (one entry per axis) and a depth ≥ 1
 * query (every series of the hierarchy, every node model) are described the same way.
 */
import type { Manifest, ManifestInput, ManifestModel, ManifestRequest } from '../../gen/forecast/v1/manifest.pb';
import { formatTime } from '../clock';
import type { Params, SeriesInfo } from '../engine/types';
import type { ForecastJobResult } from '../oracle/forecast-job';
import type { SeriesRead } from '../oracle/series-loader';
import type { AxisRecord } from '../entities/entity-store';

/** Version of the manifest format written now. */
export const MANIFEST_VERSION = 1;

/** The engine's identity as recorded. */
export interface EngineIdentity {
  readonly name: string;
  readonly version: string;
  readonly runtime: string;
}

/** What a query knows when it is answered. */
export interface QueryFacts {
  readonly queryId: string;
  /** The account that asked. */
  readonly accountId: string;
  readonly createTime: number;
  readonly request: ManifestRequest;
  readonly dataRevision: number;
  readonly inputs: readonly ManifestInput[];
  readonly models: readonly ManifestModel[];
  readonly engine: EngineIdentity;
  readonly outputDigest: string;
}

type JsonParam = null | boolean | number | string | JsonParam[] | { [key: string]: JsonParam };

/**
 * Fitted parameters as JSON a `google.protobuf.Struct` holds: numbers that are not finite
 * become the strings `NaN`, `Infinity`, `-Infinity` (why: Struct and RFC 8785 admit only finite
 * numbers, and dropping them would hide them from the audit), -0 becomes 0, `undefined` members
 * are left out.
 */
export function paramsJson(value: Params[string] | Params | undefined): JsonParam {
  if (value === null || value === undefined) return null;
  // -0 as 0: the same in JSON text, but not in every library's JSON printer
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : String(value);
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return Array.from(value as ArrayLike<number>, (v) => paramsJson(v) as JsonParam);
  const out: { [key: string]: JsonParam } = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = paramsJson(v);
  return out;
}

/** The manifest entry of a series read: `frequency` is its entity's. */
export function manifestInput(entity: string, axis: Pick<AxisRecord, 'name' | 'kind' | 'lowerBound' | 'upperBound'>, frequency: string, series: SeriesRead): ManifestInput {
  return {
    entity,
    axis: axis.name,
    kind: axis.kind,
    lowerBound: axis.lowerBound,
    upperBound: axis.upperBound,
    frequency,
    observations: series.nobs,
    firstTime: series.firstTime === undefined ? '' : formatTime(series.firstTime),
    lastTime: series.lastTime === undefined ? '' : formatTime(series.lastTime),
    seriesDigest: series.digest,
  };
}

/** The manifest entry of a model fitted to the series with digest `seriesDigest` (`aggregated`: a sum of leaves). */
export function manifestModel(
  entity: string,
  axis: string,
  result: ForecastJobResult,
  seed: number,
  info: SeriesInfo,
  seriesDigest: string,
  aggregated = false,
  /** The bounds the node's answer was censored to (default: those the model was fitted with). */
  bounds = info.bounds,
): ManifestModel {
  return {
    entity,
    axis,
    model: result.model,
    spec: result.requestedModel,
    params: paramsJson(result.params) as { [key: string]: JsonParam },
    seed,
    intervalMethod: result.intervalMethod,
    seasonLength: info.period,
    seasonalPeriods: [...(info.periods ?? [])],
    warnings: [...result.warnings],
    seriesDigest,
    aggregated,
    lowerBound: bounds?.lower,
    upperBound: bounds?.upper,
  };
}

/** The unsigned manifest of a query. */
export function buildManifest(facts: QueryFacts): Manifest {
  return {
    manifestVersion: MANIFEST_VERSION,
    queryId: facts.queryId,
    createdAt: formatTime(facts.createTime),
    request: facts.request,
    dataRevision: String(facts.dataRevision),
    inputs: [...facts.inputs],
    engine: { name: facts.engine.name, version: facts.engine.version, runtime: facts.engine.runtime },
    models: [...facts.models],
    outputDigest: facts.outputDigest,
    keyId: '',
    signature: '',
    accountId: facts.accountId,
  };
}
