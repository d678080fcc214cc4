/**
 * Which PostgreSQL failures are the database's, not the call's: the server unreachable,
 * restarting or shutting down, the connection lost, the pool unable to hand out a connection in
 * time, a statement cancelled by its timeout, a deadlock or serialization conflict between
 * replicas. Such a call answers 503 `unavailable` (gRPC UNAVAILABLE) with `Retry-After`, never
 * 500: retrying it later is right, and nothing it did was committed unless it was acknowledged.
 */
import { ServiceError } from '../rpc/errors';

/** How a failure bears on the database's availability. */
export type FailureKind =
  /** The server cannot be reached or is going away: every call fails until it is back. */
  | 'unreachable'
  /** This statement or transaction failed for a passing reason (timeout, conflict, a busy pool); others may succeed. */
  | 'transient';

/** SQLSTATE codes of a server that is going away or cannot take connections. */
const UNREACHABLE_STATES = new Set([
  '57P01', // admin_shutdown: "terminating connection due to administrator command"
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down, in recovery
  '53300', // too_many_connections
]);

/** SQLSTATE codes of a statement that failed for a passing reason. */
const TRANSIENT_STATES = new Set([
  '57014', // query_canceled: the statement timeout
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '25P03', // idle_in_transaction_session_timeout
  '53200', // out_of_memory
  '53100', // disk_full
]);

/** Node's socket errors of a connection that failed or broke. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT']);

/** Messages of `pg` and `pg-pool` for connections that broke (they carry no code). */
const BROKEN_CONNECTION = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|terminating connection/i;
/** `pg-pool`: no connection became free within `connectionTimeoutMillis` (the pool is busy, the server may be fine). */
const POOL_BUSY = /timeout exceeded when trying to connect/i;

/** How `err` (thrown by `pg`) bears on availability, or undefined for an error of the call itself (a constraint, bad SQL). */
export function classifyFailure(err: unknown): FailureKind | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE_STATES.has(code) || code.startsWith('08') || SOCKET_CODES.has(code)) return 'unreachable';
    if (TRANSIENT_STATES.has(code)) return 'transient';
  }
  if (POOL_BUSY.test(err.message)) return 'transient';
  if (BROKEN_CONNECTION.test(err.message)) return 'unreachable';
  if (err.cause !== undefined && err.cause !== err) return classifyFailure(err.cause);
  return undefined;
}

/** 503 `unavailable` for a call that failed because of the database (see the module comment). */
export class DatabaseUnavailableError extends ServiceError {
  constructor(
    readonly kind: FailureKind,
    cause: unknown,
  ) {
    super(
      'unavailable',
      kind === 'unreachable' ? 'the database is unavailable; retry shortly' : 'the database could not complete the call in time; retry shortly',
      undefined,
      { 'retry-after': '1' },
      { cause },
    );
  }
}
