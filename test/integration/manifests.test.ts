/**
 * Audit manifests over both protocols (API.md section 7): every query's manifest signs its
 * answer; the inline manifest, the JSON export and the DSSE envelope verify with nothing but the
 * published JWKS and an independent verifier (test/helpers/independent-verifier.ts, no project
 * code); any single changed leaf breaks the signature; listing paginates and filters; tenancy,
 * scopes and bad input answer as the contract says.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { Manifest } from '../../gen/forecast/v1/manifest.pb';
import { ManifestServiceClient } from '../../gen/forecast/v1/manifest_service.pb';
import { QueryResponse } from '../../gen/forecast/v1/oracle_service.pb';
import { ManualClock } from '../../src/clock';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { canonicalDigest, leaves, verifyEnvelope, verifyManifest, withChangedLeaf } from '../helpers/independent-verifier';
import { dailyEntity, dayTime, oracleQuery, weekly, type OracleQueryBody } from '../helpers/oracle-data';
import { protoJson } from '../helpers/proto-json';
import { startTestService, type TestService } from '../helpers/service';

const clock = new ManualClock(Date.UTC(2026, 0, 15, 12));
let t: TestService;
let manifests: ManifestServiceClient;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestService({ clock });
  manifests = t.client(ManifestServiceClient);
  ({ key, accountId } = await t.account('enterprise'));
  await dailyEntity(t, key, 'store:berlin', weekly);
  // a 1-minute entity: five hours of a wiggle before the clock's time
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities', body: { entity: 'server:m1', frequency: 'PT1M', axes: [{ name: 'rps' }] } })).code, 'ok');
  const from = Date.UTC(2026, 0, 15, 6);
  const observations = Array.from({ length: 300 }, (_, i) => ({ axis: 'rps', time: new Date(from + i * 60_000).toISOString(), value: 100 + ((i * 37) % 11) }));
  assert.equal((await rest(t, key, { method: 'POST', path: '/v1/entities/server:m1/observations', body: { observations } })).code, 'ok');
});
afterAll(() => t.close());

type Protocol = 'rest' | 'grpc';
function query(protocol: 'rest' | 'grpc', body: OracleQueryBody, k = key): Promise<Outcome> {
  return oracleQuery(t, k, protocol, body);
}

/** The manifest of a query answer as JSON (gRPC: printed by a stock proto3 JSON printer). */
function manifestJson(o: Outcome): any {
  return o.protocol === 'rest' ? o.data.manifest : protoJson('forecast.v1.Manifest', Manifest, o.data.manifest);
}

/** The answer's output (what `output_digest` covers): its forecast, descendants and reconciliation, as JSON. */
function outputJson(o: Outcome): any {
  const json = o.protocol === 'rest' ? o.data : protoJson('forecast.v1.QueryResponse', QueryResponse, o.data);
  return { forecast: json.forecast, descendants: json.descendants, reconciliation: json.reconciliation };
}

function queryIdOf(o: Outcome): string {
  return o.protocol === 'rest' ? o.data.query_id : o.data.queryId;
}

/** The published JWKS, fetched without a key. */
async function jwks(): Promise<any> {
  const res = await fetch(`${t.baseUrl}/v1/manifests/keys`);
  assert.equal(res.status, 200);
  return res.json();
}

/** GetManifest: the outcome and the exported bytes as text. */
async function exportOf(protocol: Protocol, queryId: string, format = '', k = key): Promise<{ o: Outcome; text: string; contentType: string }> {
  if (protocol === 'rest') {
    const path = `/v1/manifests/${queryId}${format ? `?format=${format}` : ''}`;
    const o = await rest(t, k, { method: 'GET', path });
    const res = await fetch(t.baseUrl + path, { headers: { authorization: `Bearer ${k}` } });
    return { o, text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
  }
  const o = await grpcCall(manifests, manifests.getManifest, k, { queryId, format });
  return { o, text: o.data ? Buffer.from(o.data.body.data).toString('utf8') : '', contentType: o.data?.body.contentType ?? '' };
}

for (const protocol of ['rest', 'grpc'] as const) {
  describe(`manifests over ${protocol}`, () => {
    test('include_manifest: the manifest describes and signs the answer, and verifies with the published keys alone', async () => {
      const o = await query(protocol, { entity: 'store:berlin', horizon: 3, include_manifest: true });
      assert.equal(o.code, 'ok', o.message);
      const m = manifestJson(o);
      const keys = await jwks();
      assert.ok(verifyManifest(m, keys), 'the signature verifies');
      assert.equal(m.manifest_version, 1);
      assert.equal(m.query_id, queryIdOf(o));
      // whose query it was, under the signature (found by QA: another account could get a signed manifest for an entity of the same name)
      assert.equal(m.account_id, accountId);
      assert.ok(!verifyManifest({ ...m, account_id: 'acct_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, keys), 'the account is signed');
      assert.equal(m.created_at, '2026-01-15T12:00:00Z');
      assert.deepEqual(m.request, { entity: 'store:berlin', depth: 0, axes: ['demand'], horizon: 3, thresholds: [], quantiles: [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95], include_manifest: true, reconciliation: '' });
      assert.equal(m.data_revision, o.protocol === 'rest' ? o.data.data_as_of : o.data.dataAsOf);
      assert.equal(m.inputs.length, 1);
      assert.deepEqual({ ...m.inputs[0], series_digest: undefined }, { entity: 'store:berlin', axis: 'demand', kind: 'continuous', frequency: 'P1D', observations: 120, first_time: dayTime(0), last_time: dayTime(119), series_digest: undefined });
      assert.match(m.inputs[0].series_digest, /^[0-9a-f]{64}$/);
      assert.equal(m.models.length, 1);
      assert.equal(m.models[0].model, outputJson(o).forecast.model);
      assert.ok(m.models[0].spec.length > 0);
      assert.equal(typeof m.models[0].params, 'object');
      assert.ok(Number.isInteger(m.models[0].seed));
      assert.deepEqual([m.models[0].season_length, m.models[0].seasonal_periods], [7, [7, 365]]);
      assert.equal(m.engine.name, 'forecast-engine');
      assert.equal(m.output_digest, canonicalDigest(outputJson(o)), 'output_digest = SHA-256 of the canonical output received');
      assert.deepEqual([m.models[0].series_digest, m.models[0].aggregated], [m.inputs[0].series_digest, false]);
      assert.ok(keys.keys.some((k: any) => k.kid === m.key_id));
      assert.match(m.signature, /^0x[0-9a-f]{128}$/);
      const plain = await query(protocol, { entity: 'store:berlin', horizon: 3 });
      assert.equal(plain.data.manifest, undefined, 'no manifest unless asked');
    });

    // engine 1.11.0: 1-minute entities are given their day besides their default hour (`seasonalInfo`)
    test('a 1-minute entity is forecast with the hour and the day, as its manifest records', async () => {
      const o = await query(protocol, { entity: 'server:m1', horizon: 30, include_manifest: true });
      assert.equal(o.code, 'ok', o.message);
      const m = manifestJson(o);
      assert.deepEqual([m.models[0].season_length, m.models[0].seasonal_periods], [60, [60, 1440]]);
      assert.ok(verifyManifest(m, await jwks()));
    });

    test('the export equals the inline manifest; the DSSE envelope verifies independently and names the query and output', async () => {
      const o = await query(protocol, { entity: 'store:berlin', horizon: 2, include_manifest: true });
      const inline = manifestJson(o);
      const exported = await exportOf(protocol, inline.query_id);
      assert.equal(exported.o.code, 'ok', exported.o.message);
      assert.equal(exported.contentType.split(';')[0], 'application/json');
      assert.deepEqual(JSON.parse(exported.text), inline);
      const other = await exportOf(protocol === 'rest' ? 'grpc' : 'rest', inline.query_id);
      assert.equal(other.text, exported.text, 'both protocols export the same bytes');
      const keys = await jwks();
      const dsse = await exportOf(protocol, inline.query_id, 'dsse');
      assert.equal(dsse.o.code, 'ok', dsse.o.message);
      const envelope = JSON.parse(dsse.text);
      assert.equal(envelope.payloadType, 'application/vnd.in-toto+json');
      const statement = verifyEnvelope(envelope, keys) as any;
      assert.ok(statement, 'the envelope signature verifies over the PAE');
      assert.equal(statement._type, 'https://in-toto.io/Statement/v1');
      assert.equal(statement.predicateType, 'urn:forecast-service:audit-manifest:v1');
      assert.deepEqual(statement.subject, [{ name: inline.query_id, digest: { sha256: inline.output_digest } }]);
      assert.deepEqual(statement.predicate, inline);
      assert.ok(verifyManifest(statement.predicate, keys));
      const tampered = { ...statement, predicate: { ...statement.predicate, data_revision: '999' } };
      assert.equal(verifyEnvelope({ ...envelope, payload: Buffer.from(JSON.stringify(tampered)).toString('base64') }, keys), undefined, 'a changed payload does not verify');
    });

    test('changing any single leaf of the manifest makes verification fail', async () => {
      const o = await query(protocol, { entity: 'store:berlin', horizon: 4, thresholds: [90, 120, 150], quantiles: [0.2, 0.8], include_manifest: true });
      const m = manifestJson(o);
      const keys = await jwks();
      assert.ok(verifyManifest(m, keys));
      const all = leaves(m);
      assert.ok(all.length > 30, `${all.length} leaves`);
      for (const [path] of all) assert.equal(verifyManifest(withChangedLeaf(m, path) as any, keys), false, `changing ${path.join('.')} must break the signature`);
    });

    test('another account’s or an unknown query is 404; a malformed id or format is 400; no audit scope is 403', async () => {
      const o = await query(protocol, { entity: 'store:berlin' });
      const id = queryIdOf(o);
      const stranger = (await t.account('enterprise')).key;
      assert.equal((await exportOf(protocol, id, '', stranger)).o.code, 'not_found');
      const unknown = `q_${'0'.repeat(26)}`;
      const missing = await exportOf(protocol, unknown);
      assert.equal(missing.o.code, 'not_found');
      assert.equal(missing.o.status, protocol === 'rest' ? 404 : 5);
      for (const bad of ['q_123', 'x_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'q_01ARZ3NDEKTSV4RRFFQ69G5FAU']) {
        const r = await exportOf(protocol, bad);
        assert.equal(r.o.code, 'invalid_argument', bad);
        assert.match(r.o.message, /query_id/);
      }
      const format = await exportOf(protocol, id, 'xml');
      assert.equal(format.o.code, 'invalid_argument');
      assert.match(format.o.message, /format/);
      const reader = (await t.service.ctx.accounts.createKey(accountId, ['forecast:read'], null)).apiKey;
      assert.equal((await exportOf(protocol, id, '', reader)).o.code, 'permission_denied');
      const list = protocol === 'rest' ? await rest(t, reader, { method: 'GET', path: '/v1/manifests' }) : await grpcCall(manifests, manifests.listManifests, reader, { entity: '', start: '', end: '', pageSize: 0, cursor: '' });
      assert.equal(list.code, 'permission_denied');
    });

    test('the JWKS needs no key: OKP Ed25519 keys with kid, alg and use', async () => {
      const o = protocol === 'rest' ? await rest(t, undefined, { method: 'GET', path: '/v1/manifests/keys' }) : await grpcCall(manifests, manifests.getSigningKeys, undefined, {});
      assert.equal(o.code, 'ok', o.message);
      assert.ok(o.data.keys.length >= 1);
      for (const k of o.data.keys) {
        assert.deepEqual(Object.keys(k).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
        assert.deepEqual([k.kty, k.crv, k.alg, k.use], ['OKP', 'Ed25519', 'Ed25519', 'sig']);
        assert.match(k.kid, /^sigkey_[0-9A-Z]{26}$/);
        assert.equal(Buffer.from(k.x, 'base64url').length, 32);
      }
      assert.equal(o.headers['cache-control'], 'public, max-age=300');
    });
  });
}

describe('listing manifests', () => {
  let lister: string;
  const ids: { id: string; entity: string; time: number }[] = [];

  beforeAll(async () => {
    ({ key: lister } = await t.account('enterprise'));
    await dailyEntity(t, lister, 'store:a', weekly);
    await dailyEntity(t, lister, 'store:b', (i) => weekly(i) * 2);
    for (let i = 0; i < 8; i++) {
      clock.advance(60_000);
      const entity = i % 3 === 2 ? 'store:b' : 'store:a';
      const o = await query(i % 2 ? 'grpc' : 'rest', { entity, horizon: 1 + i }, lister);
      assert.equal(o.code, 'ok', o.message);
      ids.push({ id: queryIdOf(o), entity, time: clock.now() });
    }
  });

  async function list(protocol: Protocol, params: Record<string, string | number>): Promise<Outcome> {
    if (protocol === 'rest') return rest(t, lister, { method: 'GET', path: `/v1/manifests?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}` });
    const p = { entity: '', start: '', end: '', pageSize: 0, cursor: '', ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k === 'page_size' ? 'pageSize' : k, v])) };
    return grpcCall(manifests, manifests.listManifests, lister, p);
  }

  /** Walk every page; the manifests as JSON (gRPC ones printed by a stock proto3 JSON printer). */
  async function walk(protocol: Protocol, params: Record<string, string | number>): Promise<any[]> {
    const out: any[] = [];
    let cursor = '';
    do {
      const o = await list(protocol, cursor ? { ...params, cursor } : params);
      assert.equal(o.code, 'ok', o.message);
      assert.ok(o.data.manifests.length <= Number(params.page_size ?? 50));
      out.push(...o.data.manifests.map((m: any) => (protocol === 'rest' ? m : protoJson('forecast.v1.Manifest', Manifest, m))));
      cursor = protocol === 'rest' ? o.data.next_cursor : o.data.nextCursor;
    } while (cursor);
    return out;
  }

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: newest first, paginated without duplicates; filtered by entity and time; every entry verifies`, async () => {
      const keys = await jwks();
      const all = await walk(protocol, { page_size: 3 });
      assert.deepEqual(all.map((m) => m.query_id), ids.map((q) => q.id).reverse());
      for (const m of all) assert.ok(verifyManifest(m, keys), `listed ${m.query_id} verifies`);
      const a = await walk(protocol, { entity: 'store:a', page_size: 2 });
      assert.deepEqual(a.map((m) => m.query_id), ids.filter((q) => q.entity === 'store:a').map((q) => q.id).reverse());
      const range = await walk(protocol, { start: new Date(ids[2].time).toISOString(), end: new Date(ids[5].time).toISOString() });
      assert.deepEqual(range.map((m) => m.query_id), [ids[4].id, ids[3].id, ids[2].id], 'start inclusive, end exclusive');
      const b = await walk(protocol, { entity: 'store:b', start: new Date(ids[3].time).toISOString() });
      assert.deepEqual(b.map((m) => m.query_id), [ids[5].id]);
    });

    test(`${protocol}: bad filters, page sizes and cursors are 400`, async () => {
      const first = await list(protocol, { entity: 'store:a', page_size: 1 });
      const cursor = protocol === 'rest' ? first.data.next_cursor : first.data.nextCursor;
      assert.ok(cursor);
      const cases: [Record<string, string | number>, string, string][] = [
        [{ entity: 'store:b', page_size: 1, cursor }, 'invalid_cursor', 'cursor'],
        [{ page_size: -1 }, 'invalid_argument', 'page_size'],
        [{ start: 'yesterday' }, 'invalid_argument', 'start'],
        [{ end: '2026-02-30T00:00:00Z' }, 'invalid_argument', 'end'],
        [{ entity: 'berlin' }, 'invalid_argument', 'entity'],
      ];
      for (const [params, code, mentions] of cases) {
        const o = await list(protocol, params);
        assert.equal(o.code, code, JSON.stringify(params));
        assert.match(o.message, new RegExp(mentions));
      }
    });
  }

  test('another account sees none of them', async () => {
    const o = await rest(t, key, { method: 'GET', path: '/v1/manifests?entity=store:a' });
    assert.equal(o.code, 'ok');
    assert.deepEqual(o.data.manifests, []);
  });
});

test('a query recorded before manifests existed has none: 404', async () => {
  const queryId = 'q_01HZZZZZZZZZZZZZZZZZZZZZZZ';
  await t.service.ctx.database.db
    .insertInto('queries')
    .values({ query_id: queryId, account_id: accountId, entity: 'store:berlin', create_time: 1, data_revision: 1, key_id: 'key_x', request: '{}', record: '{}', output: '{}', output_digest: '', manifest: null })
    .execute();
  assert.equal((await exportOf('rest', queryId)).o.code, 'not_found');
  const listed = await rest(t, key, { method: 'GET', path: '/v1/manifests' });
  assert.ok(!listed.data.manifests.some((m: any) => m.query_id === queryId));
});

test('a page of manifests stops before 3 MiB of them (a default gRPC client takes 4 MiB), whatever page_size asks; the walk misses none', async () => {
  // five stored manifests of 1 MiB each (a real one, padded with whitespace its parser ignores)
  const { key: big } = await t.account('enterprise');
  await dailyEntity(t, big, 'store:wide', weekly);
  const o = await query('rest', { entity: 'store:wide', horizon: 2 }, big);
  assert.equal(o.code, 'ok', o.message);
  const db = t.service.ctx.database.db;
  const real = await db.selectFrom('queries').selectAll().where('query_id', '=', queryIdOf(o)).executeTakeFirstOrThrow();
  const padded = real.manifest! + ' '.repeat(1024 * 1024);
  for (let i = 0; i < 5; i++) {
    await db
      .insertInto('queries')
      .values({ ...real, query_id: `q_01HZZZZZZZZZZZZZZZZZZZZZZ${i}`, create_time: Number(real.create_time) - 1000 * (i + 1), manifest: padded })
      .execute();
  }
  for (const protocol of ['rest', 'grpc'] as const) {
    const pages: number[] = [];
    let cursor = '';
    do {
      const params = { entity: 'store:wide', page_size: 50, ...(cursor ? { cursor } : {}) };
      const r =
        protocol === 'rest'
          ? await rest(t, big, { method: 'GET', path: `/v1/manifests?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}` })
          : await grpcCall(manifests, manifests.listManifests, big, { entity: 'store:wide', start: '', end: '', pageSize: 50, cursor });
      assert.equal(r.code, 'ok', r.message);
      pages.push(r.data.manifests.length);
      cursor = protocol === 'rest' ? r.data.next_cursor : r.data.nextCursor;
    } while (cursor);
    // the real one (small) and two padded ones fit 3 MiB; then two, then the last
    assert.deepEqual(pages, [3, 2, 1], protocol);
  }
});
