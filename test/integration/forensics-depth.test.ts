/**
 * Manifests and forensics of hierarchical queries (`depth` ≥ 1) over both protocols: the
 * manifest lists every series read and every node model (aggregated nodes marked), its signature
 * verifies independently and its output digest covers the forecast, the descendants and the
 * method; the query is reproduced bit for bit after corrections and new data; a changed hierarchy
 * is named as failed_precondition.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ForensicsServiceClient } from '../../gen/forecast/v1/forensics_service.pb';
import { OracleServiceClient, QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { canonicalDigest, verifyManifest } from '../helpers/independent-verifier';
import { dailyEntity, dayTime, weekly } from '../helpers/oracle-data';
import { protoJson } from '../helpers/proto-json';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;
let oracle: OracleServiceClient;
let forensics: ForensicsServiceClient;

/** store:s contains sku:x and sku:y; only the SKUs have data. */
beforeAll(async () => {
  t = await startTestService();
  oracle = t.client(OracleServiceClient);
  forensics = t.client(ForensicsServiceClient);
  ({ key } = await t.account('enterprise'));
  await dailyEntity(t, key, 'sku:x', weekly);
  await dailyEntity(t, key, 'sku:y', (i) => 2 * weekly(i) + (i % 5));
  await dailyEntity(t, key, 'sku:z', (i) => weekly(i) + 7);
  const store = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:s', frequency: 'P1D', axes: [{ name: 'demand' }] } });
  assert.equal(store.code, 'ok', store.message);
  for (const child of ['sku:x', 'sku:y']) assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:s', child } })).code, 'ok');
});
afterAll(() => t.close());

async function depthQuery(protocol: 'rest' | 'grpc'): Promise<{ id: string; manifest: any; output: any }> {
  let o: Outcome;
  let json: any;
  if (protocol === 'rest') {
    o = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:s', depth: 1, horizon: 3, include_manifest: true, reconciliation: 'wls_struct' } });
    json = o.data;
  } else {
    o = await grpcCall(oracle, oracle.query, key, { entity: 'store:s', depth: 1, includeManifest: true, axes: [], horizon: 3, thresholds: [], quantiles: [], reconciliation: 'wls_struct' });
    json = o.code === 'ok' ? protoJson('forecast.v1.QueryResponse', QueryResponse, o.data) : undefined;
  }
  assert.equal(o.code, 'ok', o.message);
  return { id: json.query_id, manifest: json.manifest, output: { forecast: json.forecast, descendants: json.descendants, reconciliation: json.reconciliation } };
}

async function reproduce(protocol: 'rest' | 'grpc', queryId: string): Promise<Outcome> {
  if (protocol === 'rest') return rest(t, key, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: queryId } });
  return grpcCall(forensics, forensics.reproduce, key, { queryId });
}

for (const protocol of ['rest', 'grpc'] as const) {
  test(`${protocol}: the manifest of a depth query lists every series and node model, signs the whole output, and is reproduced after later data`, async () => {
    const q = await depthQuery(protocol);
    const keys = (await (await fetch(`${t.baseUrl}/v1/manifests/keys`)).json()) as { keys: any[] };
    assert.ok(verifyManifest(q.manifest, keys));
    assert.equal(q.manifest.request.depth, 1);
    assert.equal(q.manifest.request.reconciliation, 'wls_struct');
    assert.deepEqual(q.manifest.inputs.map((i: any) => i.entity).sort(), ['sku:x', 'sku:y']);
    assert.deepEqual(q.manifest.models.map((m: any) => [m.entity, m.aggregated]), [['store:s', true], ['sku:x', false], ['sku:y', false]]);
    for (const m of q.manifest.models.filter((x: any) => !x.aggregated)) assert.equal(m.series_digest, q.manifest.inputs.find((i: any) => i.entity === m.entity).series_digest);
    assert.equal(q.output.descendants.length, 2);
    assert.equal(q.output.reconciliation, 'wls_struct');
    assert.equal(canonicalDigest(q.output), q.manifest.output_digest, 'the digest covers forecast, descendants and method');

    // a correction of data the query read, and new data after it
    const ing = await rest(t, key, { method: 'POST', path: '/v1/entities/sku:x/observations', body: { observations: [{ axis: 'demand', time: dayTime(10), value: 500 }, { axis: 'demand', time: dayTime(120), value: 90 }] } });
    assert.equal(ing.code, 'ok', ing.message);
    const o = await reproduce(protocol, q.id);
    assert.equal(o.code, 'ok', o.message);
    const a = protocol === 'rest' ? o.data : { ...o.data, reproduced_output_digest: o.data.reproducedOutputDigest };
    assert.equal(a.reproduced, true);
    assert.equal(a.reproduced_output_digest, q.manifest.output_digest);
    assert.deepEqual(a.differences, []);
    const replayed = protocol === 'rest' ? { forecast: o.data.forecast, descendants: o.data.descendants, reconciliation: o.data.reconciliation } : (({ forecast, descendants, reconciliation }) => ({ forecast, descendants, reconciliation }))(protoJson('forecast.v1.QueryResponse', QueryResponse, { queryId: '', dataAsOf: '0', entity: '', depth: 0, forecast: o.data.forecast, descendants: o.data.descendants, reconciliation: o.data.reconciliation, manifest: undefined }));
    assert.deepEqual(replayed, q.output);
  });
}

test('a changed hierarchy is failed_precondition naming it; relations are not versioned', async () => {
  const q = await depthQuery('rest');
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:s', child: 'sku:z' } })).code, 'ok');
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await reproduce(protocol, q.id);
    assert.equal(o.code, 'failed_precondition');
    assert.equal(o.status, protocol === 'rest' ? 400 : 9);
    assert.match(o.message, /hierarchy under store:s is no longer the one the query read: sku:z axis demand .* is part of it now/);
  }
});
