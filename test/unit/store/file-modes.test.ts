/** The SQLite database is readable by the service's user alone: it holds every tenant's data. */
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/store/database';
import { testOn } from '../../helpers/database';

const test = testOn(['sqlite'], 'file modes are those of the embedded SQLite database; PostgreSQL keeps its own files');
const mode = (path: string) => statSync(path).mode & 0o777;

test('a new database file, its WAL and shared-memory files are 0600 and the folders made for it 0700 (found by QA: 0644)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'file-modes-'));
  const file = join(root, 'made', 'for', 'it', 'forecast.db');
  const database = await openDatabase(`sqlite:${file}`);
  try {
    await sql`CREATE TABLE t (x INTEGER)`.execute(database.db);
    await sql`INSERT INTO t VALUES (1)`.execute(database.db);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(mode(f).toString(8), '600', f);
    for (const d of ['made', 'made/for', 'made/for/it']) assert.equal(mode(join(root, d)).toString(8), '700', d);
  } finally {
    await database.close();
  }
});

test('an existing database file keeps the mode its operator gave it', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'file-modes-')), 'forecast.db');
  writeFileSync(file, '', { mode: 0o640 });
  const database = await openDatabase(`sqlite:${file}`);
  await database.close();
  assert.equal(mode(file).toString(8), '640');
});
