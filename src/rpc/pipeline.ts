/**
 * The one call pipeline (STYLE 2). Both transports hand every call here; it owns request ids,
 * the contract-version header, authentication and scopes, the interceptors that later features
 * add (quota, idempotency), deadlines, error normalisation and the access log. Nothing here
 * knows gRPC or HTTP.
 */
import { authenticate, requireScope, type Principal } from '../accounts/auth';
import type { AccountStore } from '../accounts/account-store';
import type { Clock } from '../clock';
import { newId } from '../ids';
import type { Logger } from '../log';
import type { CallContext, IncomingCall } from './context';
import { ClientCancelledError, ServiceError } from './errors';
import { checkedStream, checkStringLengths } from './limits';
import type { Deprecation, MethodEntry } from './method';

const NEVER_ABORTED = new AbortController().signal;
/** Longest delay `setTimeout` honours (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The contract version served in `API-Version` and by GetVersion. */
export const API_VERSION = '1.0.0';

/** What a call produced: a response or an error, plus the headers to send either way. */
export type CallOutcome<Res> =
  | { readonly ok: true; readonly response: Res; readonly headers: Record<string, string> }
  | { readonly ok: false; readonly error: ServiceError; readonly headers: Record<string, string> };

/** A call about to run: the method, its context, and how to run it. */
export interface Invocation {
  readonly entry: MethodEntry;
  readonly ctx: CallContext;
  /**
   * Binary encoding of the request, computed on demand, for fingerprinting (idempotency). For a
   * client stream this reads the whole stream first (it is then replayed to the endpoint): each
   * message's encoding, length-prefixed.
   */
  requestBytes(): Promise<Buffer | undefined>;
  /** Response headers set so far. */
  responseHeaders(): Readonly<Record<string, string>>;
}

/**
 * Cross-cutting behaviour around every call, run in order after authentication. `next` runs
 * the rest of the chain and the endpoint.
 */
export type Interceptor = (call: Invocation, next: () => Promise<unknown>) => Promise<unknown>;

export interface PipelineDeps {
  readonly accounts: AccountStore;
  readonly clock: Clock;
  readonly log: Logger;
  readonly interceptors?: readonly Interceptor[];
  /**
   * Headers that describe the caller's account on every answer to a call whose key is known
   * (the quota's `RateLimit` headers), added once the call has its outcome, success or error
   * (a 403, a 400 from decoding, a 404 from the endpoint, an idempotent replay alike). `headers`
   * are those set so far: what they already say is not asked again. On a public method the
   * caller is the owner of a valid key sent with it (an invalid one is ignored there: the method
   * needs none). Not asked once the call's deadline has passed (the 504 goes out at once); a
   * failure is logged and the answer goes out without them.
   */
  readonly describeCaller?: (caller: Principal, headers: Readonly<Record<string, string>>) => Promise<Record<string, string>>;
}

export class Pipeline {
  private readonly interceptors: Interceptor[];

  constructor(
    private readonly deps: PipelineDeps,
    readonly methods: ReadonlyMap<string, MethodEntry>,
  ) {
    this.interceptors = [...(deps.interceptors ?? [])];
  }

  /** Add an interceptor at the end of the chain (before the endpoint). */
  use(interceptor: Interceptor): void {
    this.interceptors.push(interceptor);
  }

  /**
   * Run a unary call. `decode` yields the request; it runs after authentication, so a caller
   * without a valid key learns nothing from how its input is judged (401 before 400), and a
   * transport may read the request only then (REST reads the body in `decode`: nothing of an
   * unauthenticated upload is buffered).
   */
  unary(entry: MethodEntry, decode: () => unknown, incoming: IncomingCall): Promise<CallOutcome<unknown>> {
    const endpoint = entry.endpoint;
    if (!('handle' in endpoint)) throw new Error(`${entry.path} is client-streaming`);
    let request: unknown;
    let bytes: Buffer | undefined;
    return this.invoke(
      entry,
      incoming,
      async () => {
        request = await decode();
        checkStringLengths(request);
        return request;
      },
      (ctx) => endpoint.handle(request, ctx),
      async () => (bytes ??= entry.definition.requestSerialize(request)),
    );
  }

  /**
   * Run a client-streaming call; decoding errors surface while the endpoint iterates. The
   * endpoint sees the stream end only when it really ended: once the call's signal has aborted
   * (the client cancelled, the deadline passed) the stream fails with the abort's reason, even
   * where the transport ended it as if the client had half-closed (grpc-js does on a cancel), so
   * an endpoint that writes when its stream ends never writes a cancelled stream.
   */
  clientStream(entry: MethodEntry, stream: AsyncIterable<unknown>, incoming: IncomingCall): Promise<CallOutcome<unknown>> {
    const endpoint = entry.endpoint;
    if (!('handleStream' in endpoint)) throw new Error(`${entry.path} is unary`);
    let requests: AsyncIterable<unknown> | undefined;
    const requestsOf = (ctx: CallContext) => (requests ??= untilAborted(checkedStream(stream), ctx.signal));
    let buffered: unknown[] | undefined;
    const replay = async function* (items: unknown[]) {
      yield* items;
    };
    return this.invoke(
      entry,
      incoming,
      () => undefined,
      (ctx) => endpoint.handleStream(buffered ? replay(buffered) : requestsOf(ctx), ctx),
      async (ctx) => {
        if (!buffered) {
          buffered = [];
          for await (const r of requestsOf(ctx)) buffered.push(r);
        }
        return Buffer.concat(
          buffered.flatMap((r) => {
            const b = entry.definition.requestSerialize(r);
            const len = Buffer.alloc(4);
            len.writeUInt32BE(b.length);
            return [len, b];
          }),
        );
      },
      endpoint.admit ? (ctx) => endpoint.admit!(ctx) : undefined,
    );
  }

  private async invoke(
    entry: MethodEntry,
    incoming: IncomingCall,
    decode: () => unknown | Promise<unknown>,
    run: (ctx: CallContext) => Promise<unknown>,
    requestBytes: (ctx: CallContext) => Promise<Buffer | undefined>,
    admit?: (ctx: CallContext) => () => void,
  ): Promise<CallOutcome<unknown>> {
    const { clock, log } = this.deps;
    const started = log.enabled('debug') ? process.hrtime.bigint() : 0n;
    const requestId = newId('req', clock);
    const headers: Record<string, string> = { 'request-id': requestId, 'api-version': API_VERSION };
    // An AbortController per call is measurable on hot paths: make one only when a deadline can
    // abort the call; otherwise the client's own signal (or a never-aborted one) serves.
    const deadline = incoming.deadline;
    const abort = deadline !== undefined ? new AbortController() : undefined;
    // A client that goes away after the deadline went away because of it (grpc-js ends such a call itself).
    const onClientAbort = () =>
      abort?.abort(deadline !== undefined && Date.now() >= deadline ? deadlineError() : new ClientCancelledError());
    if (abort) incoming.signal?.addEventListener('abort', onClientAbort, { once: true });
    const ctx = new Context(requestId, entry.path, clock, log, incoming, abort, headers);
    let timer: NodeJS.Timeout | undefined;
    let release: (() => void) | undefined;
    // Whose account the answer describes (describeCaller): the principal, or on a public method
    // the owner of a valid key sent anyway (never handed to the endpoint: the method needs none).
    let caller: Principal | undefined;
    let outcome: CallOutcome<unknown>;
    try {
      const access = entry.endpoint.access;
      if (access !== 'public') {
        caller = ctx.principal = await authenticate(incoming.header('authorization'), this.deps.accounts, clock, incoming.protocol);
        if (access !== 'authenticated') requireScope(ctx.principal, access);
        incoming.claim?.(caller);
      } else if (this.deps.describeCaller && incoming.header('authorization') !== undefined) {
        caller = await authenticate(incoming.header('authorization'), this.deps.accounts, clock, incoming.protocol).catch(() => undefined);
      }
      // before anything reads a stream's body (`ClientStreamEndpoint.admit`)
      release = admit?.(ctx);
      const request = await decode();
      if (entry.deprecation) addDeprecationHeaders(headers, entry.deprecation);
      for (const field of entry.deprecatedFields) {
        if (request !== undefined && isSet((request as Record<string, unknown>)[field.localName])) addDeprecationHeaders(headers, field.deprecation);
      }
      const invocation: Invocation = { entry, ctx, requestBytes: () => requestBytes(ctx), responseHeaders: () => headers };
      const chain = (i: number): Promise<unknown> =>
        i < this.interceptors.length ? this.interceptors[i](invocation, () => chain(i + 1)) : run(ctx);
      // Deadlines are wall-clock instants set by the transport, not business time: compare them
      // with the real clock even when tests inject another one. A call whose deadline has passed
      // never starts (nothing runs, nothing is written).
      const remaining = deadline === undefined ? Infinity : deadline - Date.now();
      if (remaining <= 0) throw new ServiceError('deadline_exceeded', 'the call deadline had passed before it started');
      let work = chain(0);
      // (A deadline beyond what a timer can hold, ~24.8 days, is as good as none.)
      if (remaining < MAX_TIMER_MS) {
        // At the deadline the call's signal aborts (with a deadline_exceeded reason). A read then
        // answers 504 at once: the work it abandons can only fail quietly (Promise.race handles
        // its rejection). A method that may write answers its real outcome instead: either the
        // write had committed (the answer says what was done) or it saw the signal before
        // committing (`Database.transaction` refuses to commit an aborted call's transaction)
        // and the 504 means nothing was done.
        const expired = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const err = deadlineError();
            abort?.abort(err);
            if (entry.readOnly) reject(err);
          }, remaining);
        });
        if (entry.readOnly) work = Promise.race([work, expired]);
      }
      const response = await work;
      this.access(entry, ctx, 'ok', started);
      outcome = { ok: true, response, headers };
    } catch (caught) {
      const error = ServiceError.from(caught);
      if (error.headers) for (const [k, v] of Object.entries(error.headers)) headers[k.toLowerCase()] = v;
      if (error.code === 'internal') log.error('internal error', { requestId, method: entry.path, error: caught });
      else if (error instanceof ClientCancelledError) log.info('call cancelled by the client', { requestId, method: entry.path, protocol: incoming.protocol });
      this.access(entry, ctx, error.code, started);
      outcome = { ok: false, error, headers };
    } finally {
      if (timer) clearTimeout(timer);
      if (abort) incoming.signal?.removeEventListener('abort', onClientAbort);
      release?.();
    }
    if (caller && this.deps.describeCaller && (deadline === undefined || Date.now() < deadline)) {
      try {
        for (const [k, v] of Object.entries(await this.deps.describeCaller(caller, headers))) headers[k.toLowerCase()] ??= v;
      } catch (error) {
        log.warn('could not describe the caller in the response headers', { requestId, method: entry.path, error });
      }
    }
    return outcome;
  }

  private access(entry: MethodEntry, ctx: CallContext, outcome: string, started: bigint): void {
    if (started === 0n) return; // debug logging is off
    this.deps.log.debug('call', {
      requestId: ctx.requestId,
      protocol: ctx.protocol,
      method: entry.path,
      account: ctx.principal?.accountId,
      outcome,
      ms: Number(process.hrtime.bigint() - started) / 1e6,
    });
  }
}

/**
 * A call's context. A class, not an object literal, on purpose: a literal with getters made per
 * call gets its own hidden class, which lives in old space and keeps each call's young objects
 * alive through scavenges (measured: half of all allocation promoted, 15–40 ms pauses); class
 * accessors live on the shared prototype.
 */
class Context implements CallContext {
  principal: Principal | undefined = undefined;
  readonly protocol: 'grpc' | 'rest';
  readonly deadline: number | undefined;

  constructor(
    readonly requestId: string,
    readonly method: string,
    readonly clock: Clock,
    readonly log: Logger,
    private readonly incoming: IncomingCall,
    private readonly abort: AbortController | undefined,
    private readonly headers: Record<string, string>,
  ) {
    this.protocol = incoming.protocol;
    this.deadline = incoming.deadline;
  }

  // Lazy: reading the client's signal may allocate (REST makes its controller on demand).
  get signal(): AbortSignal {
    return this.abort?.signal ?? this.incoming.signal ?? NEVER_ABORTED;
  }

  get peer(): string {
    return this.incoming.peer;
  }

  header(name: string): string | undefined {
    return this.incoming.header(name);
  }

  headerValues(name: string): readonly string[] {
    return this.incoming.headerValues(name);
  }

  setHeader(name: string, value: string): void {
    this.headers[name.toLowerCase()] = value;
  }
}

/**
 * `requests` until the call's `signal` aborts: from then on the stream fails with the abort's
 * reason (`deadline_exceeded`, or `unavailable` for a client that went away), whether the
 * transport ended it normally or with an error of its own.
 */
async function* untilAborted<T>(requests: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  try {
    for await (const r of requests) {
      signal.throwIfAborted();
      yield r;
    }
  } catch (err) {
    signal.throwIfAborted();
    throw err;
  }
  signal.throwIfAborted();
}

function deadlineError(): ServiceError {
  return new ServiceError('deadline_exceeded', 'the call deadline passed');
}

/** `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link rel="deprecation"` headers. */
function addDeprecationHeaders(headers: Record<string, string>, d: Deprecation): void {
  headers['deprecation'] = `@${Math.floor(d.since / 1000)}`;
  headers['sunset'] = new Date(d.sunset).toUTCString();
  headers['link'] = `<${d.link}>; rel="deprecation"; type="text/html"`;
}

/** A proto3 field counts as used when it differs from its default. */
function isSet(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false || value === '0') return false;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}
