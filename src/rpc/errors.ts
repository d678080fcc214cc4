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
  payload_too_large: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED }, // body over 1 MiB
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT }, // not application/json
  idempotency_key_reused: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT }, // same key, different request
  quota_exceeded: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED }, // monthly quota used up
  internal: { http: 500, grpc: GrpcStatus.INTERNAL }, // a bug: details go to the log, never to the client
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE }, // shutting down or dependency down; retry
  deadline_exceeded: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED }, // the caller's deadline passed
};

/** An error the client may see: code, message naming the offending field/value, optional details. */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra JSON-safe facts for the client (e.g. `{ have: 3, need: 8 }`). */
    readonly details?: Record<string, unknown>,
    /** Response headers this error carries (e.g. `Retry-After`). */
    readonly headers?: Record<string, string>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ServiceError';
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
    if (err instanceof EngineError) return new ServiceError('internal', 'internal error', undefined, undefined, { cause: err });
    return new ServiceError('internal', 'internal error', undefined, undefined, { cause: err });
  }
}

/** Shorthand for the commonest error: 400 naming the field and what is wrong with it. */
export function invalidArgument(field: string, problem: string): ServiceError {
  return new ServiceError('invalid_argument', `${field}: ${problem}`, { field });
}

/** 404 for a resource of a kind, named by its identifier. */
export class NotFoundError extends ServiceError {
  constructor(kind: string, id: string) {
    super('not_found', `${kind} ${JSON.stringify(id)} not found`, { [kind]: id });
  }
}
