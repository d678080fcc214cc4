/**
 * Claiming queued work (outbox rows, scheduled jobs, webhook deliveries) so that each row goes to
 * exactly one replica at a time, however many poll the same table at once.
 *
 * The pattern, one statement, dialect-neutral through kysely:
 *
 *   UPDATE jobs SET lease_owner = :me, lease_until = :now + :lease
 *   WHERE id IN (SELECT id FROM jobs
 *                WHERE due_time <= :now AND (lease_until IS NULL OR lease_until <= :now)
 *                ORDER BY due_time LIMIT :n  FOR UPDATE SKIP LOCKED)
 *   RETURNING *
 *
 * - PostgreSQL: `FOR UPDATE SKIP LOCKED` locks the chosen rows and makes a concurrent claimer
 *   skip them instead of waiting; a row another replica claimed and committed meanwhile is
 *   re-checked against the WHERE clause on its newest version and dropped (its lease is live).
 * - SQLite: the clause does not exist and is not needed: the UPDATE runs under the database's
 *   single writer lock, so claimers take turns.
 * A claimer that dies leaves its rows leased until `lease_until`; then they are claimable again
 * (at-least-once delivery: make the work idempotent, or record its completion in the same
 * transaction as its effect).
 */
import type { SelectQueryBuilder } from 'kysely';
import type { Database } from './database';

/**
 * `qb` locked for a claim: `FOR UPDATE SKIP LOCKED` on PostgreSQL, unchanged on SQLite (see the
 * module comment). Use it for the row-choosing subquery of a claiming UPDATE, or for a SELECT
 * inside `database.transaction` followed by the UPDATE of the chosen rows.
 */
export function skipLocked<DB, TB extends keyof DB, O>(database: Pick<Database, 'dialect'>, qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return database.dialect === 'postgres' ? qb.forUpdate().skipLocked() : qb;
}
