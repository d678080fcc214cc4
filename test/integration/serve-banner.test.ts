/**
 * What `forecast serve` prints on start (stdout, which usually ends up in a log): the addresses and
 * the database, never the database's password (found by QA: the banner printed DATABASE_URL whole).
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { printableDatabaseUrl } from '../../src/config';
import { startChildServer } from '../helpers/child-server';
import { freshDatabaseUrl, testOn } from '../helpers/database';

test('printableDatabaseUrl hides a password, in the user part or a parameter, and nothing else', () => {
  assert.equal(printableDatabaseUrl('sqlite:./data/forecast.db'), 'sqlite:./data/forecast.db');
  assert.equal(printableDatabaseUrl('postgres://app:hunter2@db:5432/forecast'), 'postgres://app:***@db:5432/forecast');
  assert.equal(printableDatabaseUrl('postgres://app@db/forecast?sslmode=require'), 'postgres://app@db/forecast?sslmode=require');
  assert.equal(printableDatabaseUrl('postgresql://db/forecast?user=app&password=hunter2'), 'postgresql://db/forecast?user=app&password=***');
  assert.equal(printableDatabaseUrl('postgres://app:p%40ss@db/forecast'), 'postgres://app:***@db/forecast');
  assert.ok(!printableDatabaseUrl('postgres://app:hun ter2@[db/forecast').includes('hun'));
});

testOn(['postgres'], 'a password needs a PostgreSQL URL')('the start-up banner names the database without its password', async () => {
  const fresh = await freshDatabaseUrl();
  const url = new URL(fresh.url);
  url.password = 'hunter2-banner'; // the test server trusts every connection: any password connects
  const server = await startChildServer({ database: { url: url.toString(), masterKey: fresh.masterKey }, env: { LOG_LEVEL: 'info' } });
  try {
    assert.match(server.stdout(), /\(database postgres(ql)?:\/\/[^)]*:\*\*\*@/);
    assert.ok(!server.stdout().includes('hunter2-banner') && !server.stderr().includes('hunter2-banner'), server.stdout());
  } finally {
    await server.stop();
    await fresh.drop();
  }
});
