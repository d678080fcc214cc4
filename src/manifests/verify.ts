/**
 * Offline verification of an exported manifest (JSON) or DSSE envelope against a JWKS, for
 * `forecast manifests verify`. Every way a document can be wrong — not JSON, truncated, a
 * missing or malformed member, an unknown key, a signature that does not verify, an envelope
 * whose statement does not match its manifest — ends in a `VerificationFailure` that names it,
 * never in another exception.
 */
import { createPublicKey, verify as edVerify, type KeyObject } from 'node:crypto';
import { DSSE_PAYLOAD_TYPE, pae, PREDICATE_TYPE, STATEMENT_TYPE } from './dsse';
import { SIGNATURE_PATTERN, signingInput } from './manifest-signer';

/** Why a document did not verify (the message says what failed). */
export class VerificationFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VerificationFailure';
  }
}

/** What verified. */
export interface Verified {
  readonly kind: 'manifest' | 'dsse';
  readonly keyId: string;
  readonly queryId: string;
}

type JsonObject = { [key: string]: unknown };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new VerificationFailure(`${what} is not valid JSON (truncated or corrupted?): ${(err as Error).message}`);
  }
}

/** The Ed25519 public keys of a JWKS by `kid`; keys of other types are ignored. */
export function keysOf(jwks: unknown): Map<string, KeyObject> {
  const set = typeof jwks === 'string' ? parseJson(jwks, 'the JWKS') : jwks;
  if (!isObject(set) || !Array.isArray(set.keys)) throw new VerificationFailure('the JWKS has no "keys" array');
  const keys = new Map<string, KeyObject>();
  for (const k of set.keys) {
    if (!isObject(k) || k.kty !== 'OKP' || k.crv !== 'Ed25519' || typeof k.kid !== 'string' || typeof k.x !== 'string') continue;
    try {
      keys.set(k.kid, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' }));
    } catch {
      throw new VerificationFailure(`JWK ${k.kid.slice(0, 60)} is not a valid Ed25519 public key`);
    }
  }
  return keys;
}

function keyFor(keys: Map<string, KeyObject>, kid: unknown, where: string): KeyObject {
  if (typeof kid !== 'string' || kid === '') throw new VerificationFailure(`${where} names no key id`);
  const key = keys.get(kid);
  if (!key) throw new VerificationFailure(`key ${kid.slice(0, 60)} (${where}) is not in the JWKS`);
  return key;
}

/** Verify a manifest's signature (the JSON form, signature included). */
export function verifyManifest(manifest: unknown, keys: Map<string, KeyObject>): Verified {
  if (!isObject(manifest)) throw new VerificationFailure('the manifest is not a JSON object');
  const { signature, key_id: keyId, query_id: queryId } = manifest;
  if (typeof signature !== 'string' || !SIGNATURE_PATTERN.test(signature)) throw new VerificationFailure('the manifest signature is missing or not 0x + 128 lowercase hex characters');
  if (typeof queryId !== 'string') throw new VerificationFailure('the manifest has no query_id');
  const key = keyFor(keys, keyId, 'the manifest key_id');
  let input: Buffer;
  try {
    input = signingInput(manifest);
  } catch (err) {
    throw new VerificationFailure(`the manifest cannot be canonicalised: ${(err as Error).message}`);
  }
  if (!edVerify(null, input, key, Buffer.from(signature.slice(2), 'hex'))) {
    throw new VerificationFailure(`the manifest signature does not verify with key ${String(keyId)}: the manifest was altered, or not signed by that key`);
  }
  return { kind: 'manifest', keyId: keyId as string, queryId };
}

/** Strict base64 (standard or URL-safe alphabet, padding optional) → bytes. */
function base64(text: unknown, what: string): Buffer {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) throw new VerificationFailure(`${what} is not base64`);
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Verify a DSSE envelope: its signature over the PAE, its in-toto statement, and the manifest inside. */
export function verifyEnvelope(envelope: unknown, keys: Map<string, KeyObject>): Verified {
  if (!isObject(envelope)) throw new VerificationFailure('the envelope is not a JSON object');
  if (envelope.payloadType !== DSSE_PAYLOAD_TYPE) throw new VerificationFailure(`the envelope payloadType is not ${DSSE_PAYLOAD_TYPE}`);
  const payload = base64(envelope.payload, 'the envelope payload');
  const signatures = envelope.signatures;
  if (!Array.isArray(signatures) || signatures.length === 0) throw new VerificationFailure('the envelope has no signatures');
  const signed = pae(DSSE_PAYLOAD_TYPE, payload);
  const good = signatures.find((s) => isObject(s) && typeof s.keyid === 'string' && keys.has(s.keyid) && edVerify(null, signed, keys.get(s.keyid)!, base64(s.sig, 'an envelope signature')));
  if (!good) {
    const ids = signatures.map((s) => (isObject(s) ? String(s.keyid).slice(0, 60) : '?')).join(', ');
    throw new VerificationFailure(`no envelope signature verifies (key ids: ${ids}): the payload was altered, or signed by a key not in the JWKS`);
  }
  const statement = parseJson(payload.toString('utf8'), 'the envelope payload');
  if (!isObject(statement) || statement._type !== STATEMENT_TYPE) throw new VerificationFailure(`the payload is not an in-toto Statement v1 (${STATEMENT_TYPE})`);
  if (statement.predicateType !== PREDICATE_TYPE) throw new VerificationFailure(`the statement predicateType is not ${PREDICATE_TYPE}`);
  const manifest = verifyManifest(statement.predicate, keys);
  const predicate = statement.predicate as JsonObject;
  const subject = Array.isArray(statement.subject) ? statement.subject[0] : undefined;
  const digest = isObject(subject) && isObject(subject.digest) ? subject.digest.sha256 : undefined;
  if (!isObject(subject) || subject.name !== manifest.queryId || digest !== predicate.output_digest) {
    throw new VerificationFailure('the statement subject does not match the manifest (query id and output digest)');
  }
  return { kind: 'dsse', keyId: (good as JsonObject).keyid as string, queryId: manifest.queryId };
}

/** Verify a document's text (a manifest or a DSSE envelope) against a JWKS. */
export function verifyDocument(text: string, jwks: unknown): Verified {
  const keys = keysOf(jwks);
  const doc = parseJson(text, 'the document');
  return isObject(doc) && 'payloadType' in doc ? verifyEnvelope(doc, keys) : verifyManifest(doc, keys);
}
