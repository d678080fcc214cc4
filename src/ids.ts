/**
 * Identifiers: a prefix plus a ULID (Crockford base32 of 48-bit time + 80 random bits), so ids
 * sort by creation time (`q_01J…`, `req_01J…`). Randomness from node:crypto.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Random bytes are drawn from the CSPRNG in blocks: one system call per 400 ids, not one per id. */
let pool = Buffer.alloc(0);
let offset = 0;
function random10(): Buffer {
  if (offset + 10 > pool.length) {
    pool = randomBytes(4000);
    offset = 0;
  }
  offset += 10;
  return pool.subarray(offset - 10, offset);
}

/** A new ULID at the clock's time. */
export function ulid(clock: Clock): string {
  let t = Math.max(0, Math.floor(clock.now()));
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = random10();
  let rand = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rand += CROCKFORD[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return time + rand;
}

/** `prefix_` + ULID. */
export function newId(prefix: string, clock: Clock): string {
  return `${prefix}_${ulid(clock)}`;
}
