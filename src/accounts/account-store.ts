/** Storage of accounts and API keys. Every query is scoped by account where a tenant is known. */
import type { Clock } from '../clock';
import { newId } from '../ids';
import type { Database, Queryable } from '../store/database';
import { generateApiKey, hashApiKey, DISPLAY_PREFIX_LENGTH } from './api-key';
import { DEFAULT_SCOPES, type Scope, type Tier } from './tiers';
import { ServiceError, quote } from '../rpc/errors';
import { prepared } from '../store/prepared';
import type { AccountsTable, ApiKeysTable } from '../store/schema';

/** A key row joined with its account's columns (the auth look-up). */
/** How a key is written: the call's signal (not committed once aborted) and its creation time. */
export interface KeyWrite {
  readonly signal?: AbortSignal;
  readonly createTime?: number;
}

type KeyWithAccountRow = Omit<ApiKeysTable, 'hash'> & Pick<AccountsTable, 'tier'> & { email: string | null; account_create_time: number };

export interface AccountRow {
  id: string;
  email: string | null;
  tier: Tier;
  createTime: number;
}

export interface KeyRow {
  id: string;
  accountId: string;
  prefix: string;
  scopes: Scope[];
  name: string;
  createTime: number;
  expireTime: number | null;
  revokeTime: number | null;
}

/** A key as returned once at creation: the secret plus its record. */
export interface CreatedKey {
  apiKey: string;
  key: KeyRow;
}

export class AccountStore {
  private readonly keysFound = new WeakMap<object, { account: AccountRow; key: KeyRow }>();
  /** Every authenticated call runs this: prepared once (see store/prepared.ts). */
  private readonly keyByHash;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {
    this.keyByHash = prepared<{ hash: string }, KeyWithAccountRow>(database, (p) =>
      database.db
        .selectFrom('api_keys as k')
        .innerJoin('accounts as a', 'a.id', 'k.account_id')
        .select(['k.id', 'k.account_id', 'k.prefix', 'k.scopes', 'k.name', 'k.create_time', 'k.expire_time', 'k.revoke_time', (eb) => eb.fn.coalesce('a.email', 'a.contact_email').as('email'), 'a.tier', 'a.create_time as account_create_time'])
        .where('k.hash', '=', p.hash),
    );
  }

  /** Create an account with a first key. Email, when given, must be unused (409 `already_exists`). */
  async createAccount(tier: Tier, email: string | null, scopes: readonly Scope[] = DEFAULT_SCOPES): Promise<{ account: AccountRow; created: CreatedKey }> {
    return this.database.transaction((trx) => this.createAccountIn(trx, tier, email, scopes));
  }

  /** `contact`: a sign-up's email (not unique, see `signUp`) instead of a unique `email`. */
  private async createAccountIn(trx: Queryable, tier: Tier, email: string | null, scopes: readonly Scope[], contact = false): Promise<{ account: AccountRow; created: CreatedKey }> {
    if (email !== null && !contact) {
      const taken = await trx.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirst();
      if (taken) throw new ServiceError('already_exists', `an account with email ${quote(email)} already exists`, { field: 'email' });
    }
    const account: AccountRow = { id: newId('acct', this.clock), email, tier, createTime: this.clock.now() };
    const columns = contact ? { contact_email: email } : { email };
    await trx.insertInto('accounts').values({ id: account.id, ...columns, tier, create_time: account.createTime }).execute();
    const created = await this.insertKey(trx, account.id, scopes, null, 'default', account.createTime);
    return { account, created };
  }

  /** Create a key for an account (not committed once `signal` aborted). */
  /**
   * Create a key. `at.createTime` (default now) is the time it is stamped with: a caller that
   * derived `expireTime` from its own clock reading passes that reading, so a lifetime is exact.
   */
  async createKey(accountId: string, scopes: readonly Scope[], expireTime: number | null, name = '', at: KeyWrite = {}): Promise<CreatedKey> {
    const createTime = at.createTime ?? this.clock.now();
    if (!at.signal) return this.insertKey(this.database.db, accountId, scopes, expireTime, name, createTime);
    return this.database.transaction((trx) => this.insertKey(trx, accountId, scopes, expireTime, name, createTime), { signal: at.signal });
  }

  private async insertKey(q: Queryable, accountId: string, scopes: readonly Scope[], expireTime: number | null, name: string, createTime: number): Promise<CreatedKey> {
    const apiKey = generateApiKey();
    const key: KeyRow = {
      id: newId('key', this.clock),
      accountId,
      prefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH),
      scopes: [...scopes],
      name,
      createTime,
      expireTime,
      revokeTime: null,
    };
    await q
      .insertInto('api_keys')
      .values({
        id: key.id,
        account_id: accountId,
        hash: hashApiKey(apiKey),
        prefix: key.prefix,
        scopes: key.scopes.join(' '),
        name,
        create_time: key.createTime,
        expire_time: expireTime,
        revoke_time: null,
      })
      .execute();
    return { apiKey, key };
  }

  /** Revoke a key of the account now; false when no such key (of that account) exists. Not committed once `signal` aborted. */
  async revokeKey(accountId: string, keyId: string, signal?: AbortSignal): Promise<boolean> {
    return this.database.transaction(async (trx) => {
      const res = await trx
        .updateTable('api_keys')
        .set({ revoke_time: this.clock.now() })
        .where('account_id', '=', accountId)
        .where('id', '=', keyId)
        .where('revoke_time', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    }, { signal });
  }

  /** Find the key with this hash together with its account (no validity checks). */
  async findByKeyHash(hash: string): Promise<{ account: AccountRow; key: KeyRow } | undefined> {
    const [row] = await this.keyByHash({ hash });
    if (!row) return undefined;
    // Rows of prepared reads are cached and shared while the database is unchanged: convert each once.
    let found = this.keysFound.get(row);
    if (!found) {
      found = { account: { id: row.account_id, email: row.email, tier: row.tier as Tier, createTime: Number(row.account_create_time) }, key: toKeyRow(row) };
      this.keysFound.set(row, found);
    }
    return found;
  }

  /** One key of the account, or undefined. */
  async getKey(accountId: string, keyId: string): Promise<KeyRow | undefined> {
    const row = await this.database.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
    return row ? toKeyRow(row) : undefined;
  }

  /** Keys of the account, newest first, strictly after the keyset position `after` ([create_time, id]). */
  async listKeys(accountId: string, after: readonly [number, string] | undefined, limit: number): Promise<KeyRow[]> {
    let q = this.database.db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId);
    if (after) {
      const [time, id] = after;
      q = q.where((eb) => eb.or([eb('create_time', '<', time), eb.and([eb('create_time', '=', time), eb('id', '<', id)])]));
    }
    const rows = await q.orderBy('create_time', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toKeyRow);
  }

  /**
   * Replace a key: a new key with the same scopes and name, expiring at `newExpireTime` or, when
   * that is undefined, when the old key would have; the old one expiring at `oldExpireTime` (or
   * its own earlier expiry). One transaction.
   */
  async rotateKey(
    accountId: string,
    keyId: string,
    oldExpireTime: number,
    newExpireTime?: number,
    at: KeyWrite = {},
  ): Promise<{ created: CreatedKey; previous: KeyRow } | undefined> {
    return this.database.transaction(async (trx) => {
      const row = await trx.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
      if (!row) return undefined;
      const old = toKeyRow(row);
      const expire = old.expireTime === null ? oldExpireTime : Math.min(old.expireTime, oldExpireTime);
      await trx.updateTable('api_keys').set({ expire_time: expire }).where('account_id', '=', accountId).where('id', '=', keyId).execute();
      const created = await this.insertKey(trx, accountId, old.scopes, newExpireTime ?? old.expireTime, old.name, at.createTime ?? this.clock.now());
      return { created, previous: { ...old, expireTime: expire } };
    }, { signal: at.signal });
  }

  /**
   * Create a Free account by sign-up unless `address` already made `limit` sign-ups since `since`:
   * the count and the creation happen in one transaction, so concurrent sign-ups cannot pass the
   * limit together. Returns the account, or the time the oldest counted sign-up was made. The
   * email need not be unused: an answer that depended on it would tell anyone whether an email has
   * an account (it is stored as the account's contact email, see migration 0010).
   */
  async signUp(email: string, address: string, since: number, limit: number, signal?: AbortSignal): Promise<{ account: AccountRow; created: CreatedKey } | { limited: number }> {
    return this.database.transaction(async (trx) => {
      const row = await trx
        .selectFrom('signups')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('create_time').as('oldest')])
        .where('address', '=', address)
        .where('create_time', '>', since)
        .executeTakeFirst();
      if (Number(row?.n ?? 0) >= limit) return { limited: Number(row?.oldest ?? this.clock.now()) };
      const result = await this.createAccountIn(trx, 'free', email, DEFAULT_SCOPES, true);
      await trx.insertInto('signups').values({ address, create_time: this.clock.now(), account_id: result.account.id }).execute();
      return result;
    }, { signal });
  }

  async getAccount(id: string): Promise<AccountRow | undefined> {
    const row = await this.database.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toAccountRow(row) : undefined;
  }

  async firstAccount(): Promise<AccountRow | undefined> {
    const row = await this.database.db.selectFrom('accounts').selectAll().orderBy('create_time').orderBy('id').limit(1).executeTakeFirst();
    return row ? toAccountRow(row) : undefined;
  }

  async setTier(id: string, tier: Tier): Promise<boolean> {
    const res = await this.database.db.updateTable('accounts').set({ tier }).where('id', '=', id).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
}

/** An account row as the service sees it: the email is the unique one, else a sign-up's contact email. */
function toAccountRow(row: { id: string; email: string | null; contact_email: string | null; tier: string; create_time: number }): AccountRow {
  return { id: row.id, email: row.email ?? row.contact_email, tier: row.tier as Tier, createTime: row.create_time };
}

function toKeyRow(row: { id: string; account_id: string; prefix: string; scopes: string; name: string; create_time: number; expire_time: number | null; revoke_time: number | null }): KeyRow {
  return {
    id: row.id,
    accountId: row.account_id,
    prefix: row.prefix,
    scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
    name: row.name,
    createTime: Number(row.create_time),
    expireTime: row.expire_time === null ? null : Number(row.expire_time),
    revokeTime: row.revoke_time === null ? null : Number(row.revoke_time),
  };
}
