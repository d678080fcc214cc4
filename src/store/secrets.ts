/**
 * Server secrets shared by every replica (e.g. the cursor-signing key): created once at random
 * in the database, so replicas sharing PostgreSQL agree without configuration, and stored sealed
 * under the master key (`store/secret-box.ts`), never in clear.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from './database';
import { SecretBox } from './secret-box';

/** The `server_secrets` row holding the master key's fingerprint (not a secret itself). */
const KEY_CHECK = 'master-key-check';

/**
 * Refuse a master key other than the one this database's secrets were sealed with (a replica
 * started with the wrong `MASTER_KEY`). The first start records the key's fingerprint.
 */
export async function verifyMasterKey(database: Database, box: SecretBox): Promise<void> {
  await database.db
    .insertInto('server_secrets')
    .values({ name: KEY_CHECK, value: box.keyCheck() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await database.db.selectFrom('server_secrets').select('value').where('name', '=', KEY_CHECK).executeTakeFirstOrThrow();
  if (!box.matchesKeyCheck(row.value)) {
    throw new Error('the master key (MASTER_KEY, MASTER_KEY_FILE or the key file beside the SQLite database) is not the one this database was created with');
  }
}

/** The secret named `name`, created on first use. A value stored in clear by an older version is sealed now. */
export async function serverSecret(database: Database, box: SecretBox, name: string): Promise<Buffer> {
  if (name === KEY_CHECK) throw new Error(`${name} is reserved`);
  const context = `server-secret:${name}`;
  await database.db
    .insertInto('server_secrets')
    .values({ name, value: box.seal(randomBytes(32), context) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await database.db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  if (SecretBox.isSealed(row.value)) return box.open(row.value, context);
  const legacy = Buffer.from(row.value, 'base64');
  await database.db.updateTable('server_secrets').set({ value: box.seal(legacy, context) }).where('name', '=', name).where('value', '=', row.value).execute();
  return legacy;
}
