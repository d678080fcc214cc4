/**
 * Background WAL checkpoints (`store/checkpointer.ts`): with them on, the writer connection never
 * checkpoints inside a commit, yet the WAL stays small under a steady stream of commits (it is
 * restarted, not just copied back), nothing committed is lost, and a checkpointer that cannot
 * work says so.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startCheckpointer } from '../../../src/store/checkpointer';
import { openDatabase } from '../../../src/store/database';
import { preparedQuery } from '../../../src/store/prepared';
import { testOn } from '../../helpers/database';

const test = testOn(['sqlite'], "WAL checkpoints are SQLite's; PostgreSQL checkpoints by itself");

const ROW_BYTES = 3000;

/** The WAL header's first salt: SQLite changes it each time the WAL starts again from the beginning. */
function walSalt(wal: string): string {
  const fd = openSync(wal, 'r');
  try {
    const header = Buffer.alloc(32);
    readSync(fd, header, 0, 32, 0);
    return header.subarray(16, 20).toString('hex');
  } finally {
    closeSync(fd);
  }
}

test('the WAL stays small under steady commits and reads while the writer never checkpoints itself', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-ckpt-'));
  const file = join(dir, 'c.db');
  const database = await openDatabase(`sqlite:${file}`, { backgroundCheckpoints: true, onCheckpointFailure: (err) => assert.fail(String(err)) });
  try {
    const autocheckpoint = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(database.db);
    assert.equal(autocheckpoint.rows[0].wal_autocheckpoint, 0, 'the writer connection does not checkpoint inside commits');

    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(database.db);
    await sql`CREATE TABLE k (id TEXT PRIMARY KEY, v TEXT NOT NULL)`.execute(database.db);
    await sql`INSERT INTO k (id, v) VALUES ('a', 'b')`.execute(database.db);
    const key = preparedQuery<{ id: string }, { v: string }>(database.db, (p) => (database.db as any).selectFrom('k').select('v').where('id', '=', p.id));
    // The service's pattern under load: a hot read, then a single-row commit, every ~5 ms (reads
    // matter: with them, checkpoints that only copy back never let the WAL restart). It runs until
    // the checkpointer has restarted the WAL three times, however long that takes on this machine
    // (bounded only by a generous deadline): the pace of commits is capped by the 5 ms pause, so
    // the WAL's peak size does not depend on the machine's speed either.
    const body = 'x'.repeat(ROW_BYTES);
    let commits = 0;
    let largestWal = 0;
    const salts = new Set<string>();
    const deadline = Date.now() + 120_000;
    while (salts.size - 1 < 3 || commits < 100) {
      assert.ok(Date.now() < deadline, `after ${commits} commits the WAL had restarted only ${salts.size - 1} times`);
      await database.read([key({ id: 'a' })]);
      await sql`INSERT INTO t (body) VALUES (${body})`.execute(database.db);
      commits++;
      largestWal = Math.max(largestWal, statSync(`${file}-wal`).size);
      salts.add(walSalt(`${file}-wal`));
      await new Promise((r) => setTimeout(r, 5));
    }
    // Without the RESTART step the WAL grew with every commit (to 5 MB in 3 s) and never restarted.
    assert.ok(largestWal < 4e6, `the WAL peaked at ${largestWal} bytes`);
  } finally {
    await database.close();
  }
  assert.equal(existsSync(`${file}-wal`), false, 'closing checkpoints the rest and removes the WAL');
  const reopened = await openDatabase(`sqlite:${file}`);
  try {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(reopened.db);
    assert.ok(rows[0].n > 100, 'every committed row is in the database');
  } finally {
    await reopened.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a checkpointer that cannot open its database reports the failure', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'forecast-ckpt-'));
  try {
    const failure = await new Promise<unknown>((resolve) => startCheckpointer(join(dir, 'missing.db'), resolve));
    assert.match(String(failure), /checkpointer cannot open the database/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
