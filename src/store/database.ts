/**
 * The one query layer: kysely over SQLite (embedded default, better-sqlite3) or PostgreSQL
 * (scale-out, `pg`). Feature code writes dialect-neutral kysely queries against `Schema`.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CompiledQuery, Kysely, Migrator, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig, type Transaction } from 'kysely';
import type { Schema } from './schema';
import { startCheckpointer, type Checkpointer } from './checkpointer';
import { currentCommitHook } from './commit-hook';
import { migrationProvider } from './migrations';
import { DatabaseUnavailableError } from './pg-errors';
import { openPostgres, type PostgresHandle, type PostgresSettings } from './pg-pool';

export type DialectName = 'sqlite' | 'postgres';

/** An open database: the kysely handle and which dialect it speaks. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  /**
   * Run `fn` in one write transaction (all or nothing). SQLite: `BEGIN IMMEDIATE`, so the write
   * lock is taken (waiting up to the busy timeout) before the first statement: a transaction
   * that reads and then writes queues behind another writer instead of failing with
   * "database is locked" when it tries to write. With `signal`, a transaction whose call was
   * aborted (its deadline passed, its client left) is rolled back instead of committed: the
   * check runs right before COMMIT, so an aborted call never commits. Inside a call with a
   * commit hook (`store/commit-hook.ts`) the hook runs right before COMMIT too, in the transaction.
   */
  transaction<T>(fn: (trx: Transaction<Schema>) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Run read-only compiled queries outside any transaction, all on one snapshot of committed
   * data; the rows of each, in order. For the hot reads (`store/prepared.ts`). SQLite: a second,
   * read-only connection (WAL readers never wait for the writer, nor see its open transaction),
   * run synchronously; PostgreSQL: one transaction on the pool.
   */
  read(queries: readonly CompiledQuery[]): Promise<unknown[][]>;
  /**
   * The migrations this open applied, in order (empty when the schema was current). Replicas
   * starting together on one PostgreSQL database take kysely's migration lock in turn: one of
   * them applies the migrations, the others find them applied.
   */
  readonly appliedMigrations: readonly string[];
  close(): Promise<void>;
}

export interface TransactionOptions {
  /** The call's signal (`CallContext.signal`): once aborted, the transaction does not commit. */
  readonly signal?: AbortSignal;
}

/** A query runner: the database itself or a transaction inside it. */
export type Queryable = Kysely<Schema> | Transaction<Schema>;

export interface OpenOptions {
  /**
   * SQLite file databases: run WAL checkpoints on a thread of their own instead of inside the
   * commit that crosses SQLite's threshold (`store/checkpointer.ts`). For the long-running
   * server; a short CLI command needs no extra thread.
   */
  readonly backgroundCheckpoints?: boolean;
  /** Told when background checkpoints fail and the writer falls back to its own. */
  readonly onCheckpointFailure?: (err: unknown) => void;
  /** PostgreSQL: pool size, timeouts, and who is told when the server becomes unreachable (`store/pg-pool.ts`). */
  readonly postgres?: PostgresSettings;
  /**
   * SQLite file databases: refuse a file that does not exist rather than create it (and its
   * folders). For commands that only read: found by QA, `signing-keys list` with a mistyped
   * `DATABASE_URL` made an empty database, folders and all, and listed nothing.
   */
  readonly mustExist?: boolean;
}

/** SQLite's default: checkpoint in the commit that takes the WAL past this many pages. */
const AUTOCHECKPOINT_PAGES = 1000;

/**
 * Open `url` (`sqlite:PATH`, `sqlite::memory:`, or `postgres://…`) and apply pending migrations.
 * For SQLite, the file's directory is created if missing.
 */
export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  let db: Kysely<Schema>;
  let dialect: DialectName;
  let reader: import('better-sqlite3').Database | undefined;
  let postgres: PostgresHandle | undefined;
  // Started once the migrations have succeeded.
  let startCheckpoints: (() => Checkpointer) | undefined;
  // Statements on the SQLite writer connection that may have changed what cached reads return (see `readSynchronously`).
  let writerStatements = 0;
  let writerVersion: (() => unknown) | undefined;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    // Loaded lazily so a PostgreSQL deployment needs no native SQLite build.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const BetterSqlite3 = require('better-sqlite3') as typeof import('better-sqlite3');
    if (path !== ':memory:' && options.mustExist && !existsSync(resolve(path))) {
      throw new Error(`no database at ${resolve(path)} (DATABASE_URL): check the path, or start the server once to make one`);
    }
    if (path !== ':memory:') {
      // Readable by the service's user alone (found by QA: 0644, every tenant's data world-readable):
      // folders it makes 0700, a new database file 0600, and SQLite gives its -wal and -shm files
      // the database file's mode. An existing file keeps the mode its operator gave it.
      mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
      closeSync(openSync(resolve(path), 'a', 0o600));
    }
    const sqlite = new BetterSqlite3(path === ':memory:' ? ':memory:' : resolve(path));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    const writes = writeTracker(() => writerStatements++);
    // Asked of the raw connection (not through the statement cache, which would count it as a write).
    const version = sqlite.prepare('PRAGMA data_version').pluck();
    writerVersion = () => version.get();
    db = new Kysely<Schema>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite, writes) }) });
    dialect = 'sqlite';
    // An in-memory database is private to its connection: reads share the writer there.
    if (path !== ':memory:') {
      reader = withStatementCache(new BetterSqlite3(resolve(path), { readonly: true }));
      reader.pragma('busy_timeout = 5000');
      if (options.backgroundCheckpoints) {
        startCheckpoints = () => {
          sqlite.pragma('wal_autocheckpoint = 0');
          return startCheckpointer(resolve(path), (err) => {
            if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
            options.onCheckpointFailure?.(err);
          });
        };
      }
    }
  } else if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    postgres = openPostgres(url, options.postgres);
    db = postgres.db;
    dialect = 'postgres';
  } else {
    throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got ${JSON.stringify(url)}`);
  }
  const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    reader?.close();
    await (postgres ? postgres.close() : db.destroy());
    if (error instanceof DatabaseUnavailableError) throw new Error(`cannot reach the database (${rootMessage(error)}): check DATABASE_URL and that the server is running`);
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
  const checkpointer = startCheckpoints?.();
  const read = reader && writerVersion ? readSynchronously(reader, writerVersion, () => writerStatements) : (queries: readonly CompiledQuery[]) => readInTransaction(db, queries);
  return {
    db,
    dialect,
    transaction: (fn, options) => {
      const signal = options?.signal;
      const hook = currentCommitHook();
      if (!signal && !hook) return db.transaction().execute(fn);
      return db.transaction().execute(async (trx) => {
        signal?.throwIfAborted();
        const result = await fn(trx);
        // The call's hook (an idempotency claim marked applied) commits with the effect or not at all.
        if (hook) await hook(trx);
        // Nothing runs between this check and kysely's COMMIT but microtasks: no timer can abort in between.
        signal?.throwIfAborted();
        return result;
      });
    },
    read,
    appliedMigrations: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
    close: async () => {
      // Stopped first: closing the writer then checkpoints whatever remains and removes the WAL.
      await checkpointer?.close();
      reader?.close();
      await (postgres ? postgres.close() : db.destroy());
    },
  };
}

/**
 * kysely's SQLite dialect with write transactions that begin IMMEDIATE (see
 * `Database.transaction`). kysely's driver begins deferred transactions and has no option for it.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * Tables no cached read depends on (no prepared read selects them, and none cascades into a table
 * one does): audit records, usage counts, idempotency entries, sign-ups, secrets. Writes to them
 * leave the read cache alone — why: every oracle query writes its record, and a write-heavy
 * load would otherwise empty the cache on every call.
 */
const UNCACHED_TABLES = new Set([
  'queries',
  'usage',
  'idempotency',
  'signups',
  'server_secrets',
  // subscriptions and webhooks (src/subscriptions/): read only through kysely, never through `read`
  'subscriptions',
  'drift_outbox',
  'drift_states',
  'webhook_events',
  'webhook_deliveries',
  'webhook_attempts',
]);

const WRITE_TARGET = /^\s*(?:insert\s+(?:or\s+\w+\s+)?into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?(\w+)"?/i;
const READ_ONLY = /^\s*(?:select|begin|savepoint)\b/i;
const TRANSACTION_END = /^\s*(?:commit|end|rollback|release)\b/i;

/**
 * Given each SQL text prepared on the writer connection, calls `changed()` when the statement may
 * change what a cached read returns: any write, DDL or pragma — except writes to
 * `UNCACHED_TABLES` — and the end of a transaction that made such a change (its writes were
 * counted when prepared, before they were committed: a read in between refetched the old rows).
 * Preparing is synchronous with running the statement in kysely's driver, so nothing reads in
 * between.
 */
function writeTracker(changed: () => void): (sql: string) => void {
  let dirtyTransaction = false;
  return (sql) => {
    if (READ_ONLY.test(sql)) return;
    if (TRANSACTION_END.test(sql)) {
      if (dirtyTransaction) changed();
      dirtyTransaction = false;
      return;
    }
    const target = WRITE_TARGET.exec(sql);
    if (target && UNCACHED_TABLES.has(target[1].toLowerCase())) return;
    dirtyTransaction = true;
    changed();
  };
}

/** Most single-query results `readSynchronously` keeps (each a few rows: keys, entities, revisions). */
const READ_CACHE_SIZE = 4096;

/**
 * `Database.read` on a SQLite read connection: one deferred transaction, so one snapshot.
 * Single-query results are cached by SQL text and parameters for as long as the database is
 * unchanged (why: the statement costs 4–10 µs, mostly the WAL read lock, and the hot reads —
 * the API key, the entity — repeat on every call). Unchanged means both:
 * - no statement that may change them ran on this process's writer connection since
 *   (`writerStatements`, see `writeTracker`): our own writes are seen at once, even within the
 *   same turn of the event loop, and a read during an open write transaction is refetched
 *   after it;
 * - SQLite's `PRAGMA data_version` on the WRITER connection is unchanged: it changes whenever
 *   any other connection (another process: the CLI, a second server) commits, but not for the
 *   writer's own commits — so this process's audit-record and usage writes do not empty the
 *   cache (the reader's own data_version would change for those too). It costs a lock round
 *   trip, so it is read once per turn of the event loop: another process's commit is seen from
 *   the next turn, as if the read had come a moment earlier.
 * Cached rows are shared: callers must not mutate them.
 */
function readSynchronously(reader: import('better-sqlite3').Database, externalVersion: () => unknown, writerStatements: () => number): Database['read'] {
  const runAll = reader.transaction((queries: readonly CompiledQuery[]) => queries.map((q) => reader.prepare(q.sql).all(...(q.parameters as unknown[]))));
  let version: unknown;
  let writes = -1;
  let checkedThisTurn = false;
  const cache = new Map<string, unknown[]>();
  return async (queries) => {
    if (queries.length !== 1) return runAll(queries);
    if (!checkedThisTurn) {
      checkedThisTurn = true;
      setImmediate(() => (checkedThisTurn = false));
      const now = externalVersion();
      if (now !== version) {
        cache.clear();
        version = now;
      }
    }
    if (writerStatements() !== writes) {
      cache.clear();
      writes = writerStatements();
    }
    const q = queries[0];
    const key = q.parameters.length === 0 ? q.sql : `${q.sql}\u0000${JSON.stringify(q.parameters)}`;
    let rows = cache.get(key);
    if (!rows) {
      rows = reader.prepare(q.sql).all(...(q.parameters as unknown[]));
      if (cache.size >= READ_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(key, rows);
    }
    return [rows];
  };
}

/**
 * `Database.read` through kysely: one query as is, several in one transaction — REPEATABLE READ,
 * so on PostgreSQL they share one snapshot (READ COMMITTED takes one per statement). No cache:
 * on PostgreSQL every read sees every write committed before it started, on any replica.
 */
async function readInTransaction(db: Kysely<Schema>, queries: readonly CompiledQuery[]): Promise<unknown[][]> {
  if (queries.length === 1) return [(await db.executeQuery(queries[0])).rows];
  return db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const out: unknown[][] = [];
    for (const q of queries) out.push((await trx.executeQuery(q)).rows);
    return out;
  });
}

/** Most distinct SQL texts whose prepared statements are kept (IN-lists and batch inserts vary). */
const STATEMENT_CACHE_SIZE = 256;

/**
 * kysely's SQLite driver prepares every query anew; parsing SQL dominates a small query's cost.
 * Hand it a view of the connection whose `prepare` reuses statements by SQL text (bounded,
 * oldest evicted). Safe because better-sqlite3 runs each statement to completion synchronously
 * and the driver never streams (`iterate`) through our queries.
 */
function withStatementCache(sqlite: import('better-sqlite3').Database, onPrepare?: (sql: string) => void): import('better-sqlite3').Database {
  const cache = new Map<string, import('better-sqlite3').Statement>();
  return new Proxy(sqlite, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          onPrepare?.(sql);
          let stmt = cache.get(sql);
          if (stmt) {
            cache.delete(sql); // re-insert: most recently used last
          } else {
            stmt = target.prepare(sql);
            if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
          }
          cache.set(sql, stmt);
          return stmt;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The innermost cause's message (the driver's own words: `connect ECONNREFUSED 127.0.0.1:5432`). */
function rootMessage(err: unknown): string {
  let at = err;
  while (at instanceof Error && at.cause instanceof Error && at.cause !== at) at = at.cause;
  return at instanceof Error ? at.message : String(at);
}
