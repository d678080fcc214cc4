/**
 * Transactions that must not interleave (a check and the write it guards: a cycle check and its
 * edge, a limit's count and the row it counts) take a lock on a key until they end. PostgreSQL: a
 * transaction-scoped advisory lock (READ COMMITTED would let two transactions each miss the other's
 * uncommitted rows). SQLite: nothing to do — every write transaction runs on the one writer
 * connection, one at a time, and a second process's write waits for the file lock.
 */
import { sql } from 'kysely';
import type { Database, Queryable } from './database';

/** Hold `key`'s lock until `trx` ends (see the file comment). */
export async function lockUntilCommit(database: Database, trx: Queryable, key: string): Promise<void> {
  if (database.dialect !== 'postgres') return;
  await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
}
