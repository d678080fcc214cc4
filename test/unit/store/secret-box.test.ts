/**
 * Secrets at rest: sealed under the master key, bound to their context, refused when tampered or
 * opened with another key; the master key found from the configuration; a database refuses a
 * master key other than its own; server secrets are never stored in clear.
 */
import { test } from '@jest/globals';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSecretBox, parseMasterKey } from '../../../src/store/master-key';
import { SecretBox, SecretBoxError } from '../../../src/store/secret-box';
import { serverSecret, verifyMasterKey } from '../../../src/store/secrets';
import { openTestDatabase } from '../../helpers/database';

const tmp = () => mkdtempSync(join(tmpdir(), 'forecast-secrets-'));

test('sealed values open only with the same key and context, and never contain the plaintext', () => {
  const box = new SecretBox(randomBytes(32));
  const secret = 'whsec_' + 'A'.repeat(40);
  const sealed = box.seal(secret, 'webhook-secret:sub_1');
  assert.ok(SecretBox.isSealed(sealed));
  assert.ok(!sealed.includes('AAAA'), 'no plaintext in the sealed form');
  assert.notEqual(box.seal(secret, 'webhook-secret:sub_1'), sealed, 'a fresh IV every time');
  assert.equal(box.openText(sealed, 'webhook-secret:sub_1'), secret);
  assert.throws(() => box.open(sealed, 'webhook-secret:sub_2'), SecretBoxError, 'bound to its context');
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'webhook-secret:sub_1'), SecretBoxError, 'another key');
  const raw = Buffer.from(sealed.slice(4), 'base64url');
  raw[raw.length - 1] ^= 1;
  assert.throws(() => box.open('sb1.' + raw.toString('base64url'), 'webhook-secret:sub_1'), SecretBoxError, 'tampered');
  assert.throws(() => box.open('sb1.AAAA', 'x'), SecretBoxError, 'truncated');
  assert.throws(() => box.open(secret, 'x'), SecretBoxError, 'not sealed');
  assert.throws(() => new SecretBox(randomBytes(16)), /32 bytes/);
});

test('the master key comes from MASTER_KEY, MASTER_KEY_FILE or a key file beside the SQLite database', () => {
  const key = randomBytes(32);
  const dir = tmp();
  try {
    const fromEnv = loadSecretBox({ databaseUrl: 'postgres://x', masterKey: key.toString('base64') });
    const fromHex = loadSecretBox({ databaseUrl: 'postgres://x', masterKey: key.toString('hex') });
    writeFileSync(join(dir, 'key'), key.toString('base64url') + '\n');
    const fromFile = loadSecretBox({ databaseUrl: 'postgres://x', masterKeyFile: join(dir, 'key') });
    const sealed = fromEnv.seal('s', 'c');
    assert.equal(fromHex.openText(sealed, 'c'), 's');
    assert.equal(fromFile.openText(sealed, 'c'), 's');
    assert.throws(() => loadSecretBox({ databaseUrl: 'postgres://x' }), /MASTER_KEY .*required with PostgreSQL/);
    assert.throws(() => loadSecretBox({ databaseUrl: 'postgres://x', masterKeyFile: join(dir, 'nope') }), /does not exist/);
    assert.throws(() => parseMasterKey('too short', 'MASTER_KEY'), /MASTER_KEY must hold 32 random bytes/);
    // SQLite default: a key file beside the database, private to its owner, the same on every start.
    const url = `sqlite:${join(dir, 'db', 'f.db')}`;
    const first = loadSecretBox({ databaseUrl: url });
    const file = join(dir, 'db', 'f.db.master-key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(loadSecretBox({ databaseUrl: url }).openText(first.seal('x', 'c'), 'c'), 'x');
    assert.equal(parseMasterKey(readFileSync(file, 'utf8'), 'file').length, 32);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a database refuses another master key; server secrets are stored sealed, legacy clear ones are sealed on first use', async () => {
  const database = await openTestDatabase();
  try {
    const box = new SecretBox(randomBytes(32));
    await verifyMasterKey(database, box);
    await verifyMasterKey(database, box); // the same key again is fine
    await assert.rejects(verifyMasterKey(database, new SecretBox(randomBytes(32))), /not the one this database was created with/);

    const cursor = await serverSecret(database, box, 'cursor');
    assert.equal(cursor.length, 32);
    assert.deepEqual(await serverSecret(database, box, 'cursor'), cursor, 'created once');
    const rows = await database.db.selectFrom('server_secrets').selectAll().execute();
    const stored = rows.find((r) => r.name === 'cursor')!.value;
    assert.ok(SecretBox.isSealed(stored));
    assert.ok(!stored.includes(cursor.toString('base64')) && !Buffer.from(stored).includes(cursor), 'never in clear');

    const legacy = randomBytes(32);
    await database.db.insertInto('server_secrets').values({ name: 'old', value: legacy.toString('base64') }).execute();
    assert.deepEqual(await serverSecret(database, box, 'old'), legacy);
    const resealed = await database.db.selectFrom('server_secrets').select('value').where('name', '=', 'old').executeTakeFirstOrThrow();
    assert.ok(SecretBox.isSealed(resealed.value));
    assert.deepEqual(await serverSecret(database, box, 'old'), legacy);
  } finally {
    await database.close();
  }
});
