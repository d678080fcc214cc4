/**
 * The record of every oracle query: the request's facts, the output with its digest and the
 * signed manifest (which carries the data revision, input digests, models with parameters and
 * seeds: everything an audit or a replay needs), written as one row so the record and its
 * manifest are committed together, before the response.
 */
import type { Database } from '../store/database';
import { GroupCommit } from '../store/group-commit';
import { preparedQuery } from '../store/prepared';
import type { QueriesTable } from '../store/schema';

export interface QueryRecord {
  readonly queryId: string;
  readonly accountId: string;
  readonly entity: string;
  readonly createTime: number;
  readonly dataRevision: number;
  /** The API key that asked. */
  readonly keyId: string;
  /** RFC 8785 canonical JSON of the forecast's proto3 JSON form. */
  readonly output: string;
  /** SHA-256 (hex) of `output`. */
  readonly outputDigest: string;
  /** The signed manifest, RFC 8785 canonical JSON with its signature. */
  readonly manifest: string;
}

/** Rows per INSERT statement (11 parameters each, well under SQLite's and PostgreSQL's limits). */
const INSERT_CHUNK = 50;

export class QueryStore {
  /** Records of concurrent queries are committed together (each still before its response). */
  private readonly writer: GroupCommit<QueriesTable>;

  constructor(private readonly database: Database) {
    const db = database.db;
    // The lone record (the usual case at moderate load) is inserted by a statement built once.
    const insertOne = preparedQuery<{ [K in keyof QueriesTable]: QueriesTable[K] }, never>(db, (p) =>
      db.insertInto('queries').values({
        query_id: p.query_id,
        account_id: p.account_id,
        entity: p.entity,
        create_time: p.create_time,
        data_revision: p.data_revision,
        key_id: p.key_id,
        request: p.request,
        record: p.record,
        output: p.output,
        output_digest: p.output_digest,
        manifest: p.manifest,
      }),
    );
    this.writer = new GroupCommit(async (rows) => {
      if (rows.length === 1) {
        await db.executeQuery(insertOne(rows[0]));
        return;
      }
      // One multi-row INSERT is atomic on its own: no transaction round trips for a small batch.
      if (rows.length <= INSERT_CHUNK) {
        await this.database.db.insertInto('queries').values(rows).execute();
        return;
      }
      await this.database.transaction(async (trx) => {
        for (let i = 0; i < rows.length; i += INSERT_CHUNK) await trx.insertInto('queries').values(rows.slice(i, i + INSERT_CHUNK)).execute();
      });
    });
  }

  /** Record a query with its manifest; resolves once both are committed. */
  async save(r: QueryRecord): Promise<void> {
    await this.writer.add({
      query_id: r.queryId,
      account_id: r.accountId,
      entity: r.entity,
      create_time: r.createTime,
      data_revision: r.dataRevision,
      key_id: r.keyId,
      // The normalised request is the manifest's `request`; not stored twice.
      request: '{}',
      record: '{}',
      output: r.output,
      output_digest: r.outputDigest,
      manifest: r.manifest,
    });
  }
}
