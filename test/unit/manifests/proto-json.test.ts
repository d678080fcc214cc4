/**
 * The compiled proto3 JSON printer (src/manifests/proto-json.ts) prints exactly what protobuf-es
 * prints by reflection with the gateway's options, for every kind of field our signed and
 * digested messages use: so the JSON that is signed is the JSON the REST API returns.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { fromBinary, toJson } from '@bufbuild/protobuf';
import { ListObservationsResponse } from '../../../gen/forecast/v1/entity_service.pb';
import { Manifest } from '../../../gen/forecast/v1/manifest.pb';
import { ReproduceResponse } from '../../../gen/forecast/v1/forensics_service.pb';
import { ListManifestsResponse } from '../../../gen/forecast/v1/manifest_service.pb';
import { Forecast, QueryResponse } from '../../../gen/forecast/v1/oracle_service.pb';
import { jcs } from '../../../src/manifests/canonical';
import { protoJsonPrinter } from '../../../src/manifests/proto-json';
import { loadDescriptors } from '../../../src/rpc/descriptors';
import { sampleManifest } from './fixture';

const registry = loadDescriptors().registry;

/** Both printers on one generated object; they must agree member for member and in canonical text. */
function agree<T extends object>(typeName: string, codec: { encode(m: T): { finish(): Uint8Array } }, value: T): any {
  const schema = registry.getMessage(typeName)!;
  const reflective = toJson(schema, fromBinary(schema, codec.encode(value).finish()), { useProtoFieldName: true, alwaysEmitImplicit: true });
  const compiled = protoJsonPrinter(schema)(value);
  assert.deepEqual(compiled, reflective, typeName);
  assert.equal(jcs(compiled), jcs(reflective));
  return compiled;
}

const forecast: Forecast = {
  distribution: [0.1, 0.2, 0.7],
  confidence: 0,
  axesResolved: { demand: 232.37, revenue: -1e-7 },
  thresholds: [1e21, -0.5],
  quantiles: { '0.05': 204, '0.5': 232.5 },
  horizon: 7,
  targetTime: '2026-11-07T00:00:00Z',
  model: 'ETS(M,Ad,M)',
  warnings: [],
  models: {},
};

test('forecasts, with defaults, empty maps and non-finite doubles', () => {
  agree('forecast.v1.Forecast', Forecast, forecast);
  const odd = agree('forecast.v1.Forecast', Forecast, { ...forecast, confidence: NaN, thresholds: [Infinity, -Infinity], distribution: [], horizon: 0, model: '' });
  assert.deepEqual([odd.confidence, odd.thresholds], ['NaN', ['Infinity', '-Infinity']]);
});

test('manifests, signed and unsigned, with Struct parameters and 64-bit integers', () => {
  agree('forecast.v1.Manifest', Manifest, sampleManifest());
  agree('forecast.v1.ListManifestsResponse', ListManifestsResponse, { manifests: [sampleManifest({ keyId: 'sigkey_x', signature: `0x${'ab'.repeat(64)}` }), sampleManifest({ request: undefined, engine: undefined })], nextCursor: 'c' });
});

test('query and reproduce answers: optional messages, Value fields with null and absent sides', () => {
  agree('forecast.v1.QueryResponse', QueryResponse, { queryId: 'q_1', forecast, dataAsOf: '9007199254740993', entity: 'a:b', depth: 0, manifest: undefined, descendants: [], reconciliation: '' });
  agree('forecast.v1.QueryResponse', QueryResponse, { queryId: 'q_1', forecast: undefined, dataAsOf: '0', entity: '', depth: 2, manifest: sampleManifest(), descendants: [{ entity: 'c:d', level: 1, forecast }], reconciliation: 'ols' });
  agree('forecast.v1.ReproduceResponse', ReproduceResponse, {
    queryId: 'q_1',
    reproduced: false,
    originalOutputDigest: 'a',
    reproducedOutputDigest: 'b',
    differences: [
      { path: 'forecast.model', original: 'ETS', reproduced: 'Theta' },
      { path: 'forecast.distribution[3]', original: undefined, reproduced: 0 },
      { path: 'forecast.x', original: null, reproduced: { a: [1, 'b', true, null] } },
    ],
    forecast,
    dataRevision: '3',
    recordedEngineVersion: '1.0.0',
    engineVersion: '1.1.0',
    engineVersionChanged: true,
    notes: ['n'],
    descendants: [{ entity: 'c:d', level: 2, forecast }],
    reconciliation: 'wls_struct',
  });
  agree('forecast.v1.ListObservationsResponse', ListObservationsResponse, { observations: [{ axis: 'd', time: 't', value: 1.5, revision: '12' }], nextCursor: '', dataRevision: '12' });
});
