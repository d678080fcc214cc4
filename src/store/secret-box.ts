/**
 * Secrets at rest. Whatever the service must be able to use again later — webhook signing
 * secrets, the manifest signing keys, server secrets such as the cursor key, a stored response
 * that carries a secret — is never written to the database in clear: it is sealed with
 * AES-256-GCM under the master key, which the server holds outside the database (envelope
 * encryption, as cloud KMS "data keys" are used). What only needs comparing (API keys) is hashed
 * instead and never needs this.
 *
 * Each sealed value is bound to a `context` string (e.g. `webhook-secret:sub_…`) as additional
 * authenticated data, so a sealed value copied into another row or column does not open.
 * Format: `sb1.` + base64url(12-byte IV ‖ 16-byte tag ‖ ciphertext).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'sb1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Length of the master key in bytes (AES-256). */
export const MASTER_KEY_BYTES = 32;

/** A sealed value that does not open: wrong master key, wrong context, or tampered. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== MASTER_KEY_BYTES) throw new Error(`the master key must be ${MASTER_KEY_BYTES} bytes, got ${masterKey.length}`);
    this.key = Buffer.from(masterKey);
  }

  /** A box with a fresh random key (an in-memory database, whose secrets die with the process). */
  static ephemeral(): SecretBox {
    return new SecretBox(randomBytes(MASTER_KEY_BYTES));
  }

  /** Whether `value` has the sealed format (it may still fail to open). */
  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  /** Seal `plaintext` for storage, bound to `context`. */
  seal(plaintext: Buffer | string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Open a value sealed for `context`; throws `SecretBoxError` if it does not open. */
  open(sealed: string, context: string): Buffer {
    if (!SecretBox.isSealed(sealed)) throw new SecretBoxError('not a sealed value');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SecretBoxError(`sealed value for ${context} does not open (another master key, or tampered)`);
    }
  }

  /** `open` as UTF-8 text. */
  openText(sealed: string, context: string): string {
    return this.open(sealed, context).toString('utf8');
  }

  /**
   * A fingerprint of the master key (not the key): stored in the database so a replica started
   * with a different master key is refused at start instead of failing on every secret later.
   */
  keyCheck(): string {
    return createHmac('sha256', this.key).update('forecast master key check v1').digest('hex').slice(0, 32);
  }

  /** Whether `check` is this key's fingerprint (constant time). */
  matchesKeyCheck(check: string): boolean {
    const mine = Buffer.from(this.keyCheck());
    const theirs = Buffer.from(check);
    return mine.length === theirs.length && timingSafeEqual(mine, theirs);
  }
}
