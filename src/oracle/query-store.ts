/**
 * The record of every oracle query: what a later audit needs to sign a manifest and to replay
 * the query bit for bit (data revision, inputs with digests, models with parameters and seeds,
 * the output and its digest).
 */
import { createHash } from 'node:crypto';
import { canonicalize } from 'json-canonicalize';
import type { Params } from '../engine/types';
import type { Database } from '../store/database';
import { GroupCommit } from '../store/group-commit';
import { preparedQuery } from '../store/prepared';
import type { QueriesTable } from '../store/schema';

/** Per-axis facts of one query. */
export interface AxisRecordOfQuery {
  /** The entity of the series, when not the queried one (depth ≥ 1: descendants). */
  readonly entity?: string;
  /** True when the series fitted is the sum of the entity's leaves (depth ≥ 1, no own data). */
  readonly aggregated?: boolean;
  readonly axis: string;
  readonly kind: string;
  readonly observations: number;
  readonly firstTime: string;
  readonly lastTime: string;
  readonly seriesDigest: string;
  readonly model: string;
  readonly requestedModel: string;
  readonly params: Params;
  readonly seed: number;
  readonly intervalMethod: string;
  readonly warnings: readonly string[];
}

export interface QueryRecord {
  readonly queryId: string;
  readonly accountId: string;
  readonly entity: string;
  readonly createTime: number;
  readonly dataRevision: number;
  readonly keyId: string;
  readonly request: unknown;
  readonly engine: { readonly name: string; readonly version: string; readonly runtime: string };
  readonly axes: readonly AxisRecordOfQuery[];
  readonly output: unknown;
}

/** Rows per INSERT statement (10 parameters each, well under SQLite's and PostgreSQL's limits). */
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

  /** Record a query; resolves with the output digest once the record is committed. */
  async save(r: QueryRecord): Promise<string> {
    const output = canonicalize(r.output);
    const outputDigest = createHash('sha256').update(output).digest('hex');
    await this.writer.add({
      query_id: r.queryId,
      account_id: r.accountId,
      entity: r.entity,
      create_time: r.createTime,
      data_revision: r.dataRevision,
      key_id: r.keyId,
      request: canonicalize(r.request),
      // Canonical JSON where a digest or a replay depends on it (request, output); the record is only parsed back.
      record: JSON.stringify({ engine: r.engine, axes: r.axes }),
      output,
      output_digest: outputDigest,
    });
    return outputDigest;
  }

  /** A stored query of the account, parsed. */
  async get(accountId: string, queryId: string): Promise<(QueryRecord & { outputDigest: string }) | undefined> {
    const row = await this.database.db.selectFrom('queries').selectAll().where('account_id', '=', accountId).where('query_id', '=', queryId).executeTakeFirst();
    if (!row) return undefined;
    const record = JSON.parse(row.record) as Pick<QueryRecord, 'engine' | 'axes'>;
    return {
      queryId: row.query_id,
      accountId: row.account_id,
      entity: row.entity,
      createTime: Number(row.create_time),
      dataRevision: Number(row.data_revision),
      keyId: row.key_id,
      request: JSON.parse(row.request),
      engine: record.engine,
      axes: record.axes,
      output: JSON.parse(row.output),
      outputDigest: row.output_digest,
    };
  }
}
