/**
 * The manifest of a query, from what the query computed (the `Manifest` proto documents every
 * field). Unsigned here: `ManifestSigner` adds `key_id` and `signature`.
 */
import type { Manifest, ManifestRequest } from '../../gen/forecast/v1/manifest.pb';
import { formatTime } from '../clock';
import type { Params } from '../engine/types';
import type { AxisOutcome } from '../oracle/axis-forecast';

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
  readonly createTime: number;
  readonly request: ManifestRequest;
  readonly dataRevision: number;
  /** Every series read, the queried entity's first (in request order), then descendants'. */
  readonly outcomes: readonly AxisOutcome[];
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

/** The unsigned manifest of a query. */
export function buildManifest(facts: QueryFacts): Manifest {
  return {
    manifestVersion: MANIFEST_VERSION,
    queryId: facts.queryId,
    createdAt: formatTime(facts.createTime),
    request: facts.request,
    dataRevision: String(facts.dataRevision),
    inputs: facts.outcomes.map((o) => ({
      entity: o.entity.entity,
      axis: o.axis.name,
      kind: o.axis.kind,
      frequency: o.entity.frequency,
      observations: o.series.nobs,
      firstTime: o.series.firstTime === undefined ? '' : formatTime(o.series.firstTime),
      lastTime: o.series.lastTime === undefined ? '' : formatTime(o.series.lastTime),
      seriesDigest: o.series.digest,
    })),
    engine: { name: facts.engine.name, version: facts.engine.version, runtime: facts.engine.runtime },
    models: facts.outcomes.map((o) => ({
      entity: o.entity.entity,
      axis: o.axis.name,
      model: o.result.model,
      spec: o.result.requestedModel,
      params: paramsJson(o.result.params) as { [key: string]: JsonParam },
      seed: o.seed,
      intervalMethod: o.result.intervalMethod,
      seasonLength: o.info.period,
      seasonalPeriods: [...(o.info.periods ?? [])],
      warnings: [...o.result.warnings],
    })),
    outputDigest: facts.outputDigest,
    keyId: '',
    signature: '',
  };
}
