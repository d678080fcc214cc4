/**
 * Manifests and forensics of hierarchical queries (`depth` ≥ 1) over both protocols: the
 * manifest lists every series read and every node model (aggregated nodes marked), its signature
 * verifies independently and its output digest covers the forecast, the descendants and the
 * method; the query is reproduced bit for bit after corrections and new data; a changed hierarchy
 * is named as failed_precondition, and so is a deleted entity the query read; ListManifests and
 * GetManifest (JSON and DSSE) serve depth queries' manifests as they were signed.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { ForensicsServiceClient } from '../../gen/forecast/v1/forensics_service.pb';
import { Manifest } from '../../gen/forecast/v1/manifest.pb';
import { ManifestServiceClient } from '../../gen/forecast/v1/manifest_service.pb';
import { QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { canonicalDigest, verifyEnvelope, verifyManifest } from '../helpers/independent-verifier';
import { dailyEntity, dayTime, oracleQuery, weekly } from '../helpers/oracle-data';
import { protoJson } from '../helpers/proto-json';
import { startTestService, type TestService } from '../helpers/service';

let t: TestService;
let key: string;
let forensics: ForensicsServiceClient;
let manifests: ManifestServiceClient;

/** store:s contains sku:x and sku:y; only the SKUs have data. */
beforeAll(async () => {
  t = await startTestService();
  forensics = t.client(ForensicsServiceClient);
  manifests = t.client(ManifestServiceClient);
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
  const o = await oracleQuery(t, key, protocol, { entity: 'store:s', depth: 1, horizon: 3, include_manifest: true, reconciliation: 'wls_struct' });
  const json = protocol === 'rest' ? o.data : o.code === 'ok' ? protoJson('forecast.v1.QueryResponse', QueryResponse, o.data) : undefined;
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
    const fits = t.service.ctx.pool.stats.fits;
    const o = await reproduce(protocol, q.id);
    assert.equal(o.code, 'ok', o.message);
    assert.equal(t.service.ctx.pool.stats.fits, fits + q.manifest.models.length, 'every node model fitted again, none taken from a cache');
    const a = protocol === 'rest' ? o.data : { ...o.data, reproduced_output_digest: o.data.reproducedOutputDigest };
    assert.equal(a.reproduced, true);
    assert.equal(a.reproduced_output_digest, q.manifest.output_digest);
    assert.deepEqual(a.differences, []);
    const replayed = protocol === 'rest' ? { forecast: o.data.forecast, descendants: o.data.descendants, reconciliation: o.data.reconciliation } : (({ forecast, descendants, reconciliation }) => ({ forecast, descendants, reconciliation }))(protoJson('forecast.v1.QueryResponse', QueryResponse, { queryId: '', dataAsOf: '0', entity: '', depth: 0, forecast: o.data.forecast, descendants: o.data.descendants, reconciliation: o.data.reconciliation, manifest: undefined }));
    assert.deepEqual(replayed, q.output);
  });
}

test('a depth-2 query with the default method (mint_shrink), a root with data of its own and a node without, reproduces bit for bit on both protocols', async () => {
  // hq:h (own data, agreeing with its leaves' sum, so they are used) contains shop:1 (none) and sku:r; shop:1 contains sku:p and sku:q
  await dailyEntity(t, key, 'hq:h', (i) => weekly(i) + 3 + 1.5 * weekly(i) + weekly(i) + (i % 3));
  for (const [name, f] of [['sku:p', (i: number) => weekly(i) + 3], ['sku:q', (i: number) => 1.5 * weekly(i)], ['sku:r', (i: number) => weekly(i) + (i % 3)]] as const) await dailyEntity(t, key, name, f);
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'shop:1', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
  for (const [parent, child] of [['hq:h', 'shop:1'], ['hq:h', 'sku:r'], ['shop:1', 'sku:p'], ['shop:1', 'sku:q']]) {
    assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent, child } })).code, 'ok');
  }
  const o = await rest(t, key, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'hq:h', depth: 2, horizon: 4, include_manifest: true, quantiles: [0.2, 0.8] } });
  assert.equal(o.code, 'ok', o.message);
  const m = o.data.manifest;
  assert.equal(m.request.reconciliation, 'mint_shrink');
  assert.deepEqual(m.models.map((x: any) => [x.entity, x.aggregated]).sort(), [['hq:h', false], ['shop:1', true], ['sku:p', false], ['sku:q', false], ['sku:r', false]]);
  assert.deepEqual(m.inputs.map((x: any) => x.entity).sort(), ['hq:h', 'sku:p', 'sku:q', 'sku:r']);
  assert.equal(canonicalDigest({ forecast: o.data.forecast, descendants: o.data.descendants, reconciliation: o.data.reconciliation }), m.output_digest);
  for (const protocol of ['rest', 'grpc'] as const) {
    const r = await reproduce(protocol, o.data.query_id);
    assert.equal(r.code, 'ok', r.message);
    assert.equal(r.data.reproduced, true);
    assert.deepEqual(r.data.differences, []);
    assert.equal(r.data.reconciliation, o.data.reconciliation);
  }
});

/** ListManifests filtered by entity (every page), the manifests as JSON. */
async function listed(protocol: 'rest' | 'grpc', entity: string): Promise<any[]> {
  const out: any[] = [];
  let cursor = '';
  do {
    const o =
      protocol === 'rest'
        ? await rest(t, key, { method: 'GET', path: `/v1/manifests?${new URLSearchParams({ entity, page_size: '2', ...(cursor ? { cursor } : {}) })}` })
        : await grpcCall(manifests, manifests.listManifests, key, { entity, start: '', end: '', pageSize: 2, cursor });
    assert.equal(o.code, 'ok', o.message);
    out.push(...o.data.manifests.map((m: any) => (protocol === 'rest' ? m : protoJson('forecast.v1.Manifest', Manifest, m))));
    cursor = protocol === 'rest' ? o.data.next_cursor : o.data.nextCursor;
  } while (cursor);
  return out;
}

/** GetManifest's exported bytes, parsed. */
async function exported(protocol: 'rest' | 'grpc', queryId: string, format: 'json' | 'dsse'): Promise<any> {
  if (protocol === 'rest') {
    const o = await rest(t, key, { method: 'GET', path: `/v1/manifests/${queryId}?format=${format}` });
    assert.equal(o.code, 'ok', o.message);
    return o.data;
  }
  const o = await grpcCall(manifests, manifests.getManifest, key, { queryId, format });
  assert.equal(o.code, 'ok', o.message);
  return JSON.parse(Buffer.from(o.data.body.data).toString('utf8'));
}

for (const protocol of ['rest', 'grpc'] as const) {
  test(`${protocol}: ListManifests and GetManifest (JSON and DSSE) serve a depth query's manifest as signed; its data revision is the account's`, async () => {
    const before = await depthQuery(protocol);
    // another account's ingest leaves this account's data revision, the manifest's, unchanged
    const other = await t.account('enterprise');
    await dailyEntity(t, other.key, 'sku:x', weekly, 10);
    const q = await depthQuery(protocol);
    assert.equal(q.manifest.data_revision, before.manifest.data_revision, 'data revisions are per account');
    const keys = (await (await fetch(`${t.baseUrl}/v1/manifests/keys`)).json()) as { keys: any[] };
    const mine = (await listed(protocol, 'store:s')).filter((m) => m.query_id === q.id);
    assert.deepEqual(mine, [q.manifest], 'listed once, equal to the inline manifest');
    assert.deepEqual(await listed(protocol, 'sku:x').then((ms) => ms.filter((m) => m.query_id === q.id)), [], 'listed under the queried entity, not its descendants');
    assert.deepEqual(await exported(protocol, q.id, 'json'), q.manifest);
    const envelope = await exported(protocol, q.id, 'dsse');
    const statement = verifyEnvelope(envelope, keys) as any;
    assert.ok(statement, 'the envelope verifies independently');
    assert.deepEqual(statement.predicate, q.manifest);
    assert.deepEqual(statement.subject, [{ name: q.id, digest: { sha256: q.manifest.output_digest } }]);
  });
}

test('an entity without data added to or taken from the hierarchy is failed_precondition naming it (found by QA: reproduced false)', async () => {
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:empty', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
  const before = await depthQuery('rest');
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:s', child: 'sku:empty' } })).code, 'ok');
  const withEmpty = await depthQuery('grpc');
  assert.ok(withEmpty.output.forecast.warnings.some((w: string) => w.includes('sku:empty has no observations')), 'the query left it out, saying so');
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await reproduce(protocol, before.id);
    assert.equal(o.code, 'failed_precondition', o.message);
    assert.equal(o.status, protocol === 'rest' ? 400 : 9);
    assert.match(o.message, /hierarchy under store:s is no longer the one the query read: sku:empty axis demand \(no observations\) is part of it now/);
    const same = await reproduce(protocol, withEmpty.id);
    assert.equal(same.code, 'ok', same.message);
    assert.equal(same.data.reproduced, true);
  }
  assert.equal((await rest(t, key, { method: 'DELETE', path: '/v1/relations/contains/store:s/sku:empty' })).code, 'ok');
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await reproduce(protocol, withEmpty.id);
    assert.equal(o.code, 'failed_precondition', o.message);
    assert.match(o.message, /sku:empty axis demand \(no observations\) is no longer part of it/);
    assert.equal((await reproduce(protocol, before.id)).data.reproduced, true);
  }
});

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

test('a deleted entity the depth query read is failed_precondition naming it, on both protocols', async () => {
  // store:s now contains sku:x, sku:y and sku:z: a query of that hierarchy, then sku:y deleted
  const q = await depthQuery('grpc');
  assert.equal((await rest(t, key, { method: 'DELETE', path: '/v1/entities/sku:y' })).code, 'ok');
  for (const protocol of ['rest', 'grpc'] as const) {
    const o = await reproduce(protocol, q.id);
    assert.equal(o.code, 'failed_precondition');
    assert.equal(o.status, protocol === 'rest' ? 400 : 9);
    assert.match(o.message, /^entity sku:y, read by this query, has been deleted/);
  }
});

test("a node's new season_length: the next depth query fits with it (not the cached answer), and both queries reproduce with their own seasons (found by QA: the old answer came back, and every earlier depth query failed to reproduce)", async () => {
  await dailyEntity(t, key, 'sku:sa', (i) => weekly(i) + 3 * Math.sin(i / 2));
  await dailyEntity(t, key, 'sku:sb', (i) => weekly(i + 2) + (i % 4));
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'store:seasons', frequency: 'P1D', axes: [{ name: 'demand' }] } })).code, 'ok');
  for (const child of ['sku:sa', 'sku:sb']) assert.equal((await rest(t, key, { method: 'POST', path: '/v1/relations', body: { parent: 'store:seasons', child } })).code, 'ok');
  const query = async () => {
    const o = await oracleQuery(t, key, 'rest', { entity: 'store:seasons', depth: 1, horizon: 3, include_manifest: true });
    assert.equal(o.code, 'ok', o.message);
    return o.data;
  };
  const seasonOf = (q: any) => q.manifest.models.find((m: any) => m.entity === 'sku:sa').season_length;
  const before = await query();
  assert.equal(seasonOf(before), 7);
  const changed = await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'sku:sa', frequency: 'P1D', season_length: 14, axes: [{ name: 'demand' }] } });
  assert.equal(changed.code, 'ok', changed.message);
  const after = await query();
  assert.equal(seasonOf(after), 14);
  assert.notDeepEqual(after.forecast, before.forecast);
  for (const q of [before, after]) {
    for (const protocol of ['rest', 'grpc'] as const) {
      const o = await reproduce(protocol, q.query_id);
      assert.equal(o.code, 'ok', o.message);
      assert.deepEqual([o.data.reproduced, o.data.differences], [true, []]);
    }
  }
});
