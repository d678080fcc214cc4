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
 * The budget is shared (found by review, on feeae21: two free accounts, each holding two bulk
 * streams at their 64 MiB limit and sending a byte every 29 s, held all of it, and every other
 * upload was refused for as long as they kept on; a bulk stream holds its rows until it commits,
 * all or nothing, so the bytes are real memory). A request's bytes count against the share of
 * whoever sends it, besides the budget:
 * - until the pipeline knows whose it is (after authentication, `Arrival.claim`), and for good on
 *   public methods, against the share of requests not claimed (`unclaimedShare`: anyone may send
 *   those, no key needed);
 * - once claimed, against its account's share (`accountShare`, or `freeAccountShare` on the free
 *   tier, which anyone may join), and a free account's also against the free tier's
 *   (`freeTierShare`).
 * Over an account's own share: 429 `quota_exceeded` with `Retry-After: 1` (its own doing, as its
 * third bulk stream at once); over the others: the 503. By default (config.ts) half the budget for
 * a paying account, a quarter for a free one, half for the free tier, a quarter unclaimed (each
 * at least one stream): anonymous callers and the free tier together leave a paying account at
 * least a quarter of the budget, one free account leaves other free accounts at least a quarter.
 * Paying accounts are not kept from each other beyond their half each.
 */
import type { Tier } from '../accounts/tiers';
import { ServiceError } from '../rpc/errors';

export interface IntakeLimits {
  /** Most bytes of requests still arriving, process-wide (`Config.maxPendingRequestBytes`). */
  readonly maxPendingBytes: number;
  /** Most of them the requests of one paying account may hold (`Config.pendingRequestShares.account`). */
  readonly accountShare: number;
  /** Most of them the requests of one free-tier account may hold (`Config.pendingRequestShares.freeAccount`). */
  readonly freeAccountShare: number;
  /** Most of them all free-tier accounts' requests together may hold (`Config.pendingRequestShares.freeTier`). */
  readonly freeTierShare: number;
  /** Most of them requests not (yet) claimed by an account may hold (`Config.pendingRequestShares.unclaimed`). */
  readonly unclaimedShare: number;
  /** Longest a read waits for a request's next bytes, in ms (`Config.requestIdleTimeoutMs`). */
  readonly idleTimeoutMs: number;
}

/** Whose a request is, once authenticated (a `Principal` is one). */
export interface Claimant {
  readonly accountId: string;
  readonly tier: Tier;
}

/** The budget of one process: both servers share one. */
export class RequestIntake {
  private held = 0;
  private readonly byAccount = new Map<string, number>();
  private freeHeld = 0;
  private unclaimedHeld = 0;

  constructor(readonly limits: IntakeLimits) {}

  /** Bytes of requests still arriving, now. */
  get pendingBytes(): number {
    return this.held;
  }

  /** Bytes of `accountId`'s requests still arriving, now. */
  pendingBytesOf(accountId: string): number {
    return this.byAccount.get(accountId) ?? 0;
  }

  /** One request starting to arrive; `what` names it in errors (`request body`, `request`). */
  open(what: string): Arrival {
    return new Arrival(this, what);
  }

  /**
   * Count `n` more bytes of `owner`'s requests (none: of requests not claimed; negative: let them
   * go); the refusal when the total or a share they count against is over its limit.
   */
  hold(n: number, owner?: Claimant): ServiceError | undefined {
    const limits = this.limits;
    this.held += n;
    if (!owner) {
      this.unclaimedHeld += n;
      if (n <= 0) return undefined;
      if (this.held > limits.maxPendingBytes) return overBudget('', limits.maxPendingBytes);
      return this.unclaimedHeld > limits.unclaimedShare ? overBudget(' from callers not yet authenticated', limits.unclaimedShare) : undefined;
    }
    const free = owner.tier === 'free';
    const mine = (this.byAccount.get(owner.accountId) ?? 0) + n;
    if (mine === 0) this.byAccount.delete(owner.accountId);
    else this.byAccount.set(owner.accountId, mine);
    if (free) this.freeHeld += n;
    if (n <= 0) return undefined;
    if (this.held > limits.maxPendingBytes) return overBudget('', limits.maxPendingBytes);
    const share = free ? limits.freeAccountShare : limits.accountShare;
    if (mine > share) return overShare(share);
    if (free && this.freeHeld > limits.freeTierShare) return overBudget(' from free-tier accounts', limits.freeTierShare);
    return undefined;
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
  private owner: Claimant | undefined;

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

  /** Count `n` bytes that arrived; over the budget or a share of it, the request is refused. */
  add(n: number): void {
    if (this.closed) return;
    this.held += n;
    const refused = this.intake.hold(n, this.owner);
    if (refused) return this.fail(refused);
    this.since = Date.now();
  }

  /**
   * The request is `owner`'s (the pipeline authenticated it): its bytes, those already held
   * too, count against the owner's share and its tier's from now on. Once.
   */
  claim(owner: Claimant): void {
    if (this.closed || this.owner) return;
    this.intake.hold(-this.held);
    this.owner = owner;
    const refused = this.intake.hold(this.held, owner);
    if (refused) this.fail(refused);
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
    this.intake.hold(-this.held, this.owner);
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

/** `from`: whose bytes are at their limit (empty: everyone's). */
function overBudget(from: string, limit: number): ServiceError {
  return new ServiceError(
    'unavailable',
    `the server is receiving as many request bytes${from} as it holds at once (${limit} bytes): retry in a moment`,
    { limit },
    { 'retry-after': '1' },
  );
}

/** The caller's own requests hold its share: 429, as other limits on one account's calls at once. */
function overShare(limit: number): ServiceError {
  return new ServiceError(
    'quota_exceeded',
    `your account's requests still arriving hold as many bytes as one account's may at once (${limit} bytes): retry when one of them has arrived`,
    { limit },
    { 'retry-after': '1' },
  );
}

function stalled(what: string, ms: number): ServiceError {
  return new ServiceError('deadline_exceeded', `${what}: nothing arrived for ${ms / 1000} s; a request must keep arriving until it ends`, { idle_timeout_ms: ms });
}
