/**
 * The PostgreSQL side of the query layer: a `pg` pool behind kysely, hardened for replicas that
 * outlive their database server's restarts.
 * - Every failure of the database (unreachable, restarting, a broken connection, a busy pool, a
 *   statement timeout, a deadlock) leaves the driver as `DatabaseUnavailableError` — 503
 *   `unavailable` — never as an internal error (`pg-errors.ts`).
 * - A connection that breaks while idle in the pool or between the statements of a transaction
 *   emits 'error' on the pool or the client; both are handled (unhandled, one would end the
 *   process: every replica crashed when PostgreSQL restarted). Broken connections leave the
 *   pool; new ones are made on demand, so the service recovers by itself when the server returns.
 * - `PostgresHealth` tracks reachability for gRPC health.
 * - `TableStatistics` analyses a table that grew fast, so plans never rest on missing statistics.
 */
import { Kysely, PostgresDialect, PostgresDriver, type CompiledQuery, type DatabaseConnection, type Driver, type PostgresDialectConfig, type QueryResult, type TransactionSettings } from 'kysely';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { classifyFailure, DatabaseUnavailableError } from './pg-errors';
import { PostgresHealth } from './pg-health';
import { insertTarget, TableStatistics } from './pg-statistics';
import type { Schema } from './schema';

/** Connection settings (`src/config.ts`: `DATABASE_POOL_SIZE`, `DATABASE_STATEMENT_TIMEOUT_MS`, `DATABASE_CONNECT_TIMEOUT_MS`). */
export interface PostgresSettings {
  /** Most connections this process holds (default 10). */
  readonly poolSize?: number;
  /** Longest a statement may run, in ms, before the server cancels it (default 30000; 0 = no limit). */
  readonly statementTimeoutMs?: number;
  /** Longest to wait for a connection, new or from the busy pool, in ms (default 3000). */
  readonly connectTimeoutMs?: number;
  /** Told when the server becomes unreachable (with the failure) and reachable again. */
  readonly onAvailability?: (available: boolean, error?: unknown) => void;
  /** Told when refreshing a table's planner statistics failed (`pg-statistics.ts`). */
  readonly onAnalyzeFailure?: (table: string, error: unknown) => void;
}

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
/**
 * Longest a transaction may sit idle between its statements before the server ends its session.
 * Why: a replica that stalls (paused, partitioned) inside a transaction would otherwise hold its
 * row locks — an account's revision counter, a claimed job — indefinitely; no transaction of the
 * service waits on anything but the database.
 */
export const IDLE_IN_TRANSACTION_MS = 60_000;

/** An open PostgreSQL database: kysely over the pool, and its reachability. */
export interface PostgresHandle {
  readonly db: Kysely<Schema>;
  readonly health: PostgresHealth;
  close(): Promise<void>;
}

/** Open a pool on `url` (nothing is connected until the first query). */
export function openPostgres(url: string, settings: PostgresSettings = {}): PostgresHandle {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as typeof import('pg');
  // BIGINT columns hold epoch-ms times and revisions, and COUNT(*) is BIGINT: parse them as
  // numbers (< 2^53), as SQLite returns them. NUMERIC (SUM, AVG) likewise.
  pg.types.setTypeParser(20, (v: string) => Number(v));
  pg.types.setTypeParser(1700, (v: string) => Number(v));
  const statementTimeout = settings.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const connectTimeout = settings.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const clientConfig = {
    connectionString: url,
    connectionTimeoutMillis: connectTimeout,
    keepAlive: true,
    application_name: 'forecast',
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
  };
  const health = new PostgresHealth({ ...clientConfig, query_timeout: connectTimeout }, (available, error) => settings.onAvailability?.(available, error));
  const pool: Pool = new pg.Pool({ ...clientConfig, max: settings.poolSize ?? DEFAULT_POOL_SIZE } satisfies PoolConfig);
  // An idle pooled connection that breaks (the server restarted) is removed by the pool, which
  // then emits 'error'; a connection handed out (inside a transaction, between statements)
  // emits it itself. Its next statement fails and the pool discards it on release.
  const lost = (err: Error) => {
    if (classifyFailure(err) === 'unreachable') health.reportUnreachable(err);
  };
  pool.on('error', lost);
  pool.on('connect', (client: PoolClient) => client.on('error', lost));
  let statistics: TableStatistics | undefined;
  const dialect = new ResilientPostgresDialect(
    pool,
    (err) => {
      const kind = classifyFailure(err);
      if (kind === undefined) return err;
      if (kind === 'unreachable') health.reportUnreachable(err);
      return new DatabaseUnavailableError(kind, err);
    },
    async (rows) => statistics?.committed(rows),
  );
  const db = new Kysely<Schema>({ dialect });
  statistics = new TableStatistics(db, settings.onAnalyzeFailure);
  health.start();
  return {
    db,
    health,
    close: async () => {
      statistics?.close();
      await health.close();
      await db.destroy();
    },
  };
}

/** Rows inserted, per table. */
type InsertedRows = Map<string, number>;

/**
 * kysely's PostgreSQL dialect whose driver passes every error through `translate` and reports
 * the rows each committed transaction inserted (for `TableStatistics`).
 */
class ResilientPostgresDialect extends PostgresDialect {
  constructor(
    private readonly pool: Pool,
    private readonly translate: (err: unknown) => unknown,
    private readonly committed: (rows: InsertedRows) => Promise<void>,
  ) {
    super({ pool });
  }

  override createDriver(): Driver {
    return new TranslatingDriver({ pool: this.pool }, this.translate, this.committed);
  }
}

/**
 * kysely's PostgreSQL driver with its connections wrapped: every statement — BEGIN, COMMIT,
 * ROLLBACK and savepoints included, which the driver runs through the connection — and every
 * connection request rejects with the translated error.
 */
class TranslatingDriver extends PostgresDriver {
  private readonly wrapped = new WeakMap<DatabaseConnection, TranslatingConnection>();

  constructor(
    config: PostgresDialectConfig,
    private readonly translate: (err: unknown) => unknown,
    private readonly committed: (rows: InsertedRows) => Promise<void>,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    let connection: DatabaseConnection;
    try {
      connection = await super.acquireConnection();
    } catch (err) {
      throw this.translate(err);
    }
    let wrapped = this.wrapped.get(connection);
    if (!wrapped) this.wrapped.set(connection, (wrapped = new TranslatingConnection(connection, this.translate, this.committed)));
    return wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await super.beginTransaction(connection, settings);
    if (connection instanceof TranslatingConnection) connection.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    if (connection instanceof TranslatingConnection) connection.endTransaction(true);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof TranslatingConnection) connection.endTransaction(false);
    await super.rollbackTransaction(connection);
  }

  /**
   * Released first, then waits for the statistics the connection's commits made due: the caller
   * learns of its commit only once they are fresh, and the analysis never waits for the very
   * connection it would free.
   */
  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (!(connection instanceof TranslatingConnection)) return super.releaseConnection(connection as Parameters<PostgresDriver['releaseConnection']>[0]);
    connection.endTransaction(false);
    const refreshed = connection.takeRefresh();
    // The driver releases through a private member of its own connection object.
    await super.releaseConnection(connection.inner as Parameters<PostgresDriver['releaseConnection']>[0]);
    await refreshed;
  }
}

class TranslatingConnection implements DatabaseConnection {
  inTransaction = false;
  /** Rows inserted by the open transaction, reported when it commits. */
  private inserted: InsertedRows = new Map();
  /** The statistics refresh that committed inserts started (awaited on release). */
  private refresh: Promise<void> | undefined;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly translate: (err: unknown) => unknown,
    private readonly committed: (rows: InsertedRows) => Promise<void>,
  ) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    let result: QueryResult<R>;
    try {
      result = await this.inner.executeQuery<R>(compiledQuery);
    } catch (err) {
      throw this.translate(err);
    }
    const rows = Number(result.numAffectedRows ?? 0);
    const table = rows > 0 ? insertTarget(compiledQuery.sql) : undefined;
    if (table !== undefined) {
      this.inserted.set(table, (this.inserted.get(table) ?? 0) + rows);
      if (!this.inTransaction) this.endTransaction(true);
    }
    return result;
  }

  /** The open transaction (or autocommit statement) ended: report its inserts if it committed. */
  endTransaction(committed: boolean): void {
    this.inTransaction = false;
    if (this.inserted.size === 0) return;
    const rows = this.inserted;
    this.inserted = new Map();
    if (!committed) return;
    const previous = this.refresh;
    const refresh = this.committed(rows);
    this.refresh = previous ? Promise.all([previous, refresh]).then(() => {}) : refresh;
  }

  /** The statistics refresh started since the last call, if any. */
  takeRefresh(): Promise<void> | undefined {
    const refresh = this.refresh;
    this.refresh = undefined;
    return refresh;
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}
