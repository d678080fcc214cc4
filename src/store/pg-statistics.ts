/**
 * Fresh planner statistics for tables that grow fast (PostgreSQL).
 *
 * Why: PostgreSQL plans from statistics that autovacuum's ANALYZE refreshes about once a minute
 * at best. A table that grew from nothing since — a new deployment's first ingests — has none,
 * and the planner then assumes that `account_id = …` and `entity = …` each match a handful of
 * rows: it chose nested loops over every observation of the entity for the as-of read of a
 * series (measured: 38 s for a 6,000-point series read right after its ingest; 0.1 s once
 * analysed).
 *
 * So every replica counts the rows its committed transactions inserted per table (plain
 * INSERTs: an upsert mostly updates), and analyses a table once that count reaches `MIN_ROWS`
 * and `GROWTH` of the table's size at its last analysis — autovacuum's rule, without its wait.
 * The commit that makes a table due waits for the analysis before it is acknowledged, so a read
 * that follows an acknowledged write is planned on statistics that include it. It is rare (the
 * growth rule spaces analyses geometrically as a table grows) and cheap (ANALYZE samples a
 * bounded number of rows); it waits at most `LOCK_TIMEOUT_MS` for a VACUUM or another replica's
 * ANALYZE of the same table, and then lets it be.
 */
import { sql, type Kysely } from 'kysely';

/** Fewest inserted rows that call for an analysis. */
export const MIN_ROWS = 100;
/** Inserted rows, as a fraction of the table at its last analysis, that call for another. */
export const GROWTH = 0.2;
/** Longest an analysis waits for the table's lock (held by a VACUUM or another ANALYZE). */
export const LOCK_TIMEOUT_MS = 1000;

const PLAIN_INSERT = /^\s*insert\s+into\s+"?(\w+)"?(?![\s\S]*\bon\s+conflict\b)/i;

/** The table a plain INSERT (no ON CONFLICT) writes, or undefined. */
export function insertTarget(sqlText: string): string | undefined {
  return PLAIN_INSERT.exec(sqlText)?.[1];
}

export class TableStatistics {
  /** Rows inserted (committed) since the table's last analysis. */
  private readonly inserted = new Map<string, number>();
  /** The table's row count at its last analysis (0 before the first). */
  private readonly analysedRows = new Map<string, number>();
  /** Analyses running, by table. */
  private readonly running = new Map<string, Promise<void>>();
  /** Tables the database user may not analyse: left to autovacuum. */
  private readonly failed = new Set<string>();
  private closed = false;

  constructor(
    private readonly db: Kysely<any>,
    private readonly onError: (table: string, error: unknown) => void = () => {},
  ) {}

  /** Rows a committed transaction (or autocommit statement) inserted, per table; resolves once the analyses they made due are done. */
  async committed(rows: ReadonlyMap<string, number>): Promise<void> {
    const work: Promise<void>[] = [];
    for (const [table, n] of rows) {
      const total = (this.inserted.get(table) ?? 0) + n;
      this.inserted.set(table, total);
      if (this.closed || this.failed.has(table) || total < Math.max(MIN_ROWS, GROWTH * (this.analysedRows.get(table) ?? 0))) continue;
      // Due: one analysis per table at a time; a commit that finds one running waits for it.
      const current = this.running.get(table);
      if (current) {
        work.push(current);
        continue;
      }
      this.inserted.set(table, 0);
      const analysis = this.analyse(table).finally(() => this.running.delete(table));
      this.running.set(table, analysis);
      work.push(analysis);
    }
    await Promise.all(work);
  }

  /** Stop analysing (the database is closing). */
  close(): void {
    this.closed = true;
  }

  private async analyse(table: string): Promise<void> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = ${sql.lit(`${LOCK_TIMEOUT_MS}ms`)}`.execute(trx);
        await sql`ANALYZE ${sql.table(table)}`.execute(trx);
      });
      const { rows } = await sql<{ n: number }>`SELECT reltuples::bigint AS n FROM pg_class WHERE oid = to_regclass(${table})`.execute(this.db);
      this.analysedRows.set(table, Math.max(0, Number(rows[0]?.n ?? 0)));
    } catch (error) {
      if (this.closed) return;
      // Without the privilege, never again (autovacuum analyses the table in time); after another
      // failure (a VACUUM held the lock past LOCK_TIMEOUT_MS), when the table is next due.
      if (errorCode(error) === '42501') this.failed.add(table);
      this.onError(table, error);
    }
  }
}

/** The SQLSTATE of a `pg` error, also when it is wrapped (`cause`). */
function errorCode(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
