/**
 * Reading signed manifests back: they are stored in the oracle's query records (`queries`
 * table, `manifest` column, written with the record in one INSERT), always per account.
 */
import type { Database } from '../store/database';

/** A stored manifest. */
export interface StoredManifest {
  readonly queryId: string;
  readonly createTime: number;
  /** RFC 8785 canonical JSON with the signature, exactly as signed. */
  readonly json: string;
  /** The canonical JSON of the recorded forecast (its SHA-256 is the manifest's output digest). */
  readonly output: string;
}

/** Filters and keyset position of a listing (newest first). */
export interface ManifestFilter {
  readonly entity?: string;
  /** Created at or after (epoch ms). */
  readonly start?: number;
  /** Created before (epoch ms). */
  readonly end?: number;
  /** Keyset position: strictly older than this (create_time, query_id). */
  readonly before?: readonly [number, string];
  readonly limit: number;
}

/** Reads of the account's signed manifests (written by `oracle/query-store.ts`). */
export class ManifestStore {
  constructor(private readonly database: Database) {}

  /** The manifest of one of the account's queries; undefined if absent, another account's, or recorded without one. */
  async get(accountId: string, queryId: string): Promise<StoredManifest | undefined> {
    const row = await this.database.db
      .selectFrom('queries')
      .select(['query_id', 'create_time', 'manifest', 'output'])
      .where('account_id', '=', accountId)
      .where('query_id', '=', queryId)
      .where('manifest', 'is not', null)
      .executeTakeFirst();
    return row ? { queryId: row.query_id, createTime: Number(row.create_time), json: row.manifest!, output: row.output } : undefined;
  }

  /**
   * The account's manifests matching `filter`, newest first by (create_time, query_id): their ids,
   * times and sizes only (characters of the manifest's JSON), so a page can be cut by size before
   * any manifest is read (found by QA: a page read 201 whole manifests, each up to megabytes, to
   * return at most 3 MiB of them). `manifests` reads the page's.
   */
  async list(accountId: string, filter: ManifestFilter): Promise<ManifestEntry[]> {
    let q = this.database.db
      .selectFrom('queries')
      .select((eb) => ['query_id', 'create_time', eb.fn<number>('length', ['manifest']).as('size')])
      .where('account_id', '=', accountId)
      .where('manifest', 'is not', null);
    if (filter.entity !== undefined) q = q.where('entity', '=', filter.entity);
    if (filter.start !== undefined) q = q.where('create_time', '>=', filter.start);
    if (filter.end !== undefined) q = q.where('create_time', '<', filter.end);
    if (filter.before) {
      const [time, id] = filter.before;
      q = q.where((eb) => eb.or([eb('create_time', '<', time), eb.and([eb('create_time', '=', time), eb('query_id', '<', id)])]));
    }
    const rows = await q.orderBy('create_time', 'desc').orderBy('query_id', 'desc').limit(filter.limit).execute();
    return rows.map((r) => ({ queryId: r.query_id, createTime: Number(r.create_time), size: Number(r.size) }));
  }

  /** The manifests' JSON of `queryIds` (the account's; those without one left out). */
  async manifests(accountId: string, queryIds: readonly string[]): Promise<Map<string, string>> {
    if (queryIds.length === 0) return new Map();
    const rows = await this.database.db
      .selectFrom('queries')
      .select(['query_id', 'manifest'])
      .where('account_id', '=', accountId)
      .where('query_id', 'in', queryIds)
      .where('manifest', 'is not', null)
      .execute();
    return new Map(rows.map((r) => [r.query_id, r.manifest!]));
  }
}

/** One manifest of a listing, without its JSON (`ManifestStore.list`). */
export interface ManifestEntry {
  readonly queryId: string;
  readonly createTime: number;
  /** Characters of the manifest's JSON. */
  readonly size: number;
}
