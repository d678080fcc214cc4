/**
 * `Database.read`: hot reads on SQLite's read connection see this process's commits at once and
 * another connection's (the operator CLI's) from the next turn of the event loop, and several
 * queries share one snapshot — even though single-query results are cached between commits.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/store/database';
import { preparedQuery } from '../../../src/store/prepared';

test('cached reads follow every commit, from this process or another connection', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-read-'));
  const file = join(dir, 'read.db');
  const database = await openDatabase(`sqlite:${file}`);
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
    const other = new BetterSqlite3(file); // as the operator CLI would open it
    other.prepare(`UPDATE t SET v = 20 WHERE k = 'a'`).run();
    await nextTurn();
    assert.equal(await value('a'), 20, "another connection's commit is seen from the next turn");
    other.prepare(`DELETE FROM t WHERE k = 'b'`).run();
    other.close();
    await nextTurn();
    assert.equal(await value('b'), undefined);

    // An open write transaction is invisible to reads until it commits.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const writing = database.transaction(async (trx) => {
      await sql`UPDATE t SET v = 30 WHERE k = 'a'`.execute(trx);
      await held;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(await value('a'), 20, 'uncommitted writes are not read');
    release();
    await writing;
    assert.equal(await value('a'), 30);

    // Several queries: one snapshot, in order.
    const [x, y] = await database.read([byKey({ k: 'a' }), byKey({ k: 'missing' })]);
    assert.deepEqual([x, y], [[{ v: 30 }], []]);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
