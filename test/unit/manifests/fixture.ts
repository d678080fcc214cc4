/**
 * An in-memory signing setup for the manifest unit tests: a fresh SQLite database with a signing
 * key, the canonical-JSON converter over the real descriptor image, and a signed sample manifest.
 */
import type { Manifest } from '../../../gen/forecast/v1/manifest.pb';
import { ManualClock } from '../../../src/clock';
import { CanonicalJson } from '../../../src/manifests/canonical';
import { ManifestSigner } from '../../../src/manifests/manifest-signer';
import { jwkOf, SigningKeyStore } from '../../../src/manifests/signing-keys';
import { loadDescriptors } from '../../../src/rpc/descriptors';
import { openDatabase, type Database } from '../../../src/store/database';
import { SecretBox } from '../../../src/store/secret-box';

export interface SigningFixture {
  readonly database: Database;
  readonly keys: SigningKeyStore;
  readonly canonical: CanonicalJson;
  readonly signer: ManifestSigner;
  readonly box: SecretBox;
  /** The published JWKS. */
  jwks(): Promise<{ keys: any[] }>;
}

export async function signingFixture(): Promise<SigningFixture> {
  const database = await openDatabase('sqlite::memory:');
  const box = SecretBox.ephemeral();
  const keys = new SigningKeyStore(database, box, new ManualClock());
  await keys.ensure();
  const canonical = new CanonicalJson(loadDescriptors().registry);
  return { database, keys, canonical, signer: new ManifestSigner(keys, canonical), box, jwks: async () => ({ keys: (await keys.list()).map(jwkOf) }) };
}

/** An unsigned manifest with every kind of field, defaults included (empty lists, zero, empty Struct). */
export function sampleManifest(overrides: Partial<Manifest> = {}): Manifest {
  return {
    manifestVersion: 1,
    queryId: 'q_01KF0RDQG0TCDZ91FT1X7V77DG',
    createdAt: '2026-01-15T12:00:00Z',
    request: { entity: 'store:berlin', depth: 0, axes: ['demand', 'revenue'], horizon: 7, thresholds: [], quantiles: [0.05, 0.5, 0.95], includeManifest: false, reconciliation: '' },
    dataRevision: '42',
    inputs: [
      { entity: 'store:berlin', axis: 'demand', kind: 'count', frequency: 'P1D', observations: 700, firstTime: '2024-01-01T00:00:00Z', lastTime: '2025-12-01T00:00:00Z', seriesDigest: 'a'.repeat(64) },
      { entity: 'store:berlin', axis: 'revenue', kind: 'continuous', frequency: 'P1D', observations: 0, firstTime: '', lastTime: '', seriesDigest: 'b'.repeat(64) },
    ],
    engine: { name: 'forecast-engine', version: '1.0.0', runtime: 'node 20' },
    models: [
      { entity: 'store:berlin', axis: 'demand', model: 'ETS(M,Ad,M)', spec: 'ets', params: { alpha: 0.25, phi: 0.98, s: [1.1, 0.9, -0], nested: { flag: true, none: null, tiny: 1e-7, big: 1e21, text: 'NaN' } }, seed: 123456, intervalMethod: 'simulated', seasonLength: 7, seasonalPeriods: [7, 365], warnings: ['too short for damping'], seriesDigest: 'a'.repeat(64), aggregated: false },
      { entity: 'store:berlin', axis: 'revenue', model: 'naive', spec: 'naive', params: {}, seed: 0, intervalMethod: 'analytic', seasonLength: 1, seasonalPeriods: [], warnings: [], seriesDigest: 'd'.repeat(64), aggregated: true },
    ],
    outputDigest: 'c'.repeat(64),
    keyId: '',
    signature: '',
    ...overrides,
  };
}
