/**
 * The webhook dispatcher: claims due deliveries (`delivery-store.ts`), signs each attempt with the
 * subscription's current secrets (`webhook-signature.ts`), POSTs it through the SSRF guard
 * (`webhook-sender.ts`), records the attempt and schedules the next one (`retry-schedule.ts`).
 * Up to `CONCURRENCY` attempts run at once; a free slot claims the next due delivery at once.
 * Between deliveries it sleeps until the next one is due (at most `POLL_MS`, so deliveries
 * written by other replicas are seen), or until poked by a new event in this process. Times come
 * from the injected clock; a test that moves a manual clock pokes the dispatcher after.
 */
import type { Clock } from '../clock';
import { InFlight } from '../in-flight';
import type { Logger } from '../log';
import { BackgroundLoop, type RoundResult } from './background-loop';
import type { ClaimedDelivery, DeliveryStore } from './delivery-store';
import { MAX_ATTEMPTS, nextRetryDelay, retryAfterMs } from './retry-schedule';
import type { SubscriptionStore } from './subscription-store';
import { postWebhook, type AttemptResult, type SenderOptions } from './webhook-sender';
import { signatureHeaders } from './webhook-signature';

/** Attempts in flight at once, per process. */
export const CONCURRENCY = 32;
/**
 * Attempts of one account in flight at once, per process. Why: found by QA, one free account's 90
 * subscriptions to a receiver that never answers held all 32 slots (10 s an attempt), and another
 * account's delivery waited behind 1,505 of them for about 15 minutes; a slow receiver should
 * delay only its owner.
 */
export const ACCOUNT_CONCURRENCY = 4;
/** Longest sleep between looks at the table. */
export const POLL_MS = 1000;

/** Why a subscription is paused by the dispatcher. */
export const GONE_REASON = 'the endpoint answered 410 Gone';

/** What the dispatcher works with. */
export interface DispatcherDeps {
  readonly deliveries: DeliveryStore;
  readonly subscriptions: SubscriptionStore;
  readonly clock: Clock;
  readonly log: Logger;
  readonly sender: SenderOptions;
  /** `WEBHOOK_RETRY_BASE_MS`. */
  readonly retryBaseMs: number;
  /** This process's claim owner id. */
  readonly owner: string;
  /** Uniform [0, 1) for the jitter (default Math.random). */
  readonly random?: () => number;
}

/** See the file comment. */
export class WebhookDispatcher {
  private running = false;
  private readonly inflight = new Set<Promise<void>>();
  /** Attempts in flight per account (`ACCOUNT_CONCURRENCY`). */
  private readonly perAccount = new InFlight();
  private pending: NodeJS.Immediate | undefined;
  private readonly loop: BackgroundLoop;

  constructor(private readonly deps: DispatcherDeps) {
    this.loop = new BackgroundLoop({
      round: () => this.fill(),
      sleepMs: () => this.sleepMs(),
      onError: (error) => deps.log.warn('webhook dispatch failed; retrying', { error }),
    });
  }

  /** The claim lasts past the attempt's timeout with a margin, so a live owner never loses it. */
  private get leaseMs(): number {
    return this.deps.sender.timeoutMs + 30_000;
  }

  /** Start sending. */
  start(): void {
    this.running = true;
    this.loop.start();
  }

  /**
   * Look for due deliveries now (after writing one, or after moving a manual clock). Pokes in one
   * turn of the event loop make one claim (why: each finished attempt pokes, and a claim per
   * attempt was most of the dispatcher's database work).
   */
  poke(): void {
    if (!this.running || this.pending) return;
    this.pending = setImmediate(() => {
      this.pending = undefined;
      this.loop.kick();
    });
  }

  /**
   * Resolves once nothing is in flight and nothing is due at the clock's current time. For tests
   * and the benchmark: synchronise on the dispatcher, never sleep.
   */
  settled(): Promise<void> {
    return this.loop.settled();
  }

  /** Stop claiming; wait for attempts in flight (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.pending) clearImmediate(this.pending);
    await this.loop.stop();
    await Promise.all([...this.inflight]);
  }

  /**
   * Claim due deliveries for the free slots and start their attempts, at most
   * `ACCOUNT_CONCURRENCY` of one account in flight: accounts at it are left out of the claim, and
   * what a claim brings beyond an account's share is given back at once. Accounts with nothing in
   * flight are claimed for first. Why: found by QA, eight accounts' receivers that never answer
   * hold all 32 slots (4 each); oldest-due-first then gave every slot that freed to one of them
   * (their backlogs were due before anyone else's), so another account waited for their backlogs
   * rather than for the next attempt to end.
   */
  private async fill(): Promise<RoundResult> {
    const { deliveries, owner } = this.deps;
    let started = 0;
    for (;;) {
      const free = CONCURRENCY - this.inflight.size;
      if (free <= 0) return 'busy';
      const full = this.perAccount.atLeast(ACCOUNT_CONCURRENCY);
      const busy = this.perAccount.atLeast(1);
      const now = this.deps.clock.now();
      // idle accounts first, where the accounts in flight could take every free slot themselves
      // (else one claim serves all: an account past its share gives the rest back, and the next
      // claim leaves it out); a second statement then, only under contention
      const idle = this.perAccount.spare(ACCOUNT_CONCURRENCY) >= free ? await deliveries.claimDue(owner, now, this.leaseMs, free, busy) : [];
      const claimed = idle.length < free ? [...idle, ...(await deliveries.claimDue(owner, now, this.leaseMs, free - idle.length, full))] : idle;
      const givenBack: string[] = [];
      for (const d of claimed) {
        if (this.perAccount.count(d.accountId) >= ACCOUNT_CONCURRENCY) {
          givenBack.push(d.id);
          continue;
        }
        const leave = this.perAccount.enter(d.accountId);
        started++;
        const p: Promise<void> = this.attempt(d)
          .catch((error) => this.deps.log.error('webhook attempt could not be recorded', { delivery: d.id, error }))
          .finally(() => {
            this.inflight.delete(p);
            leave();
            this.poke();
          });
        this.inflight.add(p);
      }
      // every attempt started first, then the excess given back in one statement (if that fails, the leases lapse)
      try {
        await deliveries.release(owner, ...givenBack);
      } catch (error) {
        this.deps.log.warn('webhook claims could not be given back; they lapse with their lease', { deliveries: givenBack.length, error });
        return 'busy';
      }
      // nothing given back: the claim took every due delivery it could (the accounts left out stay so until an attempt ends)
      if (givenBack.length === 0) return claimed.length === free ? 'more' : started === 0 && this.inflight.size === 0 ? 'idle' : 'busy';
    }
  }

  /**
   * Until the next unclaimed delivery falls due (at most POLL_MS), also while attempts run: a
   * receiver that hangs until the timeout must not hold back another's retry (each finished
   * attempt pokes as well).
   */
  private async sleepMs(): Promise<number | undefined> {
    const now = this.deps.clock.now();
    const next = await this.deps.deliveries.nextDue(now);
    // due already but not claimable (a paused subscription, another replica's claim): poll
    return next !== undefined && next > now ? Math.min(POLL_MS, next - now) : POLL_MS;
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const { clock, deliveries, subscriptions, log } = this.deps;
    const started = clock.now();
    const secrets = await subscriptions.signingSecrets(d.subscriptionId, started);
    if (secrets.length === 0) return deliveries.release(this.deps.owner, d.id); // deleted meanwhile
    const headers = { 'content-type': 'application/json', ...signatureHeaders(d.eventId, Math.floor(started / 1000), d.payload, secrets) };
    const result = await postWebhook(d.url, d.payload, headers, this.deps.sender);
    const ended = clock.now();
    const attempts = d.attemptCount + 1;
    const outcome = this.outcome(result, attempts, ended);
    const finished = await deliveries.finishAttempt(
      this.deps.owner,
      d.id,
      { time: started, statusCode: result.status, error: result.error, latencyMs: Math.round(result.latencyMs * 1000) / 1000 },
      outcome,
      ended,
    );
    if (finished === 'lapsed') log.warn('webhook claim lapsed during the attempt; another worker may repeat it', { delivery: d.id });
    if (finished === 'gone') log.debug('webhook delivery deleted during the attempt (its subscription or entity was deleted)', { delivery: d.id });
    if (result.status === 410) await subscriptions.pause(d.subscriptionId, GONE_REASON, ended);
    log.debug('webhook attempt', { delivery: d.id, subscription: d.subscriptionId, event: d.eventId, attempt: attempts, status: result.status, error: result.error, state: outcome.state });
  }

  private outcome(result: AttemptResult, attempts: number, now: number) {
    if (result.status >= 200 && result.status < 300) return { state: 'succeeded' as const };
    if (result.status === 410) return { state: 'failed' as const };
    if (attempts >= MAX_ATTEMPTS) return { state: 'failed' as const };
    const asked = result.status === 429 || result.status === 503 ? retryAfterMs(result.retryAfter, now) : undefined;
    const delay = nextRetryDelay(attempts, this.deps.retryBaseMs, asked, this.deps.random)!;
    return { state: 'pending' as const, nextAttemptTime: now + delay };
  }
}
