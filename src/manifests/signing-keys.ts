/**
 * Manifest signing keys: Ed25519 key pairs in the database, shared by every replica. The first
 * start makes generation 1; `rotate` adds the next generation, which signs from then on; no
 * key is ever removed, so every manifest ever signed stays verifiable. The private key is
 * stored sealed under the master key (`store/secret-box.ts`, bound to its key id), opened in
 * memory only to sign, and never returned, logged or exported: nothing here hands it out
 * except to `sign`.
 */
import { createPrivateKey, generateKeyPairSync, sign as edSign, type KeyObject } from 'node:crypto';
import type { Clock } from '../clock';
import { newId } from '../ids';
import type { Database } from '../store/database';
import { prepared } from '../store/prepared';
import type { SecretBox } from '../store/secret-box';

/** A signing key's public facts. */
export interface SigningKeyInfo {
  /** `sigkey_<ULID>`: the manifests' `key_id` and the JWK's `kid`. */
  readonly keyId: string;
  /** 1, 2, …: the highest signs. */
  readonly generation: number;
  /** base64url of the raw 32-byte Ed25519 public key (the JWK's `x`). */
  readonly publicKey: string;
  readonly createTime: number;
}

/** The JWK of a public key (RFC 7517, RFC 8037; `alg` per RFC 9864). */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: 'Ed25519';
  readonly use: 'sig';
}

/** The DER prefix of an Ed25519 public key in SubjectPublicKeyInfo form (RFC 8410): the raw 32 bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * A new Ed25519 key pair: the public key's raw bytes in base64url (the JWK's `x`) and the private
 * key in PKCS #8 DER. Why not `publicKey.export({ format: 'jwk' })`: on Node 20 (20.20.2 here) it
 * can deadlock the process for good — the JWK export holds the key's mutex while it allocates, a
 * garbage collection then finalizes the key-generation job that shares that key, and its
 * destructor waits for the same mutex (found in CI: a test worker blocked at 0% CPU for 16
 * minutes; gdb showed `~KeyGenJob` under `ExportJWKEdKey`; a loop of generate-and-export with a
 * 1 MB young generation hangs within a second). The DER export does not hold the lock so.
 */
export function newSigningKeyPair(): { x: string; pkcs8: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  if (spki.length !== ED25519_SPKI_PREFIX.length + 32 || !spki.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) {
    throw new Error('unexpected Ed25519 public key encoding');
  }
  return { x: spki.subarray(ED25519_SPKI_PREFIX.length).toString('base64url'), pkcs8: privateKey.export({ format: 'der', type: 'pkcs8' }) };
}

/** The JWK of a signing key. */
export function jwkOf(key: SigningKeyInfo): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: key.publicKey, kid: key.keyId, alg: 'Ed25519', use: 'sig' };
}

/** Every signing key's public facts, oldest first (needs no master key). */
export async function listSigningKeys(database: Database): Promise<SigningKeyInfo[]> {
  const rows = await database.db.selectFrom('signing_keys').select(['key_id', 'generation', 'public_key', 'create_time']).orderBy('generation').execute();
  return rows.map((r) => ({ keyId: r.key_id, generation: Number(r.generation), publicKey: r.public_key, createTime: Number(r.create_time) }));
}

/** Context binding a sealed private key to its row (a sealed key copied elsewhere does not open). */
const sealContext = (keyId: string) => `signing-key:${keyId}`;

/** Attempts at taking the next generation when another rotation races for it. */
const ROTATE_ATTEMPTS = 5;

/** The signing keys in the database (see the file comment); private keys are opened only to sign. */
export class SigningKeyStore {
  /** Read on every query: prepared, and served from the read cache until the table changes. */
  private readonly newest;
  private readonly byId;
  /** Opened private keys by key id (opened once per process). */
  private readonly opened = new Map<string, KeyObject>();

  constructor(
    private readonly database: Database,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
  ) {
    const db = database.db;
    this.newest = prepared<Record<string, never>, { key_id: string; private_key: string }>(database, () =>
      db.selectFrom('signing_keys').select(['key_id', 'private_key']).orderBy('generation', 'desc').limit(1),
    );
    this.byId = prepared<{ keyId: string }, { key_id: string; private_key: string }>(database, (p) =>
      db.selectFrom('signing_keys').select(['key_id', 'private_key']).where('key_id', '=', p.keyId),
    );
  }

  /** Make the first key if the database has none (replicas starting together make one between them). */
  async ensure(): Promise<void> {
    await this.insert(1, true);
  }

  /**
   * Make a new key the one that signs (the next generation). Concurrent rotations each get
   * their own generation. Returns the new key's public facts.
   */
  async rotate(): Promise<SigningKeyInfo> {
    for (let attempt = 1; ; attempt++) {
      const row = await this.database.db.selectFrom('signing_keys').select((eb) => eb.fn.max('generation').as('g')).executeTakeFirst();
      try {
        return await this.insert(Number(row?.g ?? 0) + 1);
      } catch (err) {
        // Another rotation took that generation (unique constraint): try the next one.
        if (attempt >= ROTATE_ATTEMPTS) throw err;
      }
    }
  }

  /** Every key, oldest first (the last one signs). */
  list(): Promise<SigningKeyInfo[]> {
    return listSigningKeys(this.database);
  }

  /** The key that signs now: its id, and a function signing with it. */
  async current(): Promise<{ readonly keyId: string; sign(data: Buffer): Buffer }> {
    const [row] = await this.newest({});
    if (!row) throw new Error('no manifest signing key: SigningKeyStore.ensure() was not called at start');
    const key = this.open(row.key_id, row.private_key);
    return { keyId: row.key_id, sign: (data) => edSign(null, data, key) };
  }

  /** Sign `data` with the key `keyId` (the current one, or an older manifest's for its DSSE envelope). */
  async signWith(keyId: string, data: Buffer): Promise<Buffer> {
    const [row] = await this.byId({ keyId });
    if (!row) throw new Error(`signing key ${keyId} does not exist`);
    return edSign(null, data, this.open(row.key_id, row.private_key));
  }

  private open(keyId: string, sealed: string): KeyObject {
    let key = this.opened.get(keyId);
    if (!key) {
      key = createPrivateKey({ key: this.secrets.open(sealed, sealContext(keyId)), format: 'der', type: 'pkcs8' });
      this.opened.set(keyId, key);
    }
    return key;
  }

  /** Store a new key pair as `generation`; with `ifFirst`, only if that generation is still free. */
  private async insert(generation: number, ifFirst = false): Promise<SigningKeyInfo> {
    const { x, pkcs8 } = newSigningKeyPair();
    const keyId = newId('sigkey', this.clock);
    const createTime = this.clock.now();
    const sealed = this.secrets.seal(pkcs8, sealContext(keyId));
    let insert = this.database.db.insertInto('signing_keys').values({ key_id: keyId, generation, public_key: x, private_key: sealed, create_time: createTime });
    if (ifFirst) insert = insert.onConflict((oc) => oc.column('generation').doNothing());
    await insert.execute();
    return { keyId, generation, publicKey: x, createTime };
  }
}
