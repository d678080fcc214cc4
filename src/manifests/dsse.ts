/**
 * Manifests as DSSE envelopes (https://github.com/secure-systems-lab/dsse, envelope.md and
 * protocol.md) carrying an in-toto Statement v1 (https://github.com/in-toto/attestation,
 * spec/v1/statement.md): the subject is the query with the output digest, the predicate the
 * signed manifest. The envelope is signed with the manifest's own key over DSSE's
 * pre-authentication encoding, so tools that know DSSE verify it without knowing our format.
 */
import { jcs } from './canonical';

/** DSSE `payloadType` of an in-toto statement. */
export const DSSE_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
/** in-toto Statement v1 `_type`. */
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
/**
 * The predicate type of our manifests. A URN, not a URL: it names the format (documented in
 * the `Manifest` proto and the README) without depending on a domain.
 */
export const PREDICATE_TYPE = 'urn:forecast-service:audit-manifest:v1';

/** DSSE v1 pre-authentication encoding: `DSSEv1 SP len(type) SP type SP len(body) SP body` (lengths in bytes, decimal). */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `, 'utf8'), type, Buffer.from(` ${payload.length} `, 'utf8'), payload]);
}

/** The in-toto statement of a signed manifest (its JSON form). */
export function statementOf(manifest: { readonly query_id: string; readonly output_digest: string }): object {
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: manifest.query_id, digest: { sha256: manifest.output_digest } }],
    predicateType: PREDICATE_TYPE,
    predicate: manifest,
  };
}

/** The payload (canonical JSON bytes of the statement) and the bytes its signature covers. */
export function envelopePayload(manifestJsonText: string): { payload: Buffer; signed: Buffer; keyId: string } {
  const manifest = JSON.parse(manifestJsonText) as { query_id: string; output_digest: string; key_id: string };
  const payload = Buffer.from(jcs(statementOf(manifest)), 'utf8');
  return { payload, signed: pae(DSSE_PAYLOAD_TYPE, payload), keyId: manifest.key_id };
}

/** The envelope's JSON text, given the payload and its signature. */
export function envelopeJson(payload: Buffer, keyId: string, signature: Buffer): string {
  return JSON.stringify({ payloadType: DSSE_PAYLOAD_TYPE, payload: payload.toString('base64'), signatures: [{ keyid: keyId, sig: signature.toString('base64') }] });
}
