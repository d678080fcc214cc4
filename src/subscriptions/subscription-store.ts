/**
 * Storage of subscriptions. Every query is scoped by account, except the two the delivery and
 * drift workers use by subscription id. Signing secrets are stored sealed under the master key
 * (`store/secret-box.ts`): they must be usable for signing, so they cannot be hashed; the
 * sealing context binds each to its subscription and slot, so a sealed value copied elsewhere
 * does not open. Secrets are never logged and never leave this file except to sign.
 */
import { sql } from 'kysely';
import { lockUntilCommit } from '../store/advisory-lock';
import type { Database, Queryable } from '../store/database';
import type { SubscriptionsTable } from '../store/schema';
import type { SecretBox } from '../store/secret-box';
import { olderThan } from './keyset';

/** `active`, or `paused` (by request or by a 410 Gone). */
export type SubscriptionState = 'active' | 'paused';

/** A subscription as the service uses it (never its secret). */
export interface SubscriptionRecord {
  readonly id: string;
  readonly accountId: string;
  readonly entity: string;
  /** Empty = every axis. */
  readonly axes: readonly string[];
  readonly includeDescendants: boolean;
  readonly url: string;
  readonly events: readonly string[];
  readonly level: number;
  readonly state: SubscriptionState;
  readonly pauseReason: string;
  readonly previousSecretExpireTime: number | null;
  readonly createTime: number;
  readonly updateTime: number;
  /**
   * The account's data revision when the subscription was made (null: made before it was
   * recorded): observations of later revisions are scored, earlier ones are history. Why: found by
   * QA, values ingested just after a subscription, while the ingest before it still waited in the
   * drift outbox, were all taken as history with it (a level shift never scored, no event).
   */
  readonly startRevision: number | null;
}

/** What a new subscription is made of. */
export type NewSubscription = Pick<SubscriptionRecord, 'id' | 'entity' | 'axes' | 'includeDescendants' | 'url' | 'events' | 'level'>;

/** Changes to a subscription; undefined fields keep their values. */
export interface SubscriptionChanges {
  readonly url?: string;
  readonly events?: readonly string[];
  readonly level?: number;
  readonly paused?: { readonly reason: string } | false;
}

const CURRENT = (id: string) => `webhook-secret:${id}`;
const PREVIOUS = (id: string) => `webhook-secret-previous:${id}`;

function toRecord(row: SubscriptionsTable): SubscriptionRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    entity: row.entity,
    axes: JSON.parse(row.axes) as string[],
    includeDescendants: Number(row.include_descendants) === 1,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    level: Number(row.level),
    state: row.state as SubscriptionState,
    pauseReason: row.pause_reason,
    previousSecretExpireTime: row.previous_secret_expire_time === null ? null : Number(row.previous_secret_expire_time),
    createTime: Number(row.create_time),
    updateTime: Number(row.update_time),
    startRevision: row.start_revision === null || row.start_revision === undefined ? null : Number(row.start_revision),
  };
}

/** See the file comment. */
export class SubscriptionStore {
  constructor(
    readonly database: Database,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Make the account's subscription creations take turns until the transaction ends, so a count
   * after the insert sees every other creation (found by QA: on PostgreSQL, 60 creations at once
   * at 990 subscriptions left the account with 1,004 — each transaction counted without the
   * others' uncommitted rows; `store/advisory-lock.ts`).
   */
  async lockCreations(trx: Queryable, accountId: string): Promise<void> {
    await lockUntilCommit(this.database, trx, `subscriptions|${accountId}`);
  }

  /** How many subscriptions the account has (asked after the insert: a transaction here writes first, see `rotate`). */
  async count(q: Queryable, accountId: string): Promise<number> {
    const row = await q.selectFrom('subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Store a new subscription with its secret (sealed). */
  async create(q: Queryable, accountId: string, s: NewSubscription, secret: string, now: number): Promise<SubscriptionRecord> {
    const row: SubscriptionsTable = {
      id: s.id,
      account_id: accountId,
      entity: s.entity,
      axes: JSON.stringify(s.axes),
      include_descendants: s.includeDescendants ? 1 : 0,
      url: s.url,
      events: JSON.stringify(s.events),
      level: s.level,
      state: 'active',
      pause_reason: '',
      secret: this.secrets.seal(secret, CURRENT(s.id)),
      previous_secret: null,
      previous_secret_expire_time: null,
      create_time: now,
      update_time: now,
      start_revision: null,
    };
    // the account's revision as the insert reads it (`startRevision`)
    const { start_revision } = await q
      .insertInto('subscriptions')
      .values({ ...row, start_revision: sql<number>`(SELECT data_revision FROM accounts WHERE id = ${accountId})` })
      .returning('start_revision')
      .executeTakeFirstOrThrow();
    return toRecord({ ...row, start_revision });
  }

  /** One subscription of the account, or undefined. */
  async get(accountId: string, id: string, q: Queryable = this.database.db): Promise<SubscriptionRecord | undefined> {
    const row = await q.selectFrom('subscriptions').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** One subscription by id alone (workers). */
  async byId(id: string): Promise<SubscriptionRecord | undefined> {
    const row = await this.database.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The account's subscriptions, newest first, after keyset position `after` = [create_time, id]. */
  async list(accountId: string, entity: string | undefined, after: readonly [number, string] | undefined, limit: number): Promise<SubscriptionRecord[]> {
    let query = this.database.db.selectFrom('subscriptions').selectAll().where('account_id', '=', accountId);
    if (entity) query = query.where('entity', '=', entity);
    if (after) query = query.where(olderThan('create_time', 'id', after));
    const rows = await query.orderBy('create_time', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** Apply `changes`; the changed record, or undefined when it does not exist. */
  async update(accountId: string, id: string, changes: SubscriptionChanges, now: number): Promise<SubscriptionRecord | undefined> {
    const set: Partial<SubscriptionsTable> = { update_time: now };
    if (changes.url !== undefined) set.url = changes.url;
    if (changes.events !== undefined) set.events = JSON.stringify(changes.events);
    if (changes.level !== undefined) set.level = changes.level;
    if (changes.paused !== undefined) {
      set.state = changes.paused ? 'paused' : 'active';
      set.pause_reason = changes.paused ? changes.paused.reason : '';
    }
    const res = await this.database.db.updateTable('subscriptions').set(set).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return undefined;
    return this.get(accountId, id);
  }

  /** Pause a subscription on the worker's behalf (410 Gone). */
  async pause(id: string, reason: string, now: number): Promise<void> {
    await this.database.db.updateTable('subscriptions').set({ state: 'paused', pause_reason: reason, update_time: now }).where('id', '=', id).execute();
  }

  /** Delete a subscription with its drift state, events, deliveries and attempts. False if absent. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.database.transaction(async (trx) => (await removeSubscriptions(trx, accountId, [id])) > 0);
  }

  /**
   * Delete, inside `trx`, every subscription on `entity` itself, as `delete` does one (its pending
   * deliveries are gone, so never attempted): EntityStore.delete calls it (wired in service.ts), so a
   * deleted entity leaves no subscription behind to re-attach silently when the entity is made
   * again. Subscriptions on an ancestor with `include_descendants` stay. The number deleted.
   */
  async deleteOnEntity(trx: Queryable, accountId: string, entity: string): Promise<number> {
    const rows = await trx.selectFrom('subscriptions').select('id').where('account_id', '=', accountId).where('entity', '=', entity).execute();
    // the entity's drift states under its ancestors' subscriptions too (found by QA: kept, they were
    // scored on when the entity was made again; the drift worker also checks the incarnation)
    await trx
      .deleteFrom('drift_states')
      .where('entity', '=', entity)
      .where('subscription_id', 'in', (eb) => eb.selectFrom('subscriptions').select('id').where('account_id', '=', accountId))
      .execute();
    return removeSubscriptions(trx, accountId, rows.map((r) => r.id));
  }

  /**
   * Replace the secret: the current one becomes the previous one until `previousUntil`. A
   * previous secret still in its grace period is dropped (only two ever sign).
   */
  async rotate(accountId: string, id: string, secret: string, previousUntil: number, now: number): Promise<SubscriptionRecord | undefined> {
    return this.database.transaction(async (trx) => {
      // Write first: on SQLite a transaction that reads before writing fails at once (no busy
      // wait) if another connection holds the write lock at that moment.
      const touched = await trx.updateTable('subscriptions').set({ update_time: now }).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (Number(touched.numUpdatedRows) === 0) return undefined;
      const row = await trx.selectFrom('subscriptions').select('secret').where('id', '=', id).executeTakeFirstOrThrow();
      const current = this.secrets.open(row.secret, CURRENT(id));
      await trx
        .updateTable('subscriptions')
        .set({
          secret: this.secrets.seal(secret, CURRENT(id)),
          previous_secret: this.secrets.seal(current, PREVIOUS(id)),
          previous_secret_expire_time: previousUntil,
          update_time: now,
        })
        .where('id', '=', id)
        .execute();
      return this.get(accountId, id, trx);
    });
  }

  /** The secrets that sign at `now`: the current one, then the previous one during its grace period. */
  async signingSecrets(id: string, now: number): Promise<string[]> {
    const row = await this.database.db
      .selectFrom('subscriptions')
      .select(['secret', 'previous_secret', 'previous_secret_expire_time'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return [];
    const out = [this.secrets.openText(row.secret, CURRENT(id))];
    if (row.previous_secret && row.previous_secret_expire_time !== null && Number(row.previous_secret_expire_time) > now) {
      out.push(this.secrets.openText(row.previous_secret, PREVIOUS(id)));
    }
    return out;
  }

  /**
   * The account's active subscriptions that cover `entity`: on it, or on an ancestor (by
   * `contains` edges) with `include_descendants`.
   */
  async covering(accountId: string, entity: string): Promise<SubscriptionRecord[]> {
    const rows = await sql<SubscriptionsTable>`
      WITH RECURSIVE up(e) AS (
        SELECT parent FROM relations WHERE account_id = ${accountId} AND child = ${entity} AND kind = 'contains'
        UNION
        SELECT r.parent FROM relations r JOIN up ON r.child = up.e WHERE r.account_id = ${accountId} AND r.kind = 'contains'
      )
      SELECT * FROM subscriptions s
      WHERE s.account_id = ${accountId} AND s.state = 'active'
        AND (s.entity = ${entity} OR (s.include_descendants = 1 AND s.entity IN (SELECT e FROM up)))
      ORDER BY s.id`.execute(this.database.db);
    return rows.rows.map(toRecord);
  }
}

/**
 * Delete the account's subscriptions `ids` (at most MAX_SUBSCRIPTIONS) with their drift state,
 * events, deliveries and attempts. Writes first (see `rotate`). The number of subscriptions deleted;
 * nothing else is touched when none of `ids` is the account's.
 */
async function removeSubscriptions(trx: Queryable, accountId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await trx.deleteFrom('subscriptions').where('account_id', '=', accountId).where('id', 'in', ids).executeTakeFirst();
  const deleted = Number(res.numDeletedRows);
  if (deleted === 0) return 0;
  await trx
    .deleteFrom('webhook_attempts')
    .where('delivery_id', 'in', (eb) => eb.selectFrom('webhook_deliveries').select('id').where('subscription_id', 'in', ids))
    .execute();
  await trx.deleteFrom('webhook_deliveries').where('subscription_id', 'in', ids).execute();
  await trx.deleteFrom('webhook_events').where('subscription_id', 'in', ids).execute();
  await trx.deleteFrom('drift_states').where('subscription_id', 'in', ids).execute();
  return deleted;
}
