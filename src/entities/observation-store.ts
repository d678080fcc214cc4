/**
 * Storage of observations with data revisions. Every accepted batch gets the account's next
 * revision (a counter per account, `accounts.data_revision`, incremented in the ingest's own
 * transaction: strictly increasing per account, exact under concurrency — on PostgreSQL the
 * counter row's lock orders concurrent ingests of one account — and telling no account anything
 * about another's activity). A value for an existing (axis, time) is a correction stored beside
 * the old one, so a read "as of" revision R sees, for each (axis, time), the newest value
 * recorded at or before R.
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Queryable } from '../store/database';
import { nextTurn, ROWS_PER_TURN, TurnGate } from '../store/turns';
import { KeyedMutex } from '../store/keyed-mutex';
import { prepared } from '../store/prepared';
import type { Schema } from '../store/schema';
import { invalidArgument } from '../rpc/errors';
import { formatTime } from '../clock';
import { indexOf, type Frequency } from './frequency';

/** Most grid points one axis may cover, first to last observation both included (a 10-year hourly series is ~87,600). */
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

/**
 * Run last inside an ingest's transaction, right before its commit: locks and checks again what
 * the rows were validated against (the entities — the same incarnation —, their frequency and
 * axis kinds), so nothing the checks relied on changes before the commit; throws to refuse the
 * ingest (all of it is rolled back).
 */
export type IngestGuard = (trx: Queryable) => Promise<void>;

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

/**
 * Told about every accepted ingest inside its transaction, after its rows are written (e.g. the
 * drift outbox of `subscriptions/`): what it writes commits or rolls back with the ingest.
 */
export type IngestListener = (
  trx: Transaction<Schema>,
  ingest: { readonly accountId: string; readonly revision: number; readonly entities: readonly string[]; readonly now: number },
) => Promise<void>;

/** Rows per INSERT statement (6 parameters each, well under SQLite's and PostgreSQL's limits). */
const CHUNK = 500;

export class ObservationStore {
  /** Read on every oracle query: prepared once (store/prepared.ts). */
  private readonly latest;
  private readonly newest;
  private readonly accountWrites = new KeyedMutex();
  private readonly seriesGate = new TurnGate();
  private readonly listeners: IngestListener[] = [];

  constructor(private readonly database: Database) {
    const db = database.db;
    this.latest = prepared<{ account: string }, { r: number | null }>(database, (p) => db.selectFrom('accounts').select('data_revision as r').where('id', '=', p.account));
    this.newest = prepared<{ account: string; entity: string }, { r: number | null }>(database, (p) =>
      db.selectFrom('observations').select((eb) => eb.fn.max('revision').as('r')).where('account_id', '=', p.account).where('entity', '=', p.entity),
    );
  }

  /** Call `listener` inside every ingest transaction from now on. */
  onIngest(listener: IngestListener): void {
    this.listeners.push(listener);
  }

  /**
   * Store all batches in one transaction as one revision (all or nothing; not committed once
   * `signal` aborted). An axis that would span more than `MAX_AXIS_SPAN_STEPS` with its stored
   * observations is refused with 400 naming the row that stretches it.
   */
  async ingest(accountId: string, batches: readonly IngestBatch[], now: number, signal?: AbortSignal, guard?: IngestGuard): Promise<IngestResult> {
    const accepted = batches.reduce((n, b) => n + b.rows.length, 0);
    const ranges = axisRanges(batches);
    // Concurrent ingests of one account take their revisions in commit order: the counter's
    // UPDATE locks the account row until the commit on PostgreSQL (across replicas; SQLite's single
    // writer already orders them), so a read as of revision R, once R is acknowledged, never gains
    // an earlier revision later. In this process they queue before taking a connection (`KeyedMutex`).
    return this.accountWrites.run(accountId, () =>
      this.database.transaction(async (trx) => {
        const { data_revision: revision } = await trx
          .updateTable('accounts')
          .set((eb) => ({ data_revision: eb('data_revision', '+', 1) }))
          .where('id', '=', accountId)
          .returning('data_revision')
          .executeTakeFirstOrThrow();
        await checkSpans(trx, accountId, ranges);
        await trx.insertInto('revisions').values({ account_id: accountId, revision, create_time: now, observation_count: accepted }).execute();
        let sinceTurn = 0;
        for (const batch of batches) {
          for (let i = 0; i < batch.rows.length; i += CHUNK) {
            if (sinceTurn >= ROWS_PER_TURN) (await nextTurn(), (sinceTurn = 0));
            sinceTurn += Math.min(CHUNK, batch.rows.length - i);
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
        // Corrections: (axis, time) groups, up to this revision, whose newest value is this
        // revision's and that hold an older one. Counted once per (entity, axis) after every batch
        // is in, over the time range this ingest touched: one ordered range scan of the primary
        // key, whose cost never depends on planner statistics (a correlated EXISTS per new row took
        // PostgreSQL 4 s for 2,000 rows, 60 s for 6,000, on tables not yet analysed).
        let corrections = 0;
        for (const { entity, axis, min, max } of ranges) {
          if (accepted > ROWS_PER_TURN) await nextTurn();
          const { n } = await trx
            .selectFrom((eb) =>
              eb
                .selectFrom('observations')
                .select('time')
                .where('account_id', '=', accountId)
                .where('entity', '=', entity)
                .where('axis', '=', axis)
                .where('time', '>=', min.time)
                .where('time', '<=', max.time)
                .where('revision', '<=', Number(revision))
                .groupBy('time')
                .having((h) => h.fn.max('revision'), '=', Number(revision))
                .having((h) => h.fn.countAll(), '>', 1)
                .as('corrected'),
            )
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow();
          corrections += Number(n);
        }
        // Last, right before the commit: the entities stay locked only for that moment (a delete
        // or a definition change waits a few ms, not for the whole write of a large ingest).
        await guard?.(trx);
        for (const listener of this.listeners) await listener(trx, { accountId, revision: Number(revision), entities: batches.map((b) => b.entity), now });
        return { revision: Number(revision), accepted, corrections };
      }, { signal }),
    );
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

  /**
   * Every observation of one axis as of `asOf`, ascending by time (for forecasting). On SQLite the
   * reads take turns with other requests (`TurnGate`); PostgreSQL's run side by side. A read whose
   * `signal` aborted before its turn came is not made: it fails with the signal's reason (found by
   * QA: a depth query past its deadline kept reading its hierarchy's series one turn at a time, and
   * the queries behind it answered their own deadlines seconds late).
   */
  async series(accountId: string, entity: string, axis: string, asOf: number, signal?: AbortSignal): Promise<{ time: number; value: number }[]> {
    const read = () => {
      signal?.throwIfAborted();
      return this.seriesNow(accountId, entity, axis, asOf);
    };
    return this.database.dialect === 'sqlite' ? this.seriesGate.run(read) : read();
  }

  /**
   * The times of the first and last observation of one axis as of `asOf` (undefined: none), without
   * reading the series: two reads of one row each, down the primary key's (account, entity, axis,
   * time) order on both databases. What a series read would cost, known before it is made.
   */
  async ends(accountId: string, entity: string, axis: string, asOf: number): Promise<{ first: number; last: number } | undefined> {
    return axisEnds(this.database.db, accountId, entity, axis, asOf);
  }

  private async seriesNow(accountId: string, entity: string, axis: string, asOf: number): Promise<{ time: number; value: number }[]> {
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
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('observations as n')
              .select('n.time')
              .whereRef('n.account_id', '=', 'o.account_id')
              .whereRef('n.entity', '=', 'o.entity')
              .whereRef('n.axis', '=', 'o.axis')
              .whereRef('n.time', '=', 'o.time')
              .whereRef('n.revision', '>', 'o.revision')
              .where('n.revision', '<=', asOf),
          ),
        ),
      );
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

/** One end of an axis's range in an ingest: the time and how the request names its row. */
interface End {
  readonly time: number;
  readonly name: string;
}

/** An (entity, axis) an ingest touches, with its earliest and latest new row. */
interface AxisRange {
  readonly entity: string;
  readonly axis: string;
  min: End;
  max: End;
}

/** The (entity, axis) pairs of an ingest, each with its earliest and latest new row. */
function axisRanges(batches: readonly IngestBatch[]): AxisRange[] {
  const ranges = new Map<string, AxisRange>();
  for (const b of batches) {
    b.rows.forEach((r, i) => {
      const key = `${b.entity}\u0000${r.axis}`;
      const end = { time: r.time, name: `${b.field ?? 'observations'}[${i}].time` };
      const range = ranges.get(key);
      if (!range) ranges.set(key, { entity: b.entity, axis: r.axis, min: end, max: end });
      else {
        if (r.time < range.min.time) range.min = end;
        if (r.time > range.max.time) range.max = end;
      }
    });
  }
  return [...ranges.values()];
}

/**
 * Refuse an ingest that would make an axis span more than `MAX_AXIS_SPAN_STEPS` grid steps with
 * what is stored (the forecaster cannot use such a series), naming the new row at the far end.
 */
async function checkSpans(q: Queryable, accountId: string, ranges: readonly AxisRange[]): Promise<void> {
  const frequencies = new Map<string, Frequency>();
  for (const a of ranges) {
    let frequency = frequencies.get(a.entity);
    if (!frequency) {
      const row = await q.selectFrom('entities').select('frequency').where('account_id', '=', accountId).where('entity', '=', a.entity).executeTakeFirst();
      if (!row) continue; // deleted meanwhile: the ingest's guard refuses it (404) before the commit
      frequencies.set(a.entity, (frequency = row.frequency as Frequency));
    }
    const stored = await axisEnds(q, accountId, a.entity, a.axis);
    const first = stored ? Math.min(stored.first, a.min.time) : a.min.time;
    const last = stored ? Math.max(stored.last, a.max.time) : a.max.time;
    const span = indexOf(frequency, last)! - indexOf(frequency, first)! + 1;
    if (span > MAX_AXIS_SPAN_STEPS) {
      // Name the new row that stretches it: the earliest if it lies before what is stored, else the latest.
      const row = stored && a.min.time < stored.first ? a.min : a.max;
      throw invalidArgument(
        row.name,
        `${formatTime(row.time)} would make axis ${a.axis} of ${a.entity} cover ${span} ${frequency} grid points (${formatTime(first)} to ${formatTime(last)}, both included); at most ${MAX_AXIS_SPAN_STEPS} are allowed`,
      );
    }
  }
}

/**
 * The first and last observation time stored for an axis (undefined: none), as of revision `asOf`
 * (default: every revision), each read as one row down the primary key's time order.
 */
async function axisEnds(q: Queryable, accountId: string, entity: string, axis: string, asOf = Infinity): Promise<{ first: number; last: number } | undefined> {
  const end = async (direction: 'asc' | 'desc') => {
    let read = q.selectFrom('observations').select('time').where('account_id', '=', accountId).where('entity', '=', entity).where('axis', '=', axis);
    // `+revision`: a filter on the rows met, not an index key (found measuring: SQLite planned the
    // revision index and sorted every row of the entity, 9 ms an axis of 27,000 observations)
    if (asOf !== Infinity) read = read.where(sql<number>`+revision`, '<=', asOf);
    const row = await read.orderBy('time', direction).limit(1).executeTakeFirst();
    return row === undefined ? undefined : Number(row.time);
  };
  const first = await end('asc');
  return first === undefined ? undefined : { first, last: (await end('desc'))! };
}
