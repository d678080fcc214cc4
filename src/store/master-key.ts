/**
 * The master key that seals secrets at rest (`store/secret-box.ts`), held outside the database:
 * - `MASTER_KEY`: 32 bytes as base64 or hex (e.g. `openssl rand -base64 32`), or
 * - `MASTER_KEY_FILE`: a file holding that text;
 * - neither, on an SQLite file database: the file `<database file>.master-key` beside it,
 *   created (mode 0600) on first start — back it up with the database: without it the sealed
 *   secrets (webhook secrets, signing keys) cannot be opened;
 * - neither, on an in-memory SQLite database: a random key that dies with the process;
 * - neither, on PostgreSQL: refused at start, since every replica must hold the same key.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { MASTER_KEY_BYTES, SecretBox } from './secret-box';

/** The configuration the master key is found from. */
export interface MasterKeyConfig {
  readonly databaseUrl: string;
  /** `MASTER_KEY`. */
  readonly masterKey?: string;
  /** `MASTER_KEY_FILE`. */
  readonly masterKeyFile?: string;
}

/** Parse a master key written as base64 (standard or url-safe) or hex; throws naming `source`. */
export function parseMasterKey(text: string, source: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : /^[A-Za-z0-9+/_-]+={0,2}$/.test(t) ? Buffer.from(t, 'base64') : Buffer.alloc(0);
  if (bytes.length !== MASTER_KEY_BYTES) throw new Error(`${source} must hold ${MASTER_KEY_BYTES} random bytes as base64 or hex (e.g. \`openssl rand -base64 32\`)`);
  return bytes;
}

/** The secret box for this configuration (see the module comment for where the key comes from). */
export function loadSecretBox(config: MasterKeyConfig): SecretBox {
  if (config.masterKey) return new SecretBox(parseMasterKey(config.masterKey, 'MASTER_KEY'));
  if (config.masterKeyFile) {
    if (!existsSync(config.masterKeyFile)) throw new Error(`MASTER_KEY_FILE ${config.masterKeyFile} does not exist`);
    return new SecretBox(parseMasterKey(readFileSync(config.masterKeyFile, 'utf8'), `MASTER_KEY_FILE ${config.masterKeyFile}`));
  }
  if (config.databaseUrl === 'sqlite::memory:') return SecretBox.ephemeral();
  if (config.databaseUrl.startsWith('sqlite:')) {
    const file = `${resolve(config.databaseUrl.slice('sqlite:'.length))}.master-key`;
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      // 'wx': never overwrite a key another process has just written.
      try {
        writeFileSync(file, randomBytes(MASTER_KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return new SecretBox(parseMasterKey(readFileSync(file, 'utf8'), `master key file ${file}`));
  }
  throw new Error('MASTER_KEY (or MASTER_KEY_FILE) is required with PostgreSQL: every replica must hold the same master key');
}
