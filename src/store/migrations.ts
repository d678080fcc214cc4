/**
 * Versioned schema migrations, in code, applied in order at start-up by kysely's Migrator
 * (which records them in `kysely_migration` and takes a lock, so concurrent replicas are safe).
 * Never edit a released migration: add the next one.
 */
import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { DialectName } from './database';

/** Migrations for a dialect (the few type differences are chosen here, nowhere else). */
export function migrations(dialect: DialectName): Record<string, Migration> {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  const real = dialect === 'postgres' ? 'double precision' : 'real';
  return {
    '0001_init': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('accounts')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('email', 'text', (c) => c.unique())
          .addColumn('tier', 'text', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('api_keys')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('hash', 'text', (c) => c.notNull().unique())
          .addColumn('prefix', 'text', (c) => c.notNull())
          .addColumn('scopes', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('expire_time', bigint)
          .addColumn('revoke_time', bigint)
          .execute();
        await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'id']).execute();
        await db.schema
          .createTable('entities')
          .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('entity', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('display_name', 'text', (c) => c.notNull())
          .addColumn('frequency', 'text', (c) => c.notNull())
          .addColumn('season_length', 'integer', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('update_time', bigint, (c) => c.notNull())
          .addPrimaryKeyConstraint('entities_pk', ['account_id', 'entity'])
          .execute();
        await db.schema.createIndex('entities_type').on('entities').columns(['account_id', 'type', 'entity']).execute();
        await db.schema
          .createTable('axes')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('entity', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('unit', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('axes_pk', ['account_id', 'entity', 'name'])
          .addForeignKeyConstraint('axes_entity_fk', ['account_id', 'entity'], 'entities', ['account_id', 'entity'], (c) =>
            c.onDelete('cascade'),
          )
          .execute();
        await db.schema
          .createTable('relations')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('parent', 'text', (c) => c.notNull())
          .addColumn('child', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addPrimaryKeyConstraint('relations_pk', ['account_id', 'parent', 'child', 'kind'])
          .execute();
        await db.schema.createIndex('relations_child').on('relations').columns(['account_id', 'child', 'kind']).execute();
        await db.schema
          .createTable('revisions')
          .addColumn('revision', bigint, (c) =>
            dialect === 'postgres' ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement(),
          )
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('observation_count', 'integer', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('observations')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('entity', 'text', (c) => c.notNull())
          .addColumn('axis', 'text', (c) => c.notNull())
          .addColumn('time', bigint, (c) => c.notNull())
          .addColumn('revision', bigint, (c) => c.notNull())
          .addColumn('value', sql.raw(real), (c) => c.notNull())
          .addPrimaryKeyConstraint('observations_pk', ['account_id', 'entity', 'axis', 'time', 'revision'])
          .execute();
        await db.schema.createIndex('observations_revision').on('observations').columns(['account_id', 'entity', 'revision']).execute();
        await db.schema
          .createTable('usage')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('month', 'text', (c) => c.notNull())
          .addColumn('count', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('usage_pk', ['account_id', 'month'])
          .execute();
        await db.schema
          .createTable('server_secrets')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .execute();
      },
    },
    '0002_idempotency': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('idempotency')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('method', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('fingerprint', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('outcome', 'text')
          .addColumn('response', 'text')
          .addColumn('headers', 'text')
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('lock_expire_time', bigint, (c) => c.notNull())
          .addColumn('expire_time', bigint, (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_pk', ['account_id', 'method', 'key'])
          .execute();
        await db.schema.createIndex('idempotency_expire').on('idempotency').column('expire_time').execute();
      },
    },
    '0003_signups': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('signups')
          .addColumn('address', 'text', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('account_id', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('signups_address').on('signups').columns(['address', 'create_time']).execute();
        await db.schema.createIndex('api_keys_account_time').on('api_keys').columns(['account_id', 'create_time', 'id']).execute();
      },
    },
    '0004_queries': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('queries')
          .addColumn('query_id', 'text', (c) => c.primaryKey())
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('entity', 'text', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('data_revision', bigint, (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('request', 'text', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .addColumn('output', 'text', (c) => c.notNull())
          .addColumn('output_digest', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('queries_account_entity').on('queries').columns(['account_id', 'entity', 'create_time']).execute();
      },
    },
    '0005_hardening': {
      async up(db: Kysely<any>) {
        // Data revisions per account (issue 11): a counter on the account row, and revisions
        // keyed by (account, revision). Existing revisions keep their numbers (global ones are
        // strictly increasing per account already); each account continues from its own latest.
        await db.schema.alterTable('accounts').addColumn('data_revision', bigint, (c) => c.notNull().defaultTo(0)).execute();
        await sql`UPDATE accounts SET data_revision = COALESCE((SELECT MAX(r.revision) FROM revisions r WHERE r.account_id = accounts.id), 0)`.execute(db);
        await db.schema
          .createTable('revisions_by_account')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('revision', bigint, (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('observation_count', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('revisions_by_account_pk', ['account_id', 'revision'])
          .execute();
        await sql`INSERT INTO revisions_by_account (account_id, revision, create_time, observation_count)
          SELECT account_id, revision, create_time, observation_count FROM revisions`.execute(db);
        await db.schema.dropTable('revisions').execute();
        await db.schema.alterTable('revisions_by_account').renameTo('revisions').execute();
        // Stored responses are sealed from now on; the ones stored before in clear that carry a
        // secret (new API keys) are removed (a retry with such a key then runs anew).
        await db
          .deleteFrom('idempotency')
          .where('method', 'in', ['/forecast.v1.KeyService/CreateKey', '/forecast.v1.KeyService/RotateKey', '/forecast.v1.AccountService/SignUp'])
          .execute();
      },
    },
    '0006_manifests': {
      async up(db: Kysely<any>) {
        // The signed manifest (RFC 8785 JSON, signature included) is written in the same row as
        // the query record, so one INSERT commits both; NULL for queries recorded before this.
        await db.schema.alterTable('queries').addColumn('manifest', 'text').execute();
        // Keyset order of ListManifests: (create_time, query_id), per account and per entity.
        await db.schema.createIndex('queries_account_time').on('queries').columns(['account_id', 'create_time', 'query_id']).execute();
        await db.schema.createIndex('queries_account_entity_time').on('queries').columns(['account_id', 'entity', 'create_time', 'query_id']).execute();
        await db.schema.dropIndex('queries_account_entity').execute();
        await db.schema
          .createTable('signing_keys')
          .addColumn('key_id', 'text', (c) => c.primaryKey())
          // 1, 2, …: the highest signs; unique, so concurrent first starts or rotations cannot both win.
          .addColumn('generation', 'integer', (c) => c.notNull().unique())
          // base64url of the 32-byte Ed25519 public key (published).
          .addColumn('public_key', 'text', (c) => c.notNull())
          // The PKCS #8 private key, sealed under the master key (store/secret-box.ts).
          .addColumn('private_key', 'text', (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .execute();
      },
    },
    '0007_graph': {
      async up(db: Kysely<any>) {
        // ListRelations by kind walks (parent, kind, child) within one kind; by parent and by
        // child the primary key and relations_child serve.
        await db.schema.createIndex('relations_kind').on('relations').columns(['account_id', 'kind', 'parent', 'child']).execute();
      },
    },
    '0008_subscriptions': {
      async up(db: Kysely<any>) {
        // text compares bytewise on PostgreSQL too, as 0009 makes every earlier table's (this one may run after it)
        const text = dialect === 'postgres' ? sql.raw('text collate "C"') : 'text';
        await db.schema
          .createTable('subscriptions')
          .addColumn('id', text, (c) => c.primaryKey())
          .addColumn('account_id', text, (c) => c.notNull())
          .addColumn('entity', text, (c) => c.notNull())
          .addColumn('axes', text, (c) => c.notNull())
          .addColumn('include_descendants', 'integer', (c) => c.notNull())
          .addColumn('url', text, (c) => c.notNull())
          .addColumn('events', text, (c) => c.notNull())
          .addColumn('level', sql.raw(real), (c) => c.notNull())
          .addColumn('state', text, (c) => c.notNull())
          .addColumn('pause_reason', text, (c) => c.notNull())
          .addColumn('secret', text, (c) => c.notNull())
          .addColumn('previous_secret', text)
          .addColumn('previous_secret_expire_time', bigint)
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('update_time', bigint, (c) => c.notNull())
          .execute();
        await db.schema.createIndex('subscriptions_account_time').on('subscriptions').columns(['account_id', 'create_time', 'id']).execute();
        await db.schema.createIndex('subscriptions_account_state').on('subscriptions').columns(['account_id', 'state']).execute();
        await db.schema
          .createTable('drift_outbox')
          .addColumn('id', bigint, (c) => (dialect === 'postgres' ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()))
          .addColumn('account_id', text, (c) => c.notNull())
          .addColumn('entity', text, (c) => c.notNull())
          .addColumn('revision', bigint, (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('lease_expire_time', bigint)
          .execute();
        await db.schema
          .createTable('drift_states')
          .addColumn('subscription_id', text, (c) => c.notNull())
          .addColumn('entity', text, (c) => c.notNull())
          .addColumn('axis', text, (c) => c.notNull())
          .addColumn('state', text, (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('update_time', bigint, (c) => c.notNull())
          .addPrimaryKeyConstraint('drift_states_pk', ['subscription_id', 'entity', 'axis'])
          .execute();
        await db.schema
          .createTable('webhook_events')
          .addColumn('id', text, (c) => c.primaryKey())
          .addColumn('account_id', text, (c) => c.notNull())
          .addColumn('subscription_id', text, (c) => c.notNull())
          .addColumn('type', text, (c) => c.notNull())
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('payload', text, (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webhook_events_subscription').on('webhook_events').columns(['subscription_id']).execute();
        await db.schema
          .createTable('webhook_deliveries')
          .addColumn('id', text, (c) => c.primaryKey())
          .addColumn('account_id', text, (c) => c.notNull())
          .addColumn('subscription_id', text, (c) => c.notNull())
          .addColumn('event_id', text, (c) => c.notNull())
          .addColumn('state', text, (c) => c.notNull())
          .addColumn('attempt_count', 'integer', (c) => c.notNull())
          .addColumn('next_attempt_time', bigint)
          .addColumn('lease_owner', text)
          .addColumn('lease_expire_time', bigint)
          .addColumn('create_time', bigint, (c) => c.notNull())
          .addColumn('update_time', bigint, (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_time']).execute();
        await db.schema.createIndex('webhook_deliveries_log').on('webhook_deliveries').columns(['subscription_id', 'create_time', 'id']).execute();
        await db.schema
          .createTable('webhook_attempts')
          .addColumn('delivery_id', text, (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('time', bigint, (c) => c.notNull())
          .addColumn('status_code', 'integer', (c) => c.notNull())
          .addColumn('error', text, (c) => c.notNull())
          .addColumn('latency_ms', sql.raw(real), (c) => c.notNull())
          .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
          .execute();
      },
    },
    '0009_postgres': {
      /**
       * PostgreSQL: every text column compares and sorts bytewise (`COLLATE "C"`), as SQLite's
       * do, whatever the database's default collation. Why: a server's default is often a
       * language collation (en_US, ICU), where "a:b" < "ab" < "B" — identifiers would list in
       * another order than on SQLite, and text indexes would not serve prefix matches. Applies
       * to every table present when it runs (those of all earlier migrations); a later
       * migration gives its own text columns `COLLATE "C"`.
       */
      async up(db: Kysely<any>) {
        if (dialect !== 'postgres') return;
        const { rows } = await sql<{ table_name: string; column_name: string }>`
          SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND data_type = 'text' AND table_name NOT LIKE 'kysely_%'
            AND (collation_name IS NULL OR collation_name <> 'C')
          ORDER BY table_name, ordinal_position`.execute(db);
        const columns = new Map<string, string[]>();
        for (const r of rows) columns.set(r.table_name, [...(columns.get(r.table_name) ?? []), r.column_name]);
        // Foreign keys between these columns stay valid (both sides deterministic collations).
        for (const [table, names] of columns) {
          const changes = sql.join(names.map((c) => sql`ALTER COLUMN ${sql.id(c)} TYPE text COLLATE "C"`));
          await sql`ALTER TABLE ${sql.id(table)} ${changes}`.execute(db);
        }
      },
    },
    '0010_signup_email': {
      /**
       * Sign-up no longer refuses an email that has an account (that answer told strangers which
       * emails have one): the email a sign-up gives is its contact address, not unique, kept here.
       * `email` (unique) stays for accounts the operator creates with `--email`.
       */
      async up(db: Kysely<any>) {
        const text = dialect === 'postgres' ? sql.raw('text collate "C"') : 'text';
        await db.schema.alterTable('accounts').addColumn('contact_email', text).execute();
      },
    },
    '0011_orphan_subscriptions': {
      /**
       * Deleting an entity now deletes its subscriptions (with their deliveries, attempts, events
       * and drift states); before, they were left behind, and a re-made entity of the same name
       * silently got the old subscriber. Removes those left behind: subscriptions whose entity is
       * gone, and those created before their entity's present incarnation (a subscription needs
       * its entity to exist, so one older than the entity was made on a deleted one; the margin
       * keeps replicas' clock skew from touching a subscription made just after its entity).
       */
      async up(db: Kysely<any>) {
        const margin = 5 * 60_000;
        const orphans = db
          .selectFrom('subscriptions as s')
          .select('s.id')
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('entities as e')
                  .select('e.entity')
                  .whereRef('e.account_id', '=', 's.account_id')
                  .whereRef('e.entity', '=', 's.entity')
                  .where('e.create_time', '<=', eb('s.create_time', '+', margin)),
              ),
            ),
          );
        const ids = (await orphans.execute()).map((r: { id: string }) => r.id);
        for (let i = 0; i < ids.length; i += 500) {
          const chunk = ids.slice(i, i + 500);
          await db
            .deleteFrom('webhook_attempts')
            .where('delivery_id', 'in', db.selectFrom('webhook_deliveries').select('id').where('subscription_id', 'in', chunk))
            .execute();
          for (const table of ['webhook_deliveries', 'webhook_events', 'drift_states']) await db.deleteFrom(table).where('subscription_id', 'in', chunk).execute();
          await db.deleteFrom('subscriptions').where('id', 'in', chunk).execute();
        }
      },
    },
    '0012_entity_incarnation': {
      /**
       * Each entity row gets an incarnation: random, set on insert and never updated, so a write
       * checked against an entity can tell, inside its transaction, that the entity was deleted and
       * made again under the same name meanwhile. `create_time` told them apart only when the two
       * were made in different milliseconds (same-millisecond re-creation, a clock stepping back or
       * replicas' clocks apart did not). Existing rows get 128 random bits (PostgreSQL: a UUIDv4's
       * 122, hex without dashes), drawn per row, so no two compare equal, and keep them.
       */
      async up(db: Kysely<any>) {
        const text = dialect === 'postgres' ? sql.raw('text collate "C"') : 'text';
        // SQLite adds a NOT NULL column only with a default (and cannot drop it later); every insert
        // names the value (the query layer's type requires it), so the default is never used.
        await db.schema.alterTable('entities').addColumn('incarnation', text, (c) => c.notNull().defaultTo('')).execute();
        const random = dialect === 'postgres' ? sql`replace(gen_random_uuid()::text, '-', '')` : sql`lower(hex(randomblob(16)))`;
        await sql`UPDATE entities SET incarnation = ${random}`.execute(db);
        if (dialect === 'postgres') await sql`ALTER TABLE entities ALTER COLUMN incarnation DROP DEFAULT`.execute(db);
      },
    },
    '0013_drift_outbox_entity': {
      /**
       * The drift outbox by entity: a claim takes no row while an older row of its entity is
       * claimed (`DriftOutbox.claim`), which it looks up here rather than by reading the table.
       */
      async up(db: Kysely<any>) {
        await db.schema.createIndex('drift_outbox_entity').on('drift_outbox').columns(['account_id', 'entity', 'id']).execute();
      },
    },
    '0014_axis_bounds': {
      /** An axis's optional bounds (`Axis.lower_bound`, `upper_bound`): null when unset. */
      async up(db: Kysely<any>) {
        await db.schema.alterTable('axes').addColumn('lower_bound', real).execute();
        await db.schema.alterTable('axes').addColumn('upper_bound', real).execute();
      },
    },
    '0015_subscription_start_revision': {
      /**
       * The account's data revision when a subscription was made (`SubscriptionRecord.startRevision`):
       * its scoring starts after it. Null in subscriptions made before (scoring starts as it did).
       */
      async up(db: Kysely<any>) {
        await db.schema.alterTable('subscriptions').addColumn('start_revision', bigint).execute();
      },
    },
  };
}

/** A kysely MigrationProvider over the in-code migrations. */
export function migrationProvider(dialect: DialectName): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
