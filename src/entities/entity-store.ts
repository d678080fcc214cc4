/** Storage of entities, their axes and relations. Every query is scoped by account. */
import { randomBytes } from 'node:crypto';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import type { Database, Queryable } from '../store/database';
import { preparedQuery } from '../store/prepared';
import { nextTurn, ROWS_PER_TURN } from '../store/turns';
import type { Frequency } from './frequency';
import type { EntitiesTable } from '../store/schema';

type EntityRow = EntitiesTable;
type AxisRow = { name: string; unit: string; kind: string; lower_bound: number | null; upper_bound: number | null };
type ParentRow = { child: string; parent: string };

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

export type AxisKind = 'continuous' | 'count';

export interface AxisRecord {
  readonly name: string;
  readonly unit: string;
  readonly kind: AxisKind;
  /** The axis's bounds (`Axis.lower_bound`, `upper_bound`); undefined when unset. */
  readonly lowerBound?: number;
  readonly upperBound?: number;
}

export interface EntityRecord {
  readonly entity: string;
  readonly type: string;
  readonly displayName: string;
  readonly frequency: Frequency;
  readonly seasonLength: number;
  readonly axes: readonly AxisRecord[];
  readonly parents: readonly string[];
  readonly createTime: number;
  readonly updateTime: number;
  /**
   * Which incarnation of the entity this is: differs between an entity and one made again under
   * its name after a delete, whatever the clock said (`createTime` may be equal). What a write
   * checked against an entity compares inside its transaction. Internal: never in an answer.
   */
  readonly incarnation: string;
}

/** Deletes, inside the entity delete's transaction `trx`, what another feature keeps for `entity`. */
export type EntityDependents = (trx: Queryable, accountId: string, entity: string) => Promise<unknown>;

export class EntityStore {
  /** See `onDelete`. */
  private readonly dependents: EntityDependents[] = [];
  /** The single-entity read is on the hot path of most calls: one prepared statement (store/prepared.ts). */
  private readonly one;
  /** Records already built from (cached, shared) rows of `one`: a hit costs no parsing. */
  private readonly records = new WeakMap<object, EntityRecord>();

  constructor(readonly database: Database) {
    const db = database.db;
    // The row with its axes and parents as JSON arrays: one statement, so one snapshot and one round trip.
    const jsonArrayFrom = database.dialect === 'sqlite' ? sqliteJsonArrayFrom : postgresJsonArrayFrom;
    this.one = preparedQuery<{ account: string; entity: string }, EntityRow & { axes: unknown; parents: unknown }>(db, (p) =>
      db
        .selectFrom('entities as e')
        .selectAll('e')
        .select((eb) => [
          jsonArrayFrom(
            eb.selectFrom('axes as a').select(['a.name', 'a.unit', 'a.kind', 'a.lower_bound', 'a.upper_bound']).whereRef('a.account_id', '=', 'e.account_id').whereRef('a.entity', '=', 'e.entity').orderBy('a.name'),
          ).as('axes'),
          jsonArrayFrom(
            eb
              .selectFrom('relations as r')
              .select('r.parent')
              .whereRef('r.account_id', '=', 'e.account_id')
              .whereRef('r.child', '=', 'e.entity')
              .where('r.kind', '=', 'contains')
              .orderBy('r.parent'),
          ).as('parents'),
        ])
        .where('e.account_id', '=', p.account)
        .where('e.entity', '=', p.entity),
    );
  }

  /** One entity with axes and parents, or undefined. Inside a transaction, reads through it. */
  async get(accountId: string, entity: string, q?: Queryable): Promise<EntityRecord | undefined> {
    if (q) {
      const rows = await q.selectFrom('entities').selectAll().where('account_id', '=', accountId).where('entity', '=', entity).execute();
      return (await this.hydrate(q, accountId, rows))[0];
    }
    const [rows] = await this.database.read([this.one({ account: accountId, entity })]);
    const row = rows[0] as (EntityRow & { axes: unknown; parents: unknown }) | undefined;
    if (!row) return undefined;
    let record = this.records.get(row);
    if (!record) this.records.set(row, (record = toRecord(row, jsonRows<AxisRow>(row.axes), jsonRows<ParentRow>(row.parents))));
    return record;
  }

  /** Entities of the account after `after` (exclusive), ascending, at most `limit`. */
  async list(accountId: string, type: string | undefined, after: string | undefined, limit: number): Promise<EntityRecord[]> {
    const q = this.database.db;
    let query = q.selectFrom('entities').selectAll().where('account_id', '=', accountId);
    if (type) query = query.where('type', '=', type);
    if (after !== undefined) query = query.where('entity', '>', after);
    return this.hydrate(q, accountId, await query.orderBy('entity').limit(limit).execute());
  }

  /**
   * Several entities of the account with axes and parents (absent ones are left out), in no
   * particular order; a chunk not yet read when `signal` aborts is not read.
   */
  async getMany(accountId: string, entities: readonly string[], signal?: AbortSignal): Promise<EntityRecord[]> {
    const q = this.database.db;
    const out: EntityRecord[] = [];
    // chunks of 500: well under SQLite's and PostgreSQL's parameter limits
    for (let i = 0; i < entities.length; i += 500) {
      signal?.throwIfAborted();
      const rows = await q.selectFrom('entities').selectAll().where('account_id', '=', accountId).where('entity', 'in', entities.slice(i, i + 500)).execute();
      out.push(...(await this.hydrate(q, accountId, rows)));
    }
    return out;
  }

  /**
   * Attach axes and parents to entity rows with two queries for the whole set (one without
   * `withParents`: records whose `parents` are left empty, for a caller that needs none).
   */
  private async hydrate(q: Queryable, accountId: string, rows: readonly EntityRow[], withParents = true): Promise<EntityRecord[]> {
    if (rows.length === 0) return [];
    const names = rows.map((r) => r.entity);
    const [axes, parents] = await Promise.all([
      q.selectFrom('axes').select(['entity', 'name', 'unit', 'kind', 'lower_bound', 'upper_bound']).where('account_id', '=', accountId).where('entity', 'in', names).orderBy('entity').orderBy('name').execute(),
      withParents
        ? q.selectFrom('relations').select(['child', 'parent']).where('account_id', '=', accountId).where('child', 'in', names).where('kind', '=', 'contains').orderBy('child').orderBy('parent').execute()
        : Promise.resolve([]),
    ]);
    const axesOf = groupBy(axes, (a) => a.entity);
    const parentsOf = groupBy(parents, (p) => p.child);
    return rows.map((row) => toRecord(row, axesOf.get(row.entity) ?? [], parentsOf.get(row.entity) ?? []));
  }

  /**
   * Insert or update the entity row (axes and relations are written separately). An insert gets a
   * new incarnation (128 random bits); an update keeps the row's, as it keeps `create_time`.
   */
  async upsertRow(
    q: Queryable,
    accountId: string,
    e: { entity: string; type: string; displayName: string; frequency: Frequency; seasonLength: number },
    now: number,
  ): Promise<void> {
    await q
      .insertInto('entities')
      .values({
        account_id: accountId,
        entity: e.entity,
        type: e.type,
        display_name: e.displayName,
        frequency: e.frequency,
        season_length: e.seasonLength,
        create_time: now,
        update_time: now,
        incarnation: randomBytes(16).toString('hex'),
      })
      .onConflict((oc) =>
        oc.columns(['account_id', 'entity']).doUpdateSet({
          display_name: e.displayName,
          frequency: e.frequency,
          season_length: e.seasonLength,
          update_time: now,
        }),
      )
      .execute();
  }

  /** Insert or update axes of an entity. */
  async upsertAxes(q: Queryable, accountId: string, entity: string, axes: readonly AxisRecord[]): Promise<void> {
    for (const a of axes) {
      await q
        .insertInto('axes')
        .values({ account_id: accountId, entity, name: a.name, unit: a.unit, kind: a.kind, ...boundColumns(a) })
        .onConflict((oc) => oc.columns(['account_id', 'entity', 'name']).doUpdateSet({ unit: a.unit, kind: a.kind, ...boundColumns(a) }))
        .execute();
    }
  }

  /** How many axes the entity has (as `q` sees them). */
  async axisCount(q: Queryable, accountId: string, entity: string): Promise<number> {
    const { n } = await q.selectFrom('axes').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).where('entity', '=', entity).executeTakeFirstOrThrow();
    return Number(n);
  }

  /** True when the entity has any observation (optionally of one axis). */
  async hasObservations(q: Queryable, accountId: string, entity: string, axis?: string): Promise<boolean> {
    let query = q.selectFrom('observations').select('time').where('account_id', '=', accountId).where('entity', '=', entity);
    if (axis !== undefined) query = query.where('axis', '=', axis);
    return (await query.limit(1).executeTakeFirst()) !== undefined;
  }

  /**
   * Read `names` (those that exist) inside the write transaction `trx`, locking their rows until
   * it ends, so what the caller checks against them cannot change or vanish before it commits:
   * `share` for writes that depend on an entity (ingest, a relation, a subscription), `update`
   * for writes that change or delete it. PostgreSQL: `FOR SHARE` / `FOR UPDATE`, rows locked in
   * name order (no deadlock between two such reads). SQLite: a plain read, since every write
   * transaction already holds the one write lock from its start (`BEGIN IMMEDIATE`). With
   * `read.parents` false the records' `parents` are left empty (one query less).
   */
  async lock(trx: Queryable, accountId: string, names: readonly string[], mode: 'share' | 'update', read: { parents?: boolean } = {}): Promise<Map<string, EntityRecord>> {
    const sorted = [...new Set(names)].sort();
    const out = new Map<string, EntityRecord>();
    for (let i = 0; i < sorted.length; i += 500) {
      let query = trx.selectFrom('entities').selectAll().where('account_id', '=', accountId).where('entity', 'in', sorted.slice(i, i + 500)).orderBy('entity');
      if (this.database.dialect === 'postgres') query = mode === 'update' ? query.forUpdate() : query.forShare();
      for (const record of await this.hydrate(trx, accountId, await query.execute(), read.parents ?? true)) out.set(record.entity, record);
    }
    return out;
  }

  /** Which of `entities` exist for the account. */
  async existing(q: Queryable, accountId: string, entities: readonly string[]): Promise<Set<string>> {
    if (entities.length === 0) return new Set();
    const rows = await q.selectFrom('entities').select('entity').where('account_id', '=', accountId).where('entity', 'in', [...entities]).execute();
    return new Set(rows.map((r) => r.entity));
  }

  /**
   * Delete an entity and everything that hangs off it, the other features' dependents included
   * (`onDelete`). False if it did not exist. Not committed once `signal` aborted.
   */
  async delete(accountId: string, entity: string, signal?: AbortSignal): Promise<boolean> {
    return this.database.transaction(async (trx) => {
      // locked first: a write that depends on the entity (holding it `share`) commits before, or sees it gone
      if (!(await this.lock(trx, accountId, [entity], 'update')).has(entity)) return false;
      // observations a slice at a time per axis, the event loop served between slices (`store/turns.ts`)
      const axes = await trx.selectFrom('axes').select('name').where('account_id', '=', accountId).where('entity', '=', entity).execute();
      for (const { name } of axes) {
        const ofAxis = () => trx.deleteFrom('observations').where('account_id', '=', accountId).where('entity', '=', entity).where('axis', '=', name);
        for (;;) {
          const cut = await trx
            .selectFrom('observations')
            .select('time')
            .where('account_id', '=', accountId)
            .where('entity', '=', entity)
            .where('axis', '=', name)
            .orderBy('time')
            .limit(1)
            .offset(ROWS_PER_TURN)
            .executeTakeFirst();
          if (!cut) break;
          const { numDeletedRows } = await ofAxis().where('time', '<', cut.time).executeTakeFirst();
          // more than a slice of revisions of one time: the rest in one statement (never a loop that deletes nothing)
          if (Number(numDeletedRows) === 0) break;
          await nextTurn();
        }
        await ofAxis().execute();
      }
      await trx.deleteFrom('observations').where('account_id', '=', accountId).where('entity', '=', entity).execute();
      await trx.deleteFrom('axes').where('account_id', '=', accountId).where('entity', '=', entity).execute();
      await trx
        .deleteFrom('relations')
        .where('account_id', '=', accountId)
        .where((eb) => eb.or([eb('parent', '=', entity), eb('child', '=', entity)]))
        .execute();
      const res = await trx.deleteFrom('entities').where('account_id', '=', accountId).where('entity', '=', entity).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return false;
      for (const dependents of this.dependents) await dependents(trx, accountId, entity);
      return true;
    }, { signal });
  }

  /**
   * Also delete `dependents` whenever an entity is deleted, in the same transaction (subscriptions:
   * wired in service.ts, because that feature imports this one and not the other way round).
   */
  onDelete(dependents: EntityDependents): void {
    this.dependents.push(dependents);
  }
}

/** A JSON-array column: text on SQLite, already parsed on PostgreSQL. */
function jsonRows<T>(value: unknown): T[] {
  return (typeof value === 'string' ? JSON.parse(value) : value ?? []) as T[];
}

/** An axis's bounds as its row stores them (null: unset). */
function boundColumns(a: AxisRecord): { lower_bound: number | null; upper_bound: number | null } {
  return { lower_bound: a.lowerBound ?? null, upper_bound: a.upperBound ?? null };
}

/** An axis record from its row (bounds as numbers: PostgreSQL's JSON may print a double in exponent form, which Number reads alike). */
function axisRecord(a: Omit<AxisRow, 'entity'>): AxisRecord {
  const record: { -readonly [K in keyof AxisRecord]: AxisRecord[K] } = { name: a.name, unit: a.unit, kind: a.kind as AxisKind };
  if (a.lower_bound !== null && a.lower_bound !== undefined) record.lowerBound = Number(a.lower_bound);
  if (a.upper_bound !== null && a.upper_bound !== undefined) record.upperBound = Number(a.upper_bound);
  return record;
}

function toRecord(row: EntityRow, axes: readonly AxisRow[], parents: readonly { parent: string }[]): EntityRecord {
  return {
    entity: row.entity,
    type: row.type,
    displayName: row.display_name,
    frequency: row.frequency as Frequency,
    seasonLength: Number(row.season_length),
    axes: axes.map(axisRecord),
    parents: parents.map((p) => p.parent),
    createTime: Number(row.create_time),
    updateTime: Number(row.update_time),
    incarnation: row.incarnation,
  };
}
