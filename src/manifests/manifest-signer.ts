/**
 * Signing manifests: Ed25519 over the RFC 8785 canonical JSON of the manifest without its
 * `signature` (the `Manifest` proto comment defines the form), written `0x` + 128 lowercase hex
 * characters, with the current signing key whose id is part of the signed bytes.
 */
import type { Manifest } from '../../gen/forecast/v1/manifest.pb';
import { jcs, type CanonicalJson } from './canonical';
import type { SigningKeyStore } from './signing-keys';

/** The signature format: `0x` + 128 lowercase hex characters (64 bytes). */
export const SIGNATURE_PATTERN = /^0x[0-9a-f]{128}$/;

/** The bytes a manifest's signature covers: its JSON without `signature`, canonicalised (what verifiers compute). */
export function signingInput(manifestJson: { readonly [key: string]: unknown }): Buffer {
  const { signature: _omitted, ...rest } = manifestJson;
  return Buffer.from(jcs(rest), 'utf8');
}

/** A signed manifest: the message and its canonical JSON text (what is stored and exported). */
export interface SignedManifest {
  readonly manifest: Manifest;
  readonly json: string;
}

/** Signs manifests with the current signing key (see the file comment). */
export class ManifestSigner {
  constructor(
    private readonly keys: SigningKeyStore,
    private readonly canonical: CanonicalJson,
  ) {}

  /** Sign an unsigned manifest with the current key. */
  async sign(unsigned: Manifest): Promise<SignedManifest> {
    const key = await this.keys.current();
    const manifest: Manifest = { ...unsigned, keyId: key.keyId, signature: '' };
    const { signature: _unsigned, ...json } = this.canonical.manifest(manifest);
    const signedText = jcs(json);
    const signature = `0x${key.sign(Buffer.from(signedText, 'utf8')).toString('hex')}`;
    return { manifest: { ...manifest, signature }, json: withSignature(signedText, Object.keys(json), signature) };
  }
}

/**
 * The canonical text with `signature` added, from the canonical text without it. JCS sorts
 * members, and `signature` sorts after every version-1 member, so it is appended (why: a second
 * canonicalisation of the whole manifest costs as much as the signature); a member sorting after
 * it (a later addition) takes the general path.
 */
function withSignature(signedText: string, keys: readonly string[], signature: string): string {
  if (keys.every((k) => k < 'signature')) return `${signedText.slice(0, -1)},"signature":${JSON.stringify(signature)}}`;
  return jcs({ ...(JSON.parse(signedText) as object), signature });
}
