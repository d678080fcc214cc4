/**
 * Storage of relations (directed, typed edges between two entities of one account): create,
 * list with keyset pagination, delete, the cycle check, and the neighbour reads traversal and
 * hierarchies are built from. Every query is scoped by account.
 */
import { sql } from 'kysely';
import { lockUntilCommit } from '../store/advisory-lock';
import type { Database, Queryable } from '../store/database';

/** A relation as stored. */
export interface RelationRecord {
  readonly parent: string;
  readonly child: string;
  readonly kind: string;
  readonly createTime: number;
}

/** Filters of `list`; every given one must match. */
export interface RelationFilter {
  readonly parent?: string;
  readonly child?: string;
  readonly kind?: string;
}

/** A keyset position: the (parent, kind, child) of the last relation of a page. */
export type RelationPosition = readonly [parent: string, kind: string, child: string];

/** One edge as traversal sees it. */
export interface Edge {
  readonly parent: string;
  readonly child: string;
}

/** Entities per IN-list: well under SQLite's and PostgreSQL's parameter limits. */
const IN_CHUNK = 500;

function toRecord(row: { parent: string; child: string; kind: string; create_time: number }): RelationRecord {
  return { parent: row.parent, child: row.child, kind: row.kind, createTime: Number(row.create_time) };
}

export class RelationStore {
  constructor(readonly database: Database) {}

  /**
   * Serialise writers of one account's relations of one kind until the transaction ends, so a
   * cycle check and its insert are atomic against another request's (`store/advisory-lock.ts`).
   */
  async lockKind(trx: Queryable, accountId: string, kind: string): Promise<void> {
    await lockUntilCommit(this.database, trx, `relations|${accountId}|${kind}`);
  }

  /** True if `descendant` is reachable from `ancestor` by edges of `kind` (or is it). */
  async reaches(q: Queryable, accountId: string, ancestor: string, descendant: string, kind: string): Promise<boolean> {
    if (ancestor === descendant) return true;
    // UNION (not UNION ALL) makes the recursion stop on cycles; there are none, but be safe.
    const res = await sql<{ hit: number }>`
      WITH RECURSIVE down(e) AS (
        SELECT child FROM relations WHERE account_id = ${accountId} AND parent = ${ancestor} AND kind = ${kind}
        UNION
        SELECT r.child FROM relations r JOIN down ON r.parent = down.e WHERE r.account_id = ${accountId} AND r.kind = ${kind}
      )
      SELECT 1 AS hit FROM down WHERE e = ${descendant} LIMIT 1`.execute(q);
    return res.rows.length > 0;
  }

  /** Insert a relation if absent; returns the stored relation. */
  async add(q: Queryable, accountId: string, parent: string, child: string, kind: string, now: number): Promise<RelationRecord> {
    await q
      .insertInto('relations')
      .values({ account_id: accountId, parent, child, kind, create_time: now })
      .onConflict((oc) => oc.columns(['account_id', 'parent', 'child', 'kind']).doNothing())
      .execute();
    const row = await q
      .selectFrom('relations')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('parent', '=', parent)
      .where('child', '=', child)
      .where('kind', '=', kind)
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** Relations matching `filter` after `after` (exclusive) in (parent, kind, child) order, at most `limit`. */
  async list(accountId: string, filter: RelationFilter, after: RelationPosition | undefined, limit: number): Promise<RelationRecord[]> {
    let query = this.database.db.selectFrom('relations').selectAll().where('account_id', '=', accountId);
    if (filter.parent !== undefined) query = query.where('parent', '=', filter.parent);
    if (filter.child !== undefined) query = query.where('child', '=', filter.child);
    if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
    if (after) {
      const [p, k, c] = after;
      query = query.where((eb) =>
        eb.or([eb('parent', '>', p), eb.and([eb('parent', '=', p), eb('kind', '>', k)]), eb.and([eb('parent', '=', p), eb('kind', '=', k), eb('child', '>', c)])]),
      );
    }
    const rows = await query.orderBy('parent').orderBy('kind').orderBy('child').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** Delete one relation; the deleted record, or undefined when there was none. One statement. */
  async delete(accountId: string, parent: string, child: string, kind: string): Promise<RelationRecord | undefined> {
    const row = await this.database.db
      .deleteFrom('relations')
      .where('account_id', '=', accountId)
      .where('parent', '=', parent)
      .where('child', '=', child)
      .where('kind', '=', kind)
      .returningAll()
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /**
   * Every edge of `kind` touching `entities` in the given direction(s): `down` = edges whose
   * parent is one of them, `up` = edges whose child is one of them. One query per chunk of 500;
   * a chunk not yet read when `signal` aborts is not read.
   */
  async edgesOf(accountId: string, entities: readonly string[], kind: string, direction: 'down' | 'up', signal?: AbortSignal): Promise<Edge[]> {
    const out: Edge[] = [];
    const column = direction === 'down' ? 'parent' : 'child';
    for (let i = 0; i < entities.length; i += IN_CHUNK) {
      signal?.throwIfAborted();
      const chunk = entities.slice(i, i + IN_CHUNK);
      const rows = await this.database.db
        .selectFrom('relations')
        .select(['parent', 'child'])
        .where('account_id', '=', accountId)
        .where('kind', '=', kind)
        .where(column, 'in', chunk)
        .execute();
      for (const r of rows) out.push({ parent: r.parent, child: r.child });
    }
    return out;
  }
}
