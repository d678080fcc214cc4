/**
 * An independent verifier of manifests and their DSSE envelopes, written for the tests from the
 * specifications alone with node:crypto — no project code — to show that anyone holding only the
 * published JWKS and a stock Ed25519 library can verify what the service signs:
 * - RFC 8785 (JCS): members sorted by the UTF-16 code units of their names, no whitespace,
 *   strings and numbers serialised as ECMAScript's JSON.stringify does (section 3.2.2);
 * - RFC 8037: an OKP JWK with `crv` Ed25519 and `x` the base64url public key;
 * - DSSE v1: the signature covers PAE(type, body) =
 *   "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes as ASCII decimals;
 * - in-toto Statement v1: `_type`, `subject[].digest`, `predicateType`, `predicate`.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** RFC 8785 canonical JSON. */
export function canonicalJson(value: Json): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('JCS admits only finite numbers');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  // Array.prototype.sort without a comparator orders strings by UTF-16 code units, as JCS requires.
  const names = Object.keys(value).sort();
  return `{${names.map((n) => `${JSON.stringify(n)}:${canonicalJson(value[n])}`).join(',')}}`;
}

/** SHA-256 hex of the canonical JSON of a value (e.g. a forecast, against `output_digest`). */
export function canonicalDigest(value: Json): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/** The Ed25519 key `kid` from a JWKS, or undefined. */
export function jwkKey(jwks: { keys: Json[] }, kid: string): KeyObject | undefined {
  const jwk = jwks.keys.find((k) => typeof k === 'object' && k !== null && !Array.isArray(k) && k.kid === kid) as { kty: string; crv: string; x: string } | undefined;
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') return undefined;
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
}

/** True when the manifest's `signature` verifies over the JCS of the manifest without it. */
export function verifyManifest(manifest: { [key: string]: Json }, jwks: { keys: Json[] }): boolean {
  const { signature, ...signed } = manifest;
  if (typeof signature !== 'string' || !/^0x[0-9a-f]{128}$/.test(signature) || typeof manifest.key_id !== 'string') return false;
  const key = jwkKey(jwks, manifest.key_id);
  if (!key) return false;
  return verify(null, Buffer.from(canonicalJson(signed), 'utf8'), key, Buffer.from(signature.slice(2), 'hex'));
}

/** DSSE v1 pre-authentication encoding. */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/**
 * The in-toto statement of an envelope whose signature (by a JWKS key) verifies over the PAE,
 * or undefined.
 */
export function verifyEnvelope(envelope: { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] }, jwks: { keys: Json[] }): { [key: string]: Json } | undefined {
  const payload = Buffer.from(envelope.payload, 'base64');
  const signed = preAuthEncoding(envelope.payloadType, payload);
  const ok = envelope.signatures.some((s) => {
    const key = jwkKey(jwks, s.keyid);
    return key !== undefined && verify(null, signed, key, Buffer.from(s.sig, 'base64'));
  });
  return ok ? (JSON.parse(payload.toString('utf8')) as { [key: string]: Json }) : undefined;
}

/** Every leaf of a JSON document as [path, value] (paths as key arrays). */
export function leaves(value: Json, path: (string | number)[] = []): [(string | number)[], Json][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [[path, value]];
}

/** A deep copy of `doc` with the leaf at `path` replaced by a different value of the same JSON type. */
export function withChangedLeaf(doc: Json, path: (string | number)[]): Json {
  const copy = JSON.parse(JSON.stringify(doc)) as Json;
  let parent = copy as any;
  for (const p of path.slice(0, -1)) parent = parent[p];
  const last = path[path.length - 1];
  const v = parent[last] as Json;
  parent[last] = typeof v === 'number' ? (v === 0 ? 1 : -v) : typeof v === 'string' ? `${v}x` : typeof v === 'boolean' ? !v : 0;
  return copy;
}
