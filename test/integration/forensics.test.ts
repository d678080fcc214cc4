/**
 * Forensics over both protocols (API.md section 7): a recorded query is reproduced bit for bit
 * after corrections and new observations, after a restart, under a newer engine version (said so),
 * and after a signing-key rotation its manifest still verifies; data that is gone, tenancy,
 * scopes and bad ids answer as the contract says.
 */
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForensicsServiceClient } from '../../gen/forecast/v1/forensics_service.pb';
import { Forecast, OracleServiceClient } from '../../gen/forecast/v1/oracle_service.pb';
import { loadConfig } from '../../src/config';
import { ENGINE_INFO } from '../../src/oracle/engine-info';
import { startService } from '../../src/service';
import { grpcCall, rest, type Outcome } from '../helpers/dual';
import { canonicalDigest, verifyEnvelope, verifyManifest } from '../helpers/independent-verifier';
import { dailyEntity, dayTime, weekly } from '../helpers/oracle-data';
import { protoJson } from '../helpers/proto-json';
import { startTestService, type TestService } from '../helpers/service';

type Protocol = 'rest' | 'grpc';

let t: TestService;
let forensics: ForensicsServiceClient;
let oracle: OracleServiceClient;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestService();
  forensics = t.client(ForensicsServiceClient);
  oracle = t.client(OracleServiceClient);
  ({ key, accountId } = await t.account('enterprise'));
  await dailyEntity(t, key, 'store:kept', weekly);
  await dailyEntity(t, key, 'store:doomed', (i) => weekly(i) + 3);
});
afterAll(() => t.close());

async function queryRest(body: object, svc: { baseUrl: string } = t): Promise<any> {
  const o = await rest(svc as TestService, key, { method: 'POST', path: '/v1/oracle/query', body: { include_manifest: true, ...body } });
  assert.equal(o.code, 'ok', o.message);
  return o.data;
}

function reproduceCall(protocol: Protocol, queryId: string, k = key): Promise<Outcome> {
  if (protocol === 'rest') return rest(t, k, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: queryId } });
  return grpcCall(forensics, forensics.reproduce, k, { queryId });
}

/** The reproduce answer with REST's field names and the forecast as JSON. */
function answer(o: Outcome): any {
  if (o.protocol === 'rest') return o.data;
  const d = o.data;
  return {
    query_id: d.queryId,
    reproduced: d.reproduced,
    original_output_digest: d.originalOutputDigest,
    reproduced_output_digest: d.reproducedOutputDigest,
    differences: d.differences,
    forecast: protoJson('forecast.v1.Forecast', Forecast, d.forecast),
    data_revision: d.dataRevision,
    recorded_engine_version: d.recordedEngineVersion,
    engine_version: d.engineVersion,
    engine_version_changed: d.engineVersionChanged,
    notes: d.notes,
    descendants: d.descendants,
    reconciliation: d.reconciliation,
  };
}

async function jwks(): Promise<any> {
  return (await fetch(`${t.baseUrl}/v1/manifests/keys`)).json();
}

describe('reproduce after later data', () => {
  let original: any;

  beforeAll(async () => {
    original = await queryRest({ entity: 'store:kept', horizon: 5, thresholds: [100, 130, 160], quantiles: [0.1, 0.9] });
    // a correction of an observation the query read, and new observations after it
    const correction = [{ axis: 'demand', time: dayTime(50), value: 999 }];
    const later = Array.from({ length: 10 }, (_, i) => ({ axis: 'demand', time: dayTime(120 + i), value: weekly(120 + i) }));
    const ing = await rest(t, key, { method: 'POST', path: '/v1/entities/store:kept/observations', body: { observations: [...correction, ...later] } });
    assert.equal(ing.code, 'ok', ing.message);
    assert.equal(ing.data.corrections, 1);
    const now = await queryRest({ entity: 'store:kept', horizon: 5, thresholds: [100, 130, 160], quantiles: [0.1, 0.9] });
    assert.notEqual(now.manifest.output_digest, original.manifest.output_digest, 'the data did change the live answer');
  });

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: identical digests and forecast, fitted afresh`, async () => {
      const fits = t.service.ctx.pool.stats.fits;
      const o = await reproduceCall(protocol, original.query_id);
      assert.equal(o.code, 'ok', o.message);
      const a = answer(o);
      assert.equal(a.reproduced, true);
      assert.equal(a.original_output_digest, original.manifest.output_digest);
      assert.equal(a.reproduced_output_digest, original.manifest.output_digest);
      assert.equal(canonicalDigest({ forecast: a.forecast, descendants: a.descendants, reconciliation: a.reconciliation }), original.manifest.output_digest);
      assert.deepEqual(a.forecast, original.forecast);
      assert.deepEqual(a.differences, []);
      assert.equal(a.data_revision, original.data_as_of);
      assert.deepEqual([a.recorded_engine_version, a.engine_version, a.engine_version_changed], [ENGINE_INFO.version, ENGINE_INFO.version, false]);
      assert.deepEqual(a.notes, []);
      assert.equal(t.service.ctx.pool.stats.fits, fits + 1, 'the model was fitted again, not taken from a cache');
    });
  }

  test('after a signing-key rotation old manifests still verify, new ones carry the new key', async () => {
    const before = await jwks();
    const rotated = await t.service.ctx.signingKeys.rotate();
    const after = await jwks();
    assert.deepEqual(after.keys.map((k: any) => k.kid), [...before.keys.map((k: any) => k.kid), rotated.keyId]);
    assert.ok(verifyManifest(original.manifest, after), 'the old manifest verifies with the new JWKS');
    const exported = await rest(t, key, { method: 'GET', path: `/v1/manifests/${original.query_id}` });
    assert.deepEqual(exported.data, original.manifest);
    const dsse = await rest(t, key, { method: 'GET', path: `/v1/manifests/${original.query_id}?format=dsse` });
    assert.equal(dsse.data.signatures[0].keyid, original.manifest.key_id, 'an old manifest’s envelope is signed by its own key');
    assert.ok(verifyEnvelope(dsse.data, after));
    const fresh = await queryRest({ entity: 'store:kept' });
    assert.equal(fresh.manifest.key_id, rotated.keyId);
    assert.notEqual(rotated.keyId, original.manifest.key_id);
    assert.ok(verifyManifest(fresh.manifest, after));
    const again = await reproduceCall('grpc', original.query_id);
    assert.equal(answer(again).reproduced, true);
  });
});

describe('bad input and data that is gone', () => {
  let doomed: any;

  beforeAll(async () => {
    doomed = await queryRest({ entity: 'store:doomed' });
    const del = await rest(t, key, { method: 'DELETE', path: '/v1/entities/store:doomed' });
    assert.equal(del.code, 'ok', del.message);
  });

  for (const protocol of ['rest', 'grpc'] as const) {
    test(`${protocol}: deleted data is failed_precondition naming what is gone`, async () => {
      const o = await reproduceCall(protocol, doomed.query_id);
      assert.equal(o.code, 'failed_precondition');
      assert.equal(o.status, protocol === 'rest' ? 400 : 9);
      assert.match(o.message, /store:doomed/);
      assert.match(o.message, /deleted/);
    });

    test(`${protocol}: malformed id 400, unknown or another account's 404, no audit scope 403`, async () => {
      const kept = await queryRest({ entity: 'store:kept' });
      for (const bad of ['', 'q_short', `q_${'I'.repeat(26)}`]) {
        const o = await reproduceCall(protocol, bad);
        assert.equal(o.code, 'invalid_argument', bad);
        assert.match(o.message, /query_id/);
      }
      assert.equal((await reproduceCall(protocol, `q_${'7'.repeat(26)}`)).code, 'not_found');
      const stranger = (await t.account('enterprise')).key;
      const foreign = await reproduceCall(protocol, kept.query_id, stranger);
      assert.equal(foreign.code, 'not_found');
      assert.equal(foreign.status, protocol === 'rest' ? 404 : 5);
      const reader = (await t.service.ctx.accounts.createKey(accountId, ['forecast:read', 'data:write'], null)).apiKey;
      assert.equal((await reproduceCall(protocol, kept.query_id, reader)).code, 'permission_denied');
    });
  }

  test('the gRPC oracle and the REST reproduction agree (the protocol does not matter)', async () => {
    const o = await grpcCall(oracle, oracle.query, key, { entity: 'store:kept', depth: 0, includeManifest: true, axes: [], horizon: 2, thresholds: [], quantiles: [], reconciliation: '' });
    assert.equal(o.code, 'ok', o.message);
    const a = answer(await reproduceCall('rest', o.data.queryId));
    assert.equal(a.reproduced, true);
    assert.deepEqual(a.forecast, protoJson('forecast.v1.Forecast', Forecast, o.data.forecast));
  });
});

test('on another replica, and after a restart under a newer engine version, the query is reproduced; the answer says the version differs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-forensics-'));
  const config = loadConfig({ HTTP_PORT: '0', GRPC_PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'f.db')}`, LOG_LEVEL: 'silent' });
  try {
    const first = await startService(config);
    const { account, created } = await first.ctx.accounts.createAccount('enterprise', null);
    const base = { baseUrl: `http://127.0.0.1:${first.httpPort}` } as TestService;
    await dailyEntity(base, created.apiKey, 'store:restart', weekly);
    const q = await rest(base, created.apiKey, { method: 'POST', path: '/v1/oracle/query', body: { entity: 'store:restart', horizon: 3, include_manifest: true } });
    assert.equal(q.code, 'ok', q.message);
    // another replica on the same database: the same keys, the same reproduction
    const replica = await startService(config);
    try {
      const other = { baseUrl: `http://127.0.0.1:${replica.httpPort}` } as TestService;
      assert.deepEqual(await (await fetch(`${other.baseUrl}/v1/manifests/keys`)).json(), await (await fetch(`${base.baseUrl}/v1/manifests/keys`)).json());
      const r = await rest(other, created.apiKey, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: q.data.query_id } });
      assert.equal(r.code, 'ok', r.message);
      assert.equal(r.data.reproduced, true);
      assert.deepEqual(r.data.forecast, q.data.forecast);
    } finally {
      await replica.stop();
    }
    await first.stop();

    const second = await startService(config, { engine: { ...ENGINE_INFO, version: '99.0.0-test' } });
    try {
      assert.equal((await second.ctx.accounts.getAccount(account.id))?.id, account.id);
      const again = { baseUrl: `http://127.0.0.1:${second.httpPort}` } as TestService;
      const o = await rest(again, created.apiKey, { method: 'POST', path: '/v1/forensics/reproduce', body: { query_id: q.data.query_id } });
      assert.equal(o.code, 'ok', o.message);
      assert.equal(o.data.reproduced, true);
      assert.equal(o.data.reproduced_output_digest, q.data.manifest.output_digest);
      assert.deepEqual(o.data.forecast, q.data.forecast);
      assert.deepEqual([o.data.recorded_engine_version, o.data.engine_version, o.data.engine_version_changed], [ENGINE_INFO.version, '99.0.0-test', true]);
      assert.match(o.data.notes.join(' '), /engine version differs: recorded .*, running 99\.0\.0-test.*identical/);
      const keys = (await (await fetch(`${again.baseUrl}/v1/manifests/keys`)).json()) as any;
      assert.ok(verifyManifest(q.data.manifest, keys), 'the restarted service publishes the same key');
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
