/**
 * The one query layer: kysely over SQLite (embedded default, better-sqlite3) or PostgreSQL
 * (scale-out, `pg`). Feature code writes dialect-neutral kysely queries against `Schema`.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, Migrator, SqliteDialect, PostgresDialect, type Transaction } from 'kysely';
import type { Schema } from './schema';
import { migrationProvider } from './migrations';

export type DialectName = 'sqlite' | 'postgres';

/** An open database: the kysely handle and which dialect it speaks. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  /** Run `fn` in one transaction (all or nothing). */
  transaction<T>(fn: (trx: Transaction<Schema>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A query runner: the database itself or a transaction inside it. */
export type Queryable = Kysely<Schema> | Transaction<Schema>;

/**
 * Open `url` (`sqlite:PATH`, `sqlite::memory:`, or `postgres://…`) and apply pending migrations.
 * For SQLite, the file's directory is created if missing.
 */
export async function openDatabase(url: string): Promise<Database> {
  let db: Kysely<Schema>;
  let dialect: DialectName;
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    // Loaded lazily so a PostgreSQL deployment needs no native SQLite build.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const BetterSqlite3 = require('better-sqlite3') as typeof import('better-sqlite3');
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    const sqlite = new BetterSqlite3(path === ':memory:' ? ':memory:' : resolve(path));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
    db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
    dialect = 'sqlite';
  } else if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pg = require('pg') as typeof import('pg');
    // BIGINT columns hold epoch-ms times and revisions: parse them as numbers (< 2^53).
    pg.types.setTypeParser(20, (v: string) => Number(v));
    db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10 }) }) });
    dialect = 'postgres';
  } else {
    throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got ${JSON.stringify(url)}`);
  }
  const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    await db.destroy();
    throw new Error(`database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
  return {
    db,
    dialect,
    transaction: (fn) => db.transaction().execute(fn),
    close: () => db.destroy(),
  };
}
