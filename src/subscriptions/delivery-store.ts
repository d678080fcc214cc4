/**
 * Storage of webhook events, their deliveries and each delivery's attempts. An event and its
 * delivery are written in the transaction that decides to send them (before any attempt), so a
 * crash never loses one: at least once. A worker claims due deliveries with a lease (owner,
 * expiry) in one statement (`store/claim.ts`): on PostgreSQL the candidates are locked `FOR UPDATE
 * SKIP LOCKED`, so several replicas never claim the same delivery; on SQLite the statement runs
 * alone under the single writer. An attempt is recorded only by the lease's owner; a claim whose owner died
 * lapses at its expiry (on SQLite, where one process writes, it is released at start).
 */
import { skipLocked } from '../store/claim';
import type { Database, Queryable } from '../store/database';
import { olderThan } from './keyset';
import type { ExpressionBuilder } from 'kysely';
import type { Schema } from '../store/schema';

/** A delivery no live claim holds at `now` (never claimed, released, or its lease run out). */
function unclaimedAt(eb: ExpressionBuilder<Schema, 'webhook_deliveries'>, now: number) {
  return eb.or([eb('lease_expire_time', 'is', null), eb('lease_expire_time', '<=', now)]);
}

/** Where a delivery stands: waiting for an attempt, delivered, or given up (last retry or 410). */
export type DeliveryState = 'pending' | 'succeeded' | 'failed';

/** An event to store with its first delivery. */
export interface NewEvent {
  readonly id: string;
  readonly accountId: string;
  readonly subscriptionId: string;
  readonly type: string;
  readonly payload: string;
}

/** One attempt as logged: number (1..6), start time, HTTP status (0: none), error, latency. */
export interface AttemptRecord {
  readonly attempt: number;
  readonly time: number;
  readonly statusCode: number;
  readonly error: string;
  readonly latencyMs: number;
}

/** A delivery with its event type and every attempt, as the log shows it. */
export interface DeliveryRecord {
  readonly id: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly state: DeliveryState;
  readonly attemptCount: number;
  readonly nextAttemptTime: number | null;
  readonly createTime: number;
  readonly attempts: readonly AttemptRecord[];
}

/** A delivery claimed for one attempt, with what the attempt needs. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly accountId: string;
  readonly subscriptionId: string;
  readonly eventId: string;
  readonly attemptCount: number;
  readonly payload: string;
  readonly url: string;
}

/** How an attempt leaves its delivery. */
export type AttemptOutcome = { readonly state: 'pending'; readonly nextAttemptTime: number } | { readonly state: 'succeeded' | 'failed' };

/** Rows per multi-row INSERT (11 parameters each: well under both databases' limits). */
const CHUNK = 500;

/** Events, deliveries and attempts (see the file comment). */
export class DeliveryStore {
  constructor(private readonly database: Database) {}

  /** Store events and one pending delivery of each (`deliveryIds[i]` for `events[i]`), due at `now`. */
  async enqueue(q: Queryable, events: readonly NewEvent[], deliveryIds: readonly string[], now: number): Promise<void> {
    for (let start = 0; start < events.length; start += CHUNK) {
      const chunk = events.slice(start, start + CHUNK);
      await q
        .insertInto('webhook_events')
        .values(chunk.map((e) => ({ id: e.id, account_id: e.accountId, subscription_id: e.subscriptionId, type: e.type, create_time: now, payload: e.payload })))
        .execute();
      await q.insertInto('webhook_deliveries').values(chunk.map((e, i) => this.pendingRow(e.accountId, e.subscriptionId, e.id, deliveryIds[start + i], now))).execute();
    }
  }

  private pendingRow(accountId: string, subscriptionId: string, eventId: string, id: string, now: number) {
    return {
      id,
      account_id: accountId,
      subscription_id: subscriptionId,
      event_id: eventId,
      state: 'pending',
      attempt_count: 0,
      next_attempt_time: now,
      lease_owner: null,
      lease_expire_time: null,
      create_time: now,
      update_time: now,
    };
  }

  /**
   * A new pending delivery of an existing event (resend). In a transaction although one statement:
   * the call's idempotency claim is marked applied with it (`store/commit-hook.ts`).
   */
  async addDelivery(accountId: string, subscriptionId: string, eventId: string, id: string, now: number): Promise<void> {
    await this.database.transaction((trx) => trx.insertInto('webhook_deliveries').values(this.pendingRow(accountId, subscriptionId, eventId, id, now)).execute());
  }

  /**
   * Claim up to `limit` due deliveries of active subscriptions for `owner` until `now + leaseMs`,
   * none of the accounts in `except` (one statement; the candidates locked `FOR UPDATE SKIP LOCKED`
   * on PostgreSQL, `store/claim.ts`).
   */
  async claimDue(owner: string, now: number, leaseMs: number, limit: number, except: readonly string[] = []): Promise<ClaimedDelivery[]> {
    const db = this.database.db;
    let candidates = db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_time', '<=', now)
      .where((eb) => unclaimedAt(eb, now))
      .where('subscription_id', 'in', (eb) => eb.selectFrom('subscriptions').select('id').where('state', '=', 'active'));
    if (except.length > 0) candidates = candidates.where('account_id', 'not in', except);
    const due = skipLocked(this.database, candidates.orderBy('next_attempt_time').limit(limit));
    const claimed = await db.updateTable('webhook_deliveries').set({ lease_owner: owner, lease_expire_time: now + leaseMs }).where('id', 'in', due).returning('id').execute();
    if (claimed.length === 0) return [];
    const rows = await this.database.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .innerJoin('subscriptions as s', 's.id', 'd.subscription_id')
      .select(['d.id', 'd.account_id', 'd.subscription_id', 'd.event_id', 'd.attempt_count', 'e.payload', 's.url'])
      .where('d.id', 'in', claimed.map((r) => r.id))
      .where('d.lease_owner', '=', owner)
      .orderBy('d.next_attempt_time')
      .execute();
    return rows.map((r) => ({ id: r.id, accountId: r.account_id, subscriptionId: r.subscription_id, eventId: r.event_id, attemptCount: Number(r.attempt_count), payload: r.payload, url: r.url }));
  }

  /**
   * Record an attempt by the lease's owner and move the delivery on: `lapsed` when the lease was
   * lost, `gone` when the delivery was deleted meanwhile (its subscription or entity deleted during
   * the attempt; found by QA: that was logged as a lapsed claim). The transaction writes first
   * (why: on SQLite a transaction that reads before it writes fails at once, without waiting, when
   * another connection — the checkpointer — holds the write lock at that moment).
   */
  async finishAttempt(owner: string, deliveryId: string, attempt: Omit<AttemptRecord, 'attempt'>, outcome: AttemptOutcome, now: number): Promise<'recorded' | 'lapsed' | 'gone'> {
    return this.database.transaction(async (trx) => {
      const row = await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempt_count: eb('attempt_count', '+', 1),
          state: outcome.state,
          next_attempt_time: outcome.state === 'pending' ? outcome.nextAttemptTime : null,
          lease_owner: null,
          lease_expire_time: null,
          update_time: now,
        }))
        .where('id', '=', deliveryId)
        .where('lease_owner', '=', owner)
        .returning('attempt_count')
        .executeTakeFirst();
      if (!row) return (await trx.selectFrom('webhook_deliveries').select('id').where('id', '=', deliveryId).executeTakeFirst()) ? 'lapsed' : 'gone';
      await trx
        .insertInto('webhook_attempts')
        .values({ delivery_id: deliveryId, attempt: Number(row.attempt_count), time: attempt.time, status_code: attempt.statusCode, error: attempt.error.slice(0, 500), latency_ms: attempt.latencyMs })
        .execute();
      return 'recorded';
    });
  }

  /** Give back claims without an attempt (e.g. the subscription was paused meanwhile). */
  async release(owner: string, ...deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.database.db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_expire_time: null }).where('id', 'in', deliveryIds).where('lease_owner', '=', owner).execute();
  }

  /** Release every claim (SQLite start-up: the one writer that held them is gone). */
  async releaseAll(): Promise<void> {
    await this.database.db.updateTable('webhook_deliveries').set({ lease_owner: null, lease_expire_time: null }).where('lease_owner', 'is not', null).execute();
  }

  /**
   * When the earliest pending delivery that no live claim holds at `now` is due (it may belong to
   * a paused subscription); undefined when none. Claimed deliveries are skipped so that attempts
   * in flight do not hide the next one falling due.
   */
  async nextDue(now: number): Promise<number | undefined> {
    const row = await this.database.db
      .selectFrom('webhook_deliveries')
      .select('next_attempt_time')
      .where('state', '=', 'pending')
      .where((eb) => unclaimedAt(eb, now))
      .orderBy('next_attempt_time')
      .limit(1)
      .executeTakeFirst();
    return row?.next_attempt_time === null || row?.next_attempt_time === undefined ? undefined : Number(row.next_attempt_time);
  }

  /** The subscription's deliveries, newest first, after keyset position [create_time, id]. */
  async list(subscriptionId: string, state: DeliveryState | undefined, after: readonly [number, string] | undefined, limit: number): Promise<DeliveryRecord[]> {
    let query = this.database.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.subscription_id', 'd.event_id', 'e.type', 'd.state', 'd.attempt_count', 'd.next_attempt_time', 'd.create_time'])
      .where('d.subscription_id', '=', subscriptionId);
    if (state) query = query.where('d.state', '=', state);
    if (after) query = query.where(olderThan('d.create_time', 'd.id', after));
    const rows = await query.orderBy('d.create_time', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
    return this.withAttempts(rows);
  }

  /** One delivery of the subscription, or undefined. */
  async get(subscriptionId: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    const rows = await this.database.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.subscription_id', 'd.event_id', 'e.type', 'd.state', 'd.attempt_count', 'd.next_attempt_time', 'd.create_time'])
      .where('d.subscription_id', '=', subscriptionId)
      .where('d.id', '=', deliveryId)
      .execute();
    return (await this.withAttempts(rows))[0];
  }

  private async withAttempts(
    rows: readonly { id: string; subscription_id: string; event_id: string; type: string; state: string; attempt_count: number; next_attempt_time: number | null; create_time: number }[],
  ): Promise<DeliveryRecord[]> {
    if (rows.length === 0) return [];
    const attempts = await this.database.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', 'in', rows.map((r) => r.id))
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    const byDelivery = new Map<string, AttemptRecord[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({ attempt: Number(a.attempt), time: Number(a.time), statusCode: Number(a.status_code), error: a.error, latencyMs: Number(a.latency_ms) });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((r) => ({
      id: r.id,
      subscriptionId: r.subscription_id,
      eventId: r.event_id,
      eventType: r.type,
      state: r.state as DeliveryState,
      attemptCount: Number(r.attempt_count),
      nextAttemptTime: r.next_attempt_time === null ? null : Number(r.next_attempt_time),
      createTime: Number(r.create_time),
      attempts: byDelivery.get(r.id) ?? [],
    }));
  }
}
