/**
 * Storage of observations with data revisions. Every accepted batch gets the account's next
 * revision (a counter per account, `accounts.data_revision`, incremented in the ingest's own
 * transaction: strictly increasing per account, exact under concurrency — on PostgreSQL the
 * counter row's lock orders concurrent ingests of one account — and telling no account anything
 * about another's activity). A value for an existing (axis, time) is a correction stored beside
 * the old one, so a read "as of" revision R sees, for each (axis, time), the newest value
 * recorded at or before R.
 */
import type { ExpressionBuilder } from 'kysely';
import type { Database, Queryable } from '../store/database';
import type { ObservationsTable, Schema } from '../store/schema';
import { prepared } from '../store/prepared';
import { invalidArgument } from '../rpc/errors';
import { formatTime } from '../clock';
import { indexOf, type Frequency } from './frequency';

/** Most grid steps one axis may span, first to last observation (a 10-year hourly series is ~87,600). */
export const MAX_AXIS_SPAN_STEPS = 200_000;

/** One observation as stored. */
export interface ObservationRecord {
  readonly axis: string;
  readonly time: number;
  readonly value: number;
  readonly revision: number;
}

/** Observations of one entity in one ingest. */
export interface IngestBatch {
  readonly entity: string;
  /** How the request names these rows (`observations` → `observations[3].time`); default `observations`. */
  readonly field?: string;
  readonly rows: readonly { readonly axis: string; readonly time: number; readonly value: number }[];
}

export interface IngestResult {
  readonly revision: number;
  readonly accepted: number;
  /** Rows for an (axis, time) that already had a value (identical or not): each supersedes it. */
  readonly corrections: number;
}

export interface ListFilter {
  readonly axis?: string;
  readonly start?: number;
  readonly end?: number;
  /** Read as of this revision (inclusive). */
  readonly asOf: number;
  /** Keyset position: strictly after this (axis, time). */
  readonly after?: readonly [string, number];
  readonly limit: number;
}

/** Rows per INSERT statement (6 parameters each, well under SQLite's and PostgreSQL's limits). */
const CHUNK = 500;

export class ObservationStore {
  /** Read on every oracle query: prepared once (store/prepared.ts). */
  private readonly latest;
  private readonly newest;

  constructor(private readonly database: Database) {
    const db = database.db;
    this.latest = prepared<{ account: string }, { r: number | null }>(database, (p) => db.selectFrom('accounts').select('data_revision as r').where('id', '=', p.account));
    this.newest = prepared<{ account: string; entity: string }, { r: number | null }>(database, (p) =>
      db.selectFrom('observations').select((eb) => eb.fn.max('revision').as('r')).where('account_id', '=', p.account).where('entity', '=', p.entity),
    );
  }

  /**
   * Store all batches in one transaction as one revision (all or nothing; not committed once
   * `signal` aborted). An axis that would span more than `MAX_AXIS_SPAN_STEPS` with its stored
   * observations is refused with 400 naming the row that stretches it.
   */
  async ingest(accountId: string, batches: readonly IngestBatch[], now: number, signal?: AbortSignal): Promise<IngestResult> {
    const accepted = batches.reduce((n, b) => n + b.rows.length, 0);
    return this.database.transaction(async (trx) => {
      const { data_revision: revision } = await trx
        .updateTable('accounts')
        .set((eb) => ({ data_revision: eb('data_revision', '+', 1) }))
        .where('id', '=', accountId)
        .returning('data_revision')
        .executeTakeFirstOrThrow();
      await checkSpans(trx, accountId, batches);
      await trx.insertInto('revisions').values({ account_id: accountId, revision, create_time: now, observation_count: accepted }).execute();
      for (const batch of batches) {
        for (let i = 0; i < batch.rows.length; i += CHUNK) {
          const chunk = batch.rows.slice(i, i + CHUNK).map((r) => ({
            account_id: accountId,
            entity: batch.entity,
            axis: r.axis,
            time: r.time,
            revision: Number(revision),
            value: r.value,
          }));
          await trx.insertInto('observations').values(chunk).execute();
        }
      }
      // Counted once per entity, after every batch is in: an entity may come in several messages of a stream.
      let corrections = 0;
      for (const entity of new Set(batches.map((b) => b.entity))) {
        const { n } = await trx
          .selectFrom('observations as o')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('o.account_id', '=', accountId)
          .where('o.entity', '=', entity)
          .where('o.revision', '=', Number(revision))
          .where((eb) => eb.exists(otherVersions(eb, '<')))
          .executeTakeFirstOrThrow();
        corrections += Number(n);
      }
      return { revision: Number(revision), accepted, corrections };
    }, { signal });
  }

  /** The account's newest revision (0 before its first ingest). */
  async latestRevision(accountId: string): Promise<number> {
    const [row] = await this.latest({ account: accountId });
    return Number(row?.r ?? 0);
  }

  /** Newest revision holding any observation of the entity (0 if none). */
  async newestRevision(accountId: string, entity: string): Promise<number> {
    const [row] = await this.newest({ account: accountId, entity });
    return Number(row?.r ?? 0);
  }

  /** Every observation of one axis as of `asOf`, ascending by time (for forecasting). */
  async series(accountId: string, entity: string, axis: string, asOf: number): Promise<{ time: number; value: number }[]> {
    const rows = await this.asOfQuery(accountId, entity, asOf).where('o.axis', '=', axis).orderBy('o.time').execute();
    return rows.map((r) => ({ time: Number(r.time), value: Number(r.value) }));
  }

  /** Observations of the entity as of `asOf`: for each (axis, time) the newest value recorded at or before it. */
  private asOfQuery(accountId: string, entity: string, asOf: number) {
    return this.database.db
      .selectFrom('observations as o')
      .select(['o.axis', 'o.time', 'o.value', 'o.revision'])
      .where('o.account_id', '=', accountId)
      .where('o.entity', '=', entity)
      .where('o.revision', '<=', asOf)
      .where((eb) => eb.not(eb.exists(otherVersions(eb, '>').where('v.revision', '<=', asOf))));
  }

  /** A page of the entity's observations as of `filter.asOf`, ascending by (axis, time). */
  async list(accountId: string, entity: string, filter: ListFilter): Promise<ObservationRecord[]> {
    let q = this.asOfQuery(accountId, entity, filter.asOf);
    if (filter.axis !== undefined) q = q.where('o.axis', '=', filter.axis);
    if (filter.start !== undefined) q = q.where('o.time', '>=', filter.start);
    if (filter.end !== undefined) q = q.where('o.time', '<', filter.end);
    if (filter.after) {
      const [axis, time] = filter.after;
      q = q.where((eb) => eb.or([eb('o.axis', '>', axis), eb.and([eb('o.axis', '=', axis), eb('o.time', '>', time)])]));
    }
    const rows = await q.orderBy('o.axis').orderBy('o.time').limit(filter.limit).execute();
    return rows.map((r) => ({ axis: r.axis, time: Number(r.time), value: Number(r.value), revision: Number(r.revision) }));
  }
}

/** Queries over `observations as o`: a row `o` of the table. */
type RowOf = ExpressionBuilder<Schema & { o: ObservationsTable }, 'o'>;

/** The other versions (`v`) of row `o`'s value — same account, entity, axis and time — recorded before (`<`) or after (`>`) it. */
function otherVersions(eb: RowOf, relation: '<' | '>') {
  return eb
    .selectFrom('observations as v')
    .select('v.time')
    .whereRef('v.account_id', '=', 'o.account_id')
    .whereRef('v.entity', '=', 'o.entity')
    .whereRef('v.axis', '=', 'o.axis')
    .whereRef('v.time', '=', 'o.time')
    .whereRef('v.revision', relation, 'o.revision');
}

/**
 * Refuse an ingest that would make an axis span more than `MAX_AXIS_SPAN_STEPS` grid steps with
 * what is stored (the forecaster cannot use such a series), naming the new row at the far end.
 */
async function checkSpans(q: Queryable, accountId: string, batches: readonly IngestBatch[]): Promise<void> {
  type End = { time: number; name: string };
  const axes = new Map<string, { entity: string; axis: string; min: End; max: End }>();
  for (const b of batches) {
    b.rows.forEach((r, i) => {
      const key = `${b.entity}\u0000${r.axis}`;
      const name = `${b.field ?? 'observations'}[${i}].time`;
      const a = axes.get(key);
      if (!a) axes.set(key, { entity: b.entity, axis: r.axis, min: { time: r.time, name }, max: { time: r.time, name } });
      else {
        if (r.time < a.min.time) a.min = { time: r.time, name };
        if (r.time > a.max.time) a.max = { time: r.time, name };
      }
    });
  }
  const frequencies = new Map<string, Frequency>();
  for (const a of axes.values()) {
    let frequency = frequencies.get(a.entity);
    if (!frequency) {
      const row = await q.selectFrom('entities').select('frequency').where('account_id', '=', accountId).where('entity', '=', a.entity).executeTakeFirstOrThrow();
      frequencies.set(a.entity, (frequency = row.frequency as Frequency));
    }
    const stored = await q
      .selectFrom('observations')
      .select((eb) => [eb.fn.min('time').as('first'), eb.fn.max('time').as('last')])
      .where('account_id', '=', accountId)
      .where('entity', '=', a.entity)
      .where('axis', '=', a.axis)
      .executeTakeFirst();
    const first = stored?.first == null ? a.min.time : Math.min(Number(stored.first), a.min.time);
    const last = stored?.last == null ? a.max.time : Math.max(Number(stored.last), a.max.time);
    const span = indexOf(frequency, last)! - indexOf(frequency, first)! + 1;
    if (span > MAX_AXIS_SPAN_STEPS) {
      // Name the new row that stretches it: the earliest if it lies before what is stored, else the latest.
      const row = stored?.first != null && a.min.time < Number(stored.first) ? a.min : a.max;
      throw invalidArgument(
        row.name,
        `${formatTime(row.time)} would make axis ${a.axis} of ${a.entity} span ${span} ${frequency} steps (${formatTime(first)} to ${formatTime(last)}); at most ${MAX_AXIS_SPAN_STEPS} are allowed`,
      );
    }
  }
}
