/**
 * The canonical form the signatures cover (the `Manifest` proto comment): the proto3 JSON with
 * defaults emitted, as the REST gateway writes it, is what is signed; a stored manifest parses
 * back to the same JSON; fields added after version 1 must have explicit presence so that old
 * manifests' JSON — and so their signatures — never change.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import type { DescMessage } from '@bufbuild/protobuf';
import { FeatureSet_FieldPresence } from '@bufbuild/protobuf/wkt';
import { jcs } from '../../../src/manifests/canonical';
import { paramsJson } from '../../../src/manifests/manifest-builder';
import { signingInput } from '../../../src/manifests/manifest-signer';
import { loadDescriptors } from '../../../src/rpc/descriptors';
import { canonicalJson } from '../../helpers/independent-verifier';
import { sampleManifest, signingFixture, type SigningFixture } from './fixture';

let f: SigningFixture;
beforeAll(async () => {
  f = await signingFixture();
});
afterAll(() => f.database.close());

/** The fields of manifest format version 1, per message: frozen. */
const VERSION_1_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'forecast.v1.Manifest': ['manifest_version', 'query_id', 'created_at', 'request', 'data_revision', 'inputs', 'engine', 'models', 'output_digest', 'key_id', 'signature'],
  'forecast.v1.ManifestRequest': ['entity', 'depth', 'axes', 'horizon', 'thresholds', 'quantiles', 'include_manifest', 'reconciliation'],
  'forecast.v1.ManifestInput': ['entity', 'axis', 'kind', 'frequency', 'observations', 'first_time', 'last_time', 'series_digest'],
  'forecast.v1.ManifestEngine': ['name', 'version', 'runtime'],
  'forecast.v1.ManifestModel': ['entity', 'axis', 'model', 'spec', 'params', 'seed', 'interval_method', 'season_length', 'seasonal_periods', 'warnings', 'series_digest', 'aggregated'],
};

test('fields added to the manifest after version 1 have explicit presence (old signatures keep verifying)', () => {
  const registry = loadDescriptors().registry;
  const seen = new Set<string>();
  const visit = (m: DescMessage) => {
    if (seen.has(m.typeName) || m.typeName.startsWith('google.')) return;
    seen.add(m.typeName);
    const frozen = VERSION_1_FIELDS[m.typeName];
    assert.ok(frozen, `${m.typeName} is new in the manifest: add it to VERSION_1_FIELDS only if it is version-1 content, else reach it through an explicit-presence field`);
    for (const field of m.fields) {
      if (!frozen.includes(field.name)) {
        const explicit = field.fieldKind === 'message' || ((field.fieldKind === 'scalar' || field.fieldKind === 'enum') && field.presence !== FeatureSet_FieldPresence.IMPLICIT);
        assert.ok(explicit, `${m.typeName}.${field.name} was added after version 1 without explicit presence (use optional or a message)`);
      }
      if (field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message')) visit(field.message!);
    }
    assert.deepEqual(frozen.filter((n) => !m.fields.some((x) => x.name === n)), [], `${m.typeName} lost a version-1 field`);
  };
  visit(registry.getMessage('forecast.v1.Manifest')!);
  assert.equal(seen.size, Object.keys(VERSION_1_FIELDS).length);
});

test('defaults are in the signed JSON ([] and 0 and "" and {}), and the stored text parses back to the same JSON', async () => {
  const signed = await f.signer.sign(sampleManifest());
  const json = JSON.parse(signed.json);
  assert.deepEqual(json.request.thresholds, []);
  assert.equal(json.request.depth, 0);
  assert.equal(json.request.include_manifest, false);
  assert.equal(json.inputs[1].observations, 0);
  assert.equal(json.inputs[1].first_time, '');
  assert.deepEqual(json.models[1].params, {});
  assert.deepEqual(json.models[1].seasonal_periods, []);
  assert.equal(json.data_revision, '42', 'int64 is a decimal string in proto3 JSON');
  assert.equal(json.models[0].params.nested.tiny, 1e-7);
  assert.equal(json.models[0].params.nested.none, null);
  const reparsed = f.canonical.manifest(f.canonical.parseManifest(signed.json));
  assert.equal(jcs(reparsed), signed.json, 'parse → print is the identity on the canonical text');
  assert.equal(jcs(f.canonical.manifest(signed.manifest)), signed.json, 'the message returned inline prints as the stored JSON');
  assert.equal(signingInput(json).toString('utf8'), canonicalJson(Object.fromEntries(Object.entries(json).filter(([k]) => k !== 'signature')) as never), 'project JCS = independent JCS');
});

test('parameters: non-finite numbers become strings, typed arrays plain arrays, undefined members dropped', () => {
  assert.deepEqual(paramsJson({ a: NaN, b: Infinity, c: -Infinity, d: [1, NaN], e: { f: undefined as never, g: 2 }, h: Float64Array.from([0.5]) as never, i: null, j: -0 }), {
    a: 'NaN',
    b: 'Infinity',
    c: '-Infinity',
    d: [1, 'NaN'],
    e: { g: 2 },
    h: [0.5],
    i: null,
    j: 0,
  });
  assert.ok(Object.is((paramsJson({ z: -0 }) as { z: number }).z, 0));
});
