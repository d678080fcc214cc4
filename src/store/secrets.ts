/**
 * Server secrets shared by every replica (e.g. the cursor-signing key): created once at random
 * in the database, so replicas sharing PostgreSQL agree without configuration.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from './database';

/** The secret named `name`, created on first use. */
export async function serverSecret(database: Database, name: string): Promise<Buffer> {
  await database.db
    .insertInto('server_secrets')
    .values({ name, value: randomBytes(32).toString('base64') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await database.db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}
