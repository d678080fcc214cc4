/**
 * The database a test runs on. `scripts/run-tests.js` runs the suite twice: on SQLite, then —
 * every test file that depends on the store — on PostgreSQL, on a throwaway server it starts
 * (`TEST_DATABASE=postgres`, `TEST_POSTGRES_URL`). A test that opens its database through
 * `startTestService()` or `openTestDatabase()` therefore runs on both, each time on a fresh
 * database of its own; nothing else is needed.
 */
import { test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database, type DialectName, type OpenOptions } from '../../src/store/database';

function dialectOfRun(): DialectName {
  const name = process.env.TEST_DATABASE ?? 'sqlite';
  if (name !== 'sqlite' && name !== 'postgres') throw new Error(`TEST_DATABASE must be sqlite or postgres, got ${name}`);
  return name;
}

/** The database of this run: `TEST_DATABASE`, default sqlite. */
export const TEST_DIALECT: DialectName = dialectOfRun();

/** A fresh, empty database for one test service. */
export interface TestDatabaseUrl {
  /** `DATABASE_URL` of the database. */
  readonly url: string;
  /** `MASTER_KEY` to use with it (PostgreSQL requires one; SQLite keeps a key file beside the database). */
  readonly masterKey: string | undefined;
  /** Remove the database (after everything using it has closed). */
  drop(): Promise<void>;
}

/** The PostgreSQL server of this run (`TEST_POSTGRES_URL`, set by scripts/run-tests.js). */
export function testPostgresUrl(): string {
  const url = process.env.TEST_POSTGRES_URL;
  if (!url) throw new Error('TEST_DATABASE=postgres needs TEST_POSTGRES_URL: run the tests with `node scripts/run-tests.js`, which starts a PostgreSQL server');
  return url;
}

let databases = 0;

/** Run `sql` on the server's maintenance database. */
async function admin(serverUrl: string, sql: string): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client } = require('pg') as typeof import('pg');
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A new empty database on the PostgreSQL server at `serverUrl` (its maintenance database's
 * URL); its URL and how to drop it. Its default collation is ICU's en-US, as on many production
 * servers, not the test server's C: a query whose order depends on the default collation
 * (where "B" < "a" is false and punctuation is ignored) orders differently here than on SQLite.
 */
export async function createPostgresDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `test_${process.pid}_${++databases}_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A fresh database of this run's dialect: a new SQLite file, or a new database on the PostgreSQL server. */
export async function freshDatabaseUrl(): Promise<TestDatabaseUrl> {
  if (TEST_DIALECT === 'postgres') {
    const created = await createPostgresDatabase(testPostgresUrl());
    return { url: created.url, masterKey: randomBytes(32).toString('base64'), drop: created.drop };
  }
  const dir = mkdtempSync(join(tmpdir(), 'forecast-test-'));
  return {
    url: `sqlite:${join(dir, 'test.db')}`,
    masterKey: undefined,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `openDatabase` on a fresh database of this run's dialect; `close()` also removes it. */
export async function openTestDatabase(options: OpenOptions = {}): Promise<Database> {
  const fresh = await freshDatabaseUrl();
  const database = await openDatabase(fresh.url, options).catch(async (err) => {
    await fresh.drop();
    throw err;
  });
  return {
    ...database,
    close: async () => {
      await database.close();
      await fresh.drop();
    },
  };
}

/**
 * `test` that runs only on the listed databases. Elsewhere it is reported skipped, with the
 * reason in its name (scripts/run-tests.js prints every skipped test after each pass).
 */
export function testOn(dialects: readonly DialectName[], reason: string): typeof test {
  if (dialects.includes(TEST_DIALECT)) return test;
  const skipped = (name: string, fn?: unknown, timeout?: number) => test.skip(`${name} [${dialects.join(', ')} only: ${reason}]`, fn as never, timeout);
  return skipped as unknown as typeof test;
}
