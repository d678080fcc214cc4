/**
 * `Database.read`: hot reads see this process's commits at once and another connection's (the
 * operator CLI's, another replica's) no later than the next turn of the event loop, and several
 * queries share one snapshot. SQLite: single-query results are cached between commits on a
 * read-only connection; PostgreSQL: no cache, every read asks the server.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/store/database';
import { preparedQuery } from '../../../src/store/prepared';
import { freshDatabaseUrl, TEST_DIALECT } from '../../helpers/database';

/** A second connection to the database at `url`, as another process would open it. */
async function otherConnection(url: string): Promise<{ run(statement: string): Promise<void>; close(): Promise<void> }> {
  if (TEST_DIALECT === 'sqlite') {
    const other = new BetterSqlite3(url.slice('sqlite:'.length));
    return { run: async (statement) => void other.prepare(statement).run(), close: async () => void other.close() };
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client } = require('pg') as typeof import('pg');
  const other = new Client({ connectionString: url });
  await other.connect();
  return { run: async (statement) => void (await other.query(statement)), close: () => other.end() };
}

test('cached reads follow every commit, from this process or another connection', async () => {
  const fresh = await freshDatabaseUrl();
  const database = await openDatabase(fresh.url);
  try {
    await sql`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`.execute(database.db);
    await sql`INSERT INTO t (k, v) VALUES ('a', 1), ('b', 2)`.execute(database.db);
    const byKey = preparedQuery<{ k: string }, { v: number }>(database.db, (p) => (database.db as any).selectFrom('t').select('v').where('k', '=', p.k));
    const value = async (k: string) => ((await database.read([byKey({ k })]))[0] as { v: number }[])[0]?.v;

    assert.equal(await value('a'), 1);
    assert.equal(await value('a'), 1, 'a repeated read');
    assert.equal(await value('b'), 2, 'parameters are part of the cache key');

    await database.transaction((trx) => sql`UPDATE t SET v = 10 WHERE k = 'a'`.execute(trx));
    assert.equal(await value('a'), 10, "this process's writer commit is seen at once");

    const nextTurn = () => new Promise((r) => setImmediate(r));
    const other = await otherConnection(fresh.url); // as the operator CLI or another replica would open it
    await other.run(`UPDATE t SET v = 20 WHERE k = 'a'`);
    await nextTurn();
    assert.equal(await value('a'), 20, "another connection's commit is seen from the next turn");
    await other.run(`DELETE FROM t WHERE k = 'b'`);
    await other.close();
    await nextTurn();
    assert.equal(await value('b'), undefined);

    // An open write transaction is invisible to reads until it commits.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let updated!: () => void;
    const hasUpdated = new Promise<void>((r) => (updated = r));
    const writing = database.transaction(async (trx) => {
      await sql`UPDATE t SET v = 30 WHERE k = 'a'`.execute(trx);
      updated();
      await held;
    });
    await hasUpdated;
    assert.equal(await value('a'), 20, 'uncommitted writes are not read');
    release();
    await writing;
    assert.equal(await value('a'), 30);

    // Several queries: one snapshot, in order.
    const [x, y] = await database.read([byKey({ k: 'a' }), byKey({ k: 'missing' })]);
    assert.deepEqual([x, y], [[{ v: 30 }], []]);
  } finally {
    await database.close();
    await fresh.drop();
  }
});
