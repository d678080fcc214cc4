/**
 * Recording an answered oracle query: the canonical JSON of its output and that JSON's digest,
 * its manifest built and signed, both committed in the query's row before the answer is sent.
 * One path for every query, `depth` 0 (the oracle) and `depth` ≥ 1 (the graph's depth queries).
 */
import type { QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import type { QueryStore } from '../oracle/query-store';
import { jcs, sha256Hex, type CanonicalJson } from './canonical';
import { buildManifest, type EngineIdentity, type QueryFacts } from './manifest-builder';
import type { ManifestSigner } from './manifest-signer';

/** What recording needs. */
export interface QueryRecorderDeps {
  readonly queries: QueryStore;
  readonly canonical: CanonicalJson;
  readonly signer: ManifestSigner;
  /** The engine identity recorded (`ENGINE_INFO`). */
  readonly engine: EngineIdentity;
}

/** An answered query, as the manifest describes it (`request.include_manifest` decides whether the answer carries it). */
export interface AnsweredQuery extends Pick<QueryFacts, 'createTime' | 'request' | 'dataRevision' | 'inputs' | 'models'> {
  readonly accountId: string;
  /** The API key that asked. */
  readonly apiKeyId: string;
  /** The call's signal: past its deadline (or with its client gone) the query is not recorded, so a 504 means not done. */
  readonly signal: AbortSignal;
  /** The answer, with its query id, without a manifest. */
  readonly response: QueryResponse;
}

/** Sign and commit the query's manifest with its record; resolves the answer to send (with the manifest when asked). */
export async function recordQuery(deps: QueryRecorderDeps, q: AnsweredQuery): Promise<QueryResponse> {
  const { response } = q;
  const output = jcs(deps.canonical.output(response));
  const outputDigest = sha256Hex(output);
  const signed = await deps.signer.sign(
    buildManifest({ queryId: response.queryId, accountId: q.accountId, createTime: q.createTime, request: q.request, dataRevision: q.dataRevision, inputs: q.inputs, models: q.models, engine: deps.engine, outputDigest }),
  );
  q.signal.throwIfAborted();
  // The record and the signed manifest are one row: committed together, before the answer.
  await deps.queries.save({
    queryId: response.queryId,
    accountId: q.accountId,
    entity: response.entity,
    createTime: q.createTime,
    dataRevision: q.dataRevision,
    keyId: q.apiKeyId,
    output,
    outputDigest,
    manifest: signed.json,
  });
  return q.request.includeManifest ? { ...response, manifest: signed.manifest } : response;
}
