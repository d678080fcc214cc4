/**
 * API key format (API.md section 3): `fk_live_` + 32 random base62 characters + a 6-character
 * base62 CRC32 of everything before it, so secret scanners recognise a key offline and a
 * mistyped key is refused without a database look-up. Only the SHA-256 of a key is stored
 * (a key has ~190 bits of entropy, so a fast hash is the right tool, as GitHub's tokens do).
 */
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'fk_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** Characters shown as a key's display prefix (`fk_live_` + 4). */
export const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 4;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH},}$`);

/** A new random key (shown once to its owner, never stored). */
export function generateApiKey(): string {
  let body = '';
  // Rejection sampling keeps every base62 character equally likely.
  while (body.length < RANDOM_LENGTH) {
    for (const b of randomBytes(48)) {
      if (b < 248 && body.length < RANDOM_LENGTH) body += BASE62[b % 62];
    }
  }
  const head = KEY_PREFIX + body;
  return head + checksum(head);
}

/** True when `key` has the format and its checksum matches (no database involved). */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key) || key.length < KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH) return false;
  const head = key.slice(0, -CHECKSUM_LENGTH);
  return checksum(head) === key.slice(-CHECKSUM_LENGTH);
}

/** SHA-256 (hex) of a key: what the database stores and looks up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Base62 of the CRC32 of `text`, left-padded to 6 characters (62^6 > 2^32). */
function checksum(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}
