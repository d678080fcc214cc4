/** What a handler knows about the call, whichever protocol it came over. */
import type { Principal } from '../accounts/auth';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import { ServiceError } from './errors';

/** The transport's view of an incoming call, handed to the pipeline. */
export interface IncomingCall {
  readonly protocol: 'grpc' | 'rest';
  /**
   * Request header / metadata value by lower-case name. A header or key sent more than once
   * gives all its values joined by `, ` (so a repeated `authorization` is malformed, not the
   * first one alone).
   */
  header(name: string): string | undefined;
  /** Every value of a request header / metadata key, one per line or entry it was sent on. */
  headerValues(name: string): readonly string[];
  /** Client address, for logs and per-address limits. */
  readonly peer: string;
  /** Absolute deadline (epoch ms) if the client set one. */
  readonly deadline?: number;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
  /**
   * The caller is authenticated: the request's bytes still to arrive count against its account's
   * share of the transports' budget from now on (transport/request-intake.ts). Before the request
   * is read.
   */
  claim?(caller: Principal): void;
}

/** The context every endpoint receives. */
export interface CallContext {
  readonly requestId: string;
  readonly protocol: 'grpc' | 'rest';
  /** gRPC path of the method. */
  readonly method: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** Aborted when the client goes away or the deadline passes. */
  readonly signal: AbortSignal;
  readonly deadline?: number;
  readonly peer: string;
  /** The authenticated caller (undefined only for `public` methods). */
  principal: Principal | undefined;
  header(name: string): string | undefined;
  /** Every value of a header / metadata key, one per line or entry (`IncomingCall.headerValues`). */
  headerValues(name: string): readonly string[];
  /** Add a response header (REST) / metadata entry (gRPC). Lower-case names. */
  setHeader(name: string, value: string): void;
}

/** The caller's account id; throws 401 for an unauthenticated context (a wiring bug otherwise). */
export function accountOf(ctx: CallContext): string {
  if (!ctx.principal) throw new ServiceError('unauthenticated', 'this method needs an API key');
  return ctx.principal.accountId;
}
