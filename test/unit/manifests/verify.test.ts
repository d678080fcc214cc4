/**
 * Signing and offline verification in-process: the project's verifier and the independent one
 * agree on a signed manifest and its envelope; every single-leaf change, every truncation, random
 * byte corruption and every malformed envelope is a named `VerificationFailure`, never another
 * exception.
 */
import { afterAll, beforeAll, test } from '@jest/globals';
import assert from 'node:assert/strict';
import { envelopeJson, envelopePayload, pae } from '../../../src/manifests/dsse';
import { verifyDocument, VerificationFailure } from '../../../src/manifests/verify';
import { Rng } from '../../../src/engine/rng';
import { leaves, verifyEnvelope, verifyManifest, withChangedLeaf } from '../../helpers/independent-verifier';
import { sampleManifest, signingFixture, type SigningFixture } from './fixture';

let f: SigningFixture;
let manifestText: string;
let envelopeText: string;
let jwks: { keys: any[] };

beforeAll(async () => {
  f = await signingFixture();
  manifestText = (await f.signer.sign(sampleManifest())).json;
  const { payload, signed, keyId } = envelopePayload(manifestText);
  envelopeText = envelopeJson(payload, keyId, await f.keys.signWith(keyId, signed));
  jwks = await f.jwks();
});
afterAll(() => f.database.close());

/** The failure message of verifying `text`, or undefined when it verifies. */
function failure(text: string, keys: unknown = jwks): string | undefined {
  try {
    verifyDocument(text, keys);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof VerificationFailure, `a VerificationFailure, not ${String(err)}`);
    return err.message;
  }
}

test('a signed manifest and its envelope verify with both verifiers', () => {
  const manifest = JSON.parse(manifestText);
  assert.deepEqual(verifyDocument(manifestText, jwks), { kind: 'manifest', keyId: manifest.key_id, queryId: manifest.query_id });
  assert.deepEqual(verifyDocument(envelopeText, JSON.stringify(jwks)), { kind: 'dsse', keyId: manifest.key_id, queryId: manifest.query_id });
  assert.ok(verifyManifest(manifest, jwks));
  assert.deepEqual(verifyEnvelope(JSON.parse(envelopeText), jwks)?.predicate, manifest);
});

test('every single-leaf change fails both verifiers', () => {
  const manifest = JSON.parse(manifestText);
  const all = leaves(manifest);
  assert.ok(all.length > 40);
  for (const [path] of all) {
    const changed = withChangedLeaf(manifest, path) as any;
    assert.ok(failure(JSON.stringify(changed)), `project verifier accepts a change at ${path.join('.')}`);
    assert.equal(verifyManifest(changed, jwks), false, `independent verifier accepts a change at ${path.join('.')}`);
  }
});

test('every truncation and random corruption is a named failure, never a crash', () => {
  for (const text of [manifestText, envelopeText]) {
    for (let n = 0; n < text.length; n += 7) assert.ok(failure(text.slice(0, n)), `truncated at ${n}`);
  }
  const rng = new Rng(11);
  for (let i = 0; i < 300; i++) {
    const text = i % 2 ? manifestText : envelopeText;
    const bytes = Buffer.from(text);
    const at = Math.floor(rng.uniform() * bytes.length);
    bytes[at] = (bytes[at] + 1 + Math.floor(rng.uniform() * 254)) % 256;
    const corrupted = bytes.toString('latin1');
    if (corrupted === text) continue;
    // a flip inside base64 padding or JSON whitespace may leave the meaning intact; anything else must fail
    const message = failure(corrupted);
    if (message === undefined) assert.deepEqual(JSON.parse(corrupted), JSON.parse(text), `byte ${at} changed the meaning and still verified`);
  }
});

test('malformed envelopes, JWKS and keys are named', () => {
  const envelope = JSON.parse(envelopeText);
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
  const reencode = (s: object) => Buffer.from(JSON.stringify(s)).toString('base64');
  const cases: [string, string, RegExp, unknown?][] = [
    ['not JSON', 'nope', /not valid JSON/],
    ['an array', '[]', /not a JSON object/],
    ['null', 'null', /not a JSON object/],
    ['signature not hex', JSON.stringify({ ...JSON.parse(manifestText), signature: '0xZZ' }), /0x \+ 128 lowercase hex/],
    ['upper-case signature', JSON.stringify({ ...JSON.parse(manifestText), signature: JSON.parse(manifestText).signature.toUpperCase().replace('0X', '0x') }), /0x \+ 128 lowercase hex/],
    ['no key id', JSON.stringify({ ...JSON.parse(manifestText), key_id: undefined }), /names no key id/],
    ['no query id', JSON.stringify({ ...JSON.parse(manifestText), query_id: 5 }), /no query_id/],
    ['other payload type', JSON.stringify({ ...envelope, payloadType: 'application/json' }), /payloadType/],
    ['payload not base64', JSON.stringify({ ...envelope, payload: 'a b' }), /not base64/],
    ['payload a number', JSON.stringify({ ...envelope, payload: 5 }), /not base64/],
    ['signatures missing', JSON.stringify({ ...envelope, signatures: undefined }), /no signatures/],
    ['signature of another key id', JSON.stringify({ ...envelope, signatures: [{ keyid: 'sigkey_X', sig: envelope.signatures[0].sig }] }), /no envelope signature verifies/],
    ['signature not base64', JSON.stringify({ ...envelope, signatures: [{ keyid: envelope.signatures[0].keyid, sig: '***' }] }), /not base64/],
    ['statement of another type (re-signed payload missing)', JSON.stringify({ ...envelope, payload: reencode({ ...statement, _type: 'x' }) }), /no envelope signature verifies/],
    ['JWKS without keys', manifestText, /no "keys" array/, { nokeys: true }],
    ['JWKS not JSON', manifestText, /JWKS is not valid JSON/, '{'],
    ['JWKS with a broken key', manifestText, /not a valid Ed25519 public key/, { keys: [{ ...jwks.keys[0], x: 'AAAA' }] }],
    ['JWKS without the key', manifestText, /not in the JWKS/, { keys: [] }],
  ];
  for (const [name, text, message, keys] of cases) {
    const m = failure(text, keys ?? jwks);
    assert.ok(m, `${name} verified`);
    assert.match(m, message, name);
  }
});

test('an envelope whose statement does not match its manifest fails even when its own signature verifies', async () => {
  const manifest = JSON.parse(manifestText);
  const keyId = manifest.key_id;
  const sign = async (statement: object) => {
    const payload = Buffer.from(JSON.stringify(statement));
    return envelopeJson(payload, keyId, await f.keys.signWith(keyId, pae('application/vnd.in-toto+json', payload)));
  };
  const good = { _type: 'https://in-toto.io/Statement/v1', subject: [{ name: manifest.query_id, digest: { sha256: manifest.output_digest } }], predicateType: 'urn:forecast-service:audit-manifest:v1', predicate: manifest };
  assert.equal(failure(await sign(good)), undefined);
  assert.match(failure(await sign({ ...good, _type: 'https://in-toto.io/Statement/v0.1' }))!, /in-toto Statement v1/);
  assert.match(failure(await sign({ ...good, predicateType: 'https://slsa.dev/provenance/v1' }))!, /predicateType/);
  assert.match(failure(await sign({ ...good, subject: [{ name: manifest.query_id, digest: { sha256: '0'.repeat(64) } }] }))!, /subject does not match/);
  assert.match(failure(await sign({ ...good, predicate: { ...manifest, horizon: 1 } }))!, /manifest signature does not verify/);
});
