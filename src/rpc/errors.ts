/**
 * One error class, one closed code set, one code → status table (API.md section 4).
 * Feature code throws `ServiceError` subclasses that carry identifiers; the pipeline
 * normalises anything else with `ServiceError.from`, so clients only ever see these codes.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { EngineError, InsufficientDataError, InvalidSeriesError } from '../engine/errors';

/** The closed set of error codes of the v1 contract. */
export type ErrorCode =
  | 'invalid_argument'
  | 'invalid_cursor'
  | 'failed_precondition'
  | 'insufficient_data'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'already_exists'
  | 'idempotency_key_in_use'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'quota_exceeded'
  | 'internal'
  | 'unavailable'
  | 'deadline_exceeded';

/** HTTP status and gRPC status of each code; the gRPC→HTTP pairs follow grpc-gateway's table. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, { http: number; grpc: GrpcStatus }>> = {
  invalid_argument: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT }, // malformed or out-of-range input
  invalid_cursor: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT }, // cursor tampered, expired or from another query
  failed_precondition: { http: 400, grpc: GrpcStatus.FAILED_PRECONDITION }, // 400 not 412, as grpc-gateway and Envoy map it
  insufficient_data: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION }, // too few observations to forecast
  unauthenticated: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED }, // missing/malformed/unknown/revoked/expired key
  permission_denied: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED }, // valid key without the scope
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND }, // absent, or another account's (indistinguishable)
  method_not_allowed: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED }, // known path, other HTTP method
  already_exists: { http: 409, grpc: GrpcStatus.ALREADY_EXISTS }, // e.g. email already registered
  idempotency_key_in_use: { http: 409, grpc: GrpcStatus.ABORTED }, // first request with this key still running
  payload_too_large: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED }, // body, message or stream over its byte limit
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT }, // not application/json
  idempotency_key_reused: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT }, // same key, different request
  quota_exceeded: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED }, // monthly quota used up
  internal: { http: 500, grpc: GrpcStatus.INTERNAL }, // a bug: details go to the log, never to the client
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE }, // shutting down or dependency down; retry
  deadline_exceeded: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED }, // the caller's deadline passed
};

/**
 * Longest error message sent, in characters. Messages quote user input only through `quote`,
 * so this is a last line of defence: an error travels in gRPC trailers (twice: `grpc-message`
 * and the status details), and trailers larger than the peer's header-list limit (8–16 KiB)
 * make it refuse the whole stream, and with it other calls on the channel.
 */
export const MAX_MESSAGE_CHARS = 1000;
/** Longest string value kept in `details` (same reason). */
export const MAX_DETAIL_CHARS = 200;
/** How much of a user's value a message quotes. */
export const QUOTE_CHARS = 64;

/** Code points an error message never carries raw: controls, format characters (bidi overrides), unassigned, private use, lone surrogates, U+FFFD. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}\uFFFD]/gu;

/**
 * `text` with every non-printable code point written as a `\uXXXX` escape, so that a message
 * quoting request bytes (a JSON parser's error, a compressed body) shows them legibly and
 * harmlessly. `ServiceError` applies it to its message and to the strings of its details.
 */
export function printable(text: string): string {
  return text.replace(NOT_PRINTABLE, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/**
 * A user-supplied value as a message quotes it: JSON-quoted, at most `max` characters of it,
 * with `…` and the full length when cut (`"aaaa…" (40000 characters)`).
 */
export function quote(value: string, max = QUOTE_CHARS): string {
  const text = String(value);
  if (text.length <= max) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, max) + '…')} (${text.length} characters)`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** `details` with every string value cut to `MAX_DETAIL_CHARS` (nested values too). */
function clipDetails(details: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!details) return details;
  const visit = (v: unknown): unknown => {
    if (typeof v === 'string') return clip(printable(v), MAX_DETAIL_CHARS);
    if (Array.isArray(v)) return v.slice(0, 20).map(visit);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).slice(0, 20).map(([k, x]) => [clip(printable(k), 64), visit(x)]));
    return v;
  };
  return visit(details) as Record<string, unknown>;
}

/** An error the client may see: code, message naming the offending field/value, optional details. */
export class ServiceError extends Error {
  /** Extra JSON-safe facts for the client (e.g. `{ have: 3, need: 8 }`); strings cut to `MAX_DETAIL_CHARS`. */
  readonly details?: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    /** Response headers this error carries (e.g. `Retry-After`). */
    readonly headers?: Record<string, string>,
    options?: { cause?: unknown },
  ) {
    super(clip(printable(message), MAX_MESSAGE_CHARS), options);
    this.name = 'ServiceError';
    this.details = clipDetails(details);
  }

  get httpStatus(): number {
    return ERROR_STATUS[this.code].http;
  }

  get grpcStatus(): GrpcStatus {
    return ERROR_STATUS[this.code].grpc;
  }

  /** Normalise anything caught. Unknown errors become `internal` with the original as `cause`. */
  static from(err: unknown): ServiceError {
    if (err instanceof ServiceError) return err;
    if (err instanceof InsufficientDataError) {
      return new ServiceError('insufficient_data', err.message, { have: err.have, need: err.need });
    }
    if (err instanceof InvalidSeriesError) return new ServiceError('failed_precondition', err.message);
    // A call's signal aborted without a reason of ours (the client went away).
    if (err instanceof Error && err.name === 'AbortError') return new ClientCancelledError(err);
    if (err instanceof EngineError) return new ServiceError('internal', 'internal error', undefined, undefined, { cause: err });
    return new ServiceError('internal', 'internal error', undefined, undefined, { cause: err });
  }
}

/**
 * The client went away before the answer (a cancelled gRPC call, an HTTP request whose
 * connection closed mid-body): `unavailable`, whichever protocol (the closed code set has no
 * `cancelled`, and no client is left to read the answer anyway). The pipeline logs it at info,
 * without a stack, not as an internal error: nothing is wrong with the service.
 */
export class ClientCancelledError extends ServiceError {
  constructor(cause?: unknown) {
    super('unavailable', 'the client cancelled the call', undefined, undefined, { cause });
  }
}

/** Shorthand for the commonest error: 400 naming the field and what is wrong with it. */
export function invalidArgument(field: string, problem: string): ServiceError {
  return new ServiceError('invalid_argument', `${field}: ${problem}`, { field });
}

/** 404 for a resource of a kind, named by its identifier. */
export class NotFoundError extends ServiceError {
  constructor(kind: string, id: string) {
    super('not_found', `${kind} ${quote(id)} not found`, { [kind]: id });
  }
}

/** 413: `what` (a request body, a message, a stream) is over its limit of `limit` bytes. */
export function payloadTooLarge(what: string, limit: number): ServiceError {
  return new ServiceError('payload_too_large', `${what} exceeds the limit of ${limit} bytes`, { limit });
}
