/**
 * The drift outbox (transactional outbox pattern): the ingest transaction records which entity
 * got which data revision, and nothing else — scoring happens later, in the drift worker, so it
 * never slows an ingest. A row is written only when the account has an active subscription (one
 * indexed lookup); the worker works out which subscriptions and axes it concerns. Rows are
 * claimed with a lease like deliveries, and deleted in the transaction that stores their result.
 */
import { sql } from 'kysely';
import type { IngestListener } from '../entities/observation-store';
import { skipLocked } from '../store/claim';
import type { Database } from '../store/database';

/** One claimed outbox row. */
export interface OutboxRow {
  readonly id: number;
  readonly accountId: string;
  readonly entity: string;
  readonly revision: number;
}

/**
 * The ingest listener that writes outbox rows: one statement per entity, which inserts only when
 * the account has an active subscription (why one: it runs inside every ingest transaction).
 */
export function driftOutboxListener(): IngestListener {
  return async (trx, ingest) => {
    for (const entity of new Set(ingest.entities)) {
      // casts: PostgreSQL cannot infer the types of bare parameters in a SELECT without FROM
      await sql`
        INSERT INTO drift_outbox (account_id, entity, revision, create_time)
        SELECT ${ingest.accountId}, ${entity}, CAST(${ingest.revision} AS BIGINT), CAST(${ingest.now} AS BIGINT)
        WHERE EXISTS (SELECT 1 FROM subscriptions WHERE account_id = ${ingest.accountId} AND state = 'active')`.execute(trx);
    }
  };
}

/** Claims and releases outbox rows (see the file comment). */
export class DriftOutbox {
  constructor(private readonly database: Database) {}

  /**
   * Claim up to `limit` rows, oldest first, until `now + leaseMs` (SKIP LOCKED on PostgreSQL,
   * `store/claim.ts`): none while an older row of its entity is claimed (by this process or
   * another replica, or waiting to be retried after a failure: an entity's rows are scored in
   * order — found by review: a newer ingest scored first made a failed older one history for a
   * subscription without a state, never scored), and none of the entities in `busy`
   * (`<account id> <entity>`, the entities this process is scoring, also once their claims have
   * lapsed in a long batch: one flat list, since a condition per account nested too deep for
   * SQLite from about 495 accounts — found by review).
   */
  async claim(now: number, leaseMs: number, limit: number, busy: readonly string[] = []): Promise<OutboxRow[]> {
    const db = this.database.db;
    const free = skipLocked(
      this.database,
      db
        .selectFrom('drift_outbox as o')
        .select('o.id')
        .where((eb) => eb.or([eb('o.lease_expire_time', 'is', null), eb('o.lease_expire_time', '<=', now)]))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('drift_outbox as older')
                .select('older.id')
                .whereRef('older.account_id', '=', 'o.account_id')
                .whereRef('older.entity', '=', 'o.entity')
                .whereRef('older.id', '<', 'o.id')
                .where('older.lease_expire_time', '>', now),
            ),
          ),
        )
        .$if(busy.length > 0, (qb) => qb.where(sql<string>`o.account_id || ' ' || o.entity`, 'not in', [...busy]))
        .orderBy('o.id')
        .limit(limit),
    );
    const rows = await db
      .updateTable('drift_outbox')
      .set({ lease_expire_time: now + leaseMs })
      .where('id', 'in', free)
      .returning(['id', 'account_id', 'entity', 'revision'])
      .execute();
    return rows.map((r) => ({ id: Number(r.id), accountId: r.account_id, entity: r.entity, revision: Number(r.revision) })).sort((a, b) => a.id - b.id);
  }

  /** Keep rows claimed until `until` (their scoring failed: retried then, not at once). */
  async postpone(ids: readonly number[], until: number): Promise<void> {
    if (ids.length > 0) await this.database.db.updateTable('drift_outbox').set({ lease_expire_time: until }).where('id', 'in', [...ids]).execute();
  }

  /** Give rows back at once (their processing failed and may be retried). */
  async release(ids: readonly number[]): Promise<void> {
    if (ids.length > 0) await this.database.db.updateTable('drift_outbox').set({ lease_expire_time: null }).where('id', 'in', [...ids]).execute();
  }

  /** Release every claim (SQLite start-up: the one process that held them is gone). */
  async releaseAll(): Promise<void> {
    await this.database.db.updateTable('drift_outbox').set({ lease_expire_time: null }).where('lease_expire_time', 'is not', null).execute();
  }

  /** Rows waiting (for tests and the benchmark). */
  async size(): Promise<number> {
    const row = await this.database.db.selectFrom('drift_outbox').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
