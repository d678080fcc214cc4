/**
 * What the servers hold of requests still arriving, both protocols together, and how long a read
 * waits for a request's next bytes. Found by QA (on a1f0179): any free key could hold about 1 MiB
 * per REST connection by sending all of a body but its last bytes (1,500 connections: 1.8 GB), an
 * authenticated gRPC stream 16 MiB, and nothing ever let go of them.
 *
 * A request's bytes count from their arrival until it has arrived whole (the body ended, the
 * stream half-closed) or its call ended. A request whose bytes take the total over the budget is
 * refused with 503 `unavailable` and `Retry-After: 1`, and its bytes stop counting; the others go
 * on. A read that waits `idleTimeoutMs` without a byte fails with 504 `deadline_exceeded`: a
 * client that stops sending mid-request gives its share back. The wait counts only while the
 * server is reading (an endpoint busy with the messages before is no stalled client).
 *
 * What the budget is not: fair. A client that keeps bytes trickling in can hold much of it; then
 * others' uploads are refused (503, retryable) until it lets go. It bounds the memory, so that no
 * client can take the process down; sharing it by account would need the account before the
 * body is read, which the transports do not see.
 */
import { ServiceError } from '../rpc/errors';

export interface IntakeLimits {
  /** Most bytes of requests still arriving, process-wide (`Config.maxPendingRequestBytes`). */
  readonly maxPendingBytes: number;
  /** Longest a read waits for a request's next bytes, in ms (`Config.requestIdleTimeoutMs`). */
  readonly idleTimeoutMs: number;
}

/** The budget of one process: both servers share one. */
export class RequestIntake {
  private held = 0;

  constructor(readonly limits: IntakeLimits) {}

  /** Bytes of requests still arriving, now. */
  get pendingBytes(): number {
    return this.held;
  }

  /** One request starting to arrive; `what` names it in errors (`request body`, `request`). */
  open(what: string): Arrival {
    return new Arrival(this, what);
  }

  /** Count `n` more bytes (negative: let them go); false once the total is over the budget. */
  hold(n: number): boolean {
    this.held += n;
    return this.held <= this.limits.maxPendingBytes;
  }
}

/** One request's bytes while it arrives. Closing it (idempotent) lets them go. */
export class Arrival {
  private held = 0;
  private closed = false;
  private failure: ServiceError | undefined;
  private waiter: { reject: (error: ServiceError) => void; timer: NodeJS.Timeout } | undefined;
  /** When the current read began or its last byte came (wall clock, as the transports' deadlines). */
  private since = 0;
  private readonly onFailure: ((error: ServiceError) => void)[] = [];

  constructor(
    private readonly intake: RequestIntake,
    private readonly what: string,
  ) {}

  /** Why the request was refused (over the budget, stalled), if it was. */
  get failed(): ServiceError | undefined {
    return this.failure;
  }

  /** Call `listener` once the request is refused (the transport may stop its call sooner). */
  whenFailed(listener: (error: ServiceError) => void): void {
    this.onFailure.push(listener);
  }

  /** Count `n` bytes that arrived; over the budget, the request is refused. */
  add(n: number): void {
    if (this.closed) return;
    this.held += n;
    if (!this.intake.hold(n)) return this.fail(overBudget(this.intake.limits.maxPendingBytes));
    this.since = Date.now();
  }

  /** Throw the refusal, if the request was refused. */
  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  /**
   * `next` (the read of the request's next bytes), unless the request is refused first: the idle
   * limit passes without a byte arriving (`add` restarts it), or its bytes go over the budget.
   */
  wait<T>(next: Promise<T>): Promise<T> {
    if (this.failure) {
      next.catch(() => undefined);
      return Promise.reject(this.failure);
    }
    if (this.closed) return next;
    return new Promise<T>((resolve, reject) => {
      const ms = this.intake.limits.idleTimeoutMs;
      this.since = Date.now();
      // Bytes that came meanwhile put the limit off: look again then, rather than re-arm per byte.
      const check = () => {
        const idle = Date.now() - this.since;
        if (idle >= ms) return this.fail(stalled(this.what, ms));
        waiter.timer = setTimeout(check, ms - idle).unref();
      };
      const waiter = { reject, timer: setTimeout(check, ms).unref() };
      this.waiter = waiter;
      const done = () => {
        if (this.waiter !== waiter) return;
        clearTimeout(waiter.timer);
        this.waiter = undefined;
      };
      next.then(
        (value) => {
          done();
          resolve(value);
        },
        (err: unknown) => {
          done();
          reject(err);
        },
      );
    });
  }

  /** The request arrived whole, or its call ended: its bytes no longer count. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.intake.hold(-this.held);
    this.held = 0;
    // (A timer left running would keep the read, and what it reads from, alive until it fires.)
    if (this.waiter) clearTimeout(this.waiter.timer);
  }

  private fail(error: ServiceError): void {
    if (this.failure || this.closed) return;
    this.failure = error;
    this.close();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
    for (const listener of this.onFailure) listener(error);
  }
}

function overBudget(limit: number): ServiceError {
  return new ServiceError(
    'unavailable',
    `the server is receiving as many request bytes as it holds at once (${limit} bytes): retry in a moment`,
    { limit },
    { 'retry-after': '1' },
  );
}

function stalled(what: string, ms: number): ServiceError {
  return new ServiceError('deadline_exceeded', `${what}: nothing arrived for ${ms / 1000} s; a request must keep arriving until it ends`, { idle_timeout_ms: ms });
}
