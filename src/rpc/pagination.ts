/**
 * Cursor pagination (API.md section 10). Page size: default 50, max 200 (larger → 200, on REST
 * also beyond int32), negative or non-integer → 400. Cursors are opaque and tamper-evident:
 * base64url(JSON position) + "." + HMAC-SHA256 over (account, query fingerprint, position) with a
 * server secret shared by all replicas, so a cursor only works for the account and the exact
 * query that produced it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidArgument, ServiceError } from './errors';

/**
 * The request field that holds the page size, in every List method (AIP-158). The REST gateway
 * reads a positive value beyond int32 there as the largest int32, so it is coerced as well.
 */
export const PAGE_SIZE_FIELD = 'page_size';
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
/** Longest cursor accepted (ours are far shorter): anything longer is refused unread. */
export const MAX_CURSOR_CHARS = 1024;
/** A cursor is base64url(position) "." base64url(18-byte MAC), nothing before, between or after. */
const CURSOR_SHAPE = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{24})$/;

/** The page size to use for a requested one (0 = default). */
export function pageSize(requested: number | undefined): number {
  const n = requested ?? 0;
  if (!Number.isInteger(n) || n < 0) throw invalidArgument('page_size', `must be a non-negative integer, got ${n}`);
  if (n === 0) return DEFAULT_PAGE_SIZE;
  return Math.min(n, MAX_PAGE_SIZE);
}

/** Encodes and verifies cursors. */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  /** A cursor for `position` within `query` (any stable string naming the query and its filters). */
  encode(accountId: string, query: string, position: unknown): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${this.mac(accountId, query, payload)}`;
  }

  /** The position in a cursor, or 400 `invalid_cursor` if it was altered or belongs elsewhere. */
  decode<T>(accountId: string, query: string, cursor: string): T {
    const bad = () => new ServiceError('invalid_cursor', 'cursor is invalid, or was issued for another query', { field: 'cursor' });
    // The exact shape first: base64url decoding skips characters it does not know, so junk
    // after the signature would otherwise still verify.
    const shape = cursor.length <= MAX_CURSOR_CHARS ? CURSOR_SHAPE.exec(cursor) : null;
    if (!shape) throw bad();
    const [, payload, signature] = shape;
    const given = Buffer.from(signature, 'utf8');
    const expected = Buffer.from(this.mac(accountId, query, payload), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as T;
    } catch {
      throw bad();
    }
  }

  private mac(accountId: string, query: string, payload: string): string {
    return createHmac('sha256', this.secret)
      .update(`${accountId}\n${query}\n${payload}`)
      .digest()
      .subarray(0, 18)
      .toString('base64url');
  }
}

/**
 * Take `size + 1` fetched rows, return the page and whether more follow. With `bytes`, the page
 * also ends before the row that would take its rows' `bytes` past `maxBytes` (at least one row).
 */
export function splitPage<T>(rows: T[], size: number, bytes?: { readonly of: (row: T) => number; readonly maxBytes: number }): { page: T[]; more: boolean } {
  let end = Math.min(size, rows.length);
  if (bytes) {
    let total = 0;
    for (let i = 0; i < end; i++) {
      total += bytes.of(rows[i]);
      if (i > 0 && total > bytes.maxBytes) end = i;
    }
  }
  return end < rows.length ? { page: rows.slice(0, end), more: true } : { page: rows, more: false };
}

/**
 * Most bytes of items on one page of a list whose items can be large (manifests). Why: a default
 * gRPC client receives messages of at most 4 MiB (found by QA: a page of 200 manifests of a wide
 * entity was 4.1 MB, refused by grpc-js's default client, while REST served it).
 */
export const MAX_PAGE_BYTES = 3 * 1024 * 1024;
