/**
 * What drift scoring reads of an axis: the newest observation before a revision (where a new
 * subscription's scoring starts) and a window of current values on the entity's grid.
 *
 * Windows are cached per axis and brought up to date with one indexed query per entity for the
 * rows of revisions it has not seen (newer than the newest it reflects, or named by the outbox
 * rows at hand, which on PostgreSQL may commit out of revision order), so scoring one new
 * observation reads one row, not the model's whole window again (why: with one observation per
 * ingest the full read was most of the worker's cost, and the worker shares the database with
 * ingest). Within the cache a value carries its revision and a newer one wins, so corrections
 * apply in any order; rows older than the cached window are outside it and skipped.
 */
import type { EntityRecord } from '../entities/entity-store';
import { indexOf, timeOf } from '../entities/frequency';
import type { ObservationStore } from '../entities/observation-store';
import type { Database } from '../store/database';

/** Most steps loaded for one axis. */
const MAX_WINDOW = 250_000;
/** Axes kept. */
const CACHE_SIZE = 4096;

interface CachedAxis {
  firstIndex: number;
  values: number[];
  revisions: number[];
  /** Newest revision reflected. */
  revision: number;
  /** Holds the axis from its first observation (not trimmed yet). */
  complete: boolean;
}

/** A window of grid values: `values[i]` is grid step `firstIndex + i`, NaN where missing. */
export interface GridWindow {
  readonly values: Float64Array;
  readonly firstIndex: number;
}

/** Grid index of the newest observation of the axis recorded before `revision`, or undefined. */
export async function frontierBefore(database: Database, accountId: string, entity: EntityRecord, axis: string, revision: number): Promise<number | undefined> {
  const row = await database.db
    .selectFrom('observations')
    .select((eb) => eb.fn.max('time').as('t'))
    .where('account_id', '=', accountId)
    .where('entity', '=', entity.entity)
    .where('axis', '=', axis)
    .where('revision', '<', revision)
    .executeTakeFirst();
  const t = row?.t;
  return t === null || t === undefined ? undefined : indexOf(entity.frequency, Number(t));
}

/** Per-axis windows of current values, kept up to date incrementally (see the file comment). */
export class DriftSeriesCache {
  private readonly axes = new Map<string, CachedAxis>();

  constructor(
    private readonly database: Database,
    private readonly observations: ObservationStore,
    /** Newest steps kept per axis between windows (a window asked further back is read again). */
    private readonly keep: number,
  ) {}

  /** Per incarnation: an entity deleted and made again under its name starts with no window. */
  private key(accountId: string, entity: EntityRecord, axis: string): string {
    return `${accountId}\u0000${entity.entity}\u0000${entity.incarnation}\u0000${entity.frequency}\u0000${axis}`;
  }

  /** Bring the entity's cached axes up to date (one query): new revisions, and `claimed` ones. */
  async refresh(accountId: string, entity: EntityRecord, claimed: readonly number[]): Promise<void> {
    const cached = entity.axes.map((a) => this.axes.get(this.key(accountId, entity, a.name)));
    const present = cached.filter((c): c is CachedAxis => c !== undefined);
    if (present.length === 0) return;
    const since = Math.min(...present.map((c) => c.revision));
    const rows = await this.database.db
      .selectFrom('observations')
      .select(['axis', 'time', 'value', 'revision'])
      .where('account_id', '=', accountId)
      .where('entity', '=', entity.entity)
      .where((eb) => (claimed.length > 0 ? eb.or([eb('revision', '>', since), eb('revision', 'in', [...new Set(claimed)])]) : eb('revision', '>', since)))
      .execute();
    const top = Math.max(since, ...claimed, ...rows.map((r) => Number(r.revision)));
    for (const [i, a] of entity.axes.entries()) {
      const c = cached[i];
      if (!c) continue;
      for (const r of rows) {
        if (r.axis !== a.name) continue;
        const index = indexOf(entity.frequency, Number(r.time))!;
        if (c.values.length > 0 && index < c.firstIndex) c.complete = false; // before the window: a later full read sees it
        else put(c, index, Number(r.value), Number(r.revision));
      }
      c.revision = top;
    }
  }

  /**
   * Current values of the axis from grid index `from` (undefined: its newest `keep` steps) to its
   * newest observation.
   */
  async window(accountId: string, entity: EntityRecord, axis: string, from: number | undefined): Promise<GridWindow> {
    const key = this.key(accountId, entity, axis);
    let c = this.axes.get(key);
    if (!c || (from === undefined ? !c.complete : from < c.firstIndex)) {
      c = await this.load(accountId, entity, axis, from);
      if (this.axes.size >= CACHE_SIZE) this.axes.delete(this.axes.keys().next().value!);
    } else {
      this.axes.delete(key); // re-inserted below: most recently used last
    }
    this.axes.set(key, c);
    if (c.values.length === 0) return { values: new Float64Array(0), firstIndex: from ?? 0 };
    // the window is copied out before the cache is trimmed to `keep`: trimmed first, it lost what it
    // was asked for (found by QA: one ingest of 4,800+ hourly values cut the first of its own new
    // values off, scored them as missing — a bogus `drift.detected` with no expected value — and
    // then missed a real shift at its end)
    const start = from === undefined ? Math.max(0, c.values.length - this.keep) : Math.max(0, from - c.firstIndex);
    const window = { values: Float64Array.from(c.values.slice(start)), firstIndex: c.firstIndex + start };
    trim(c, this.keep);
    return window;
  }

  private async load(accountId: string, entity: EntityRecord, axis: string, from: number | undefined): Promise<CachedAxis> {
    const start = from === undefined ? undefined : timeOf(entity.frequency, from);
    // read first: every revision up to it is in the rows read next, so the cache reflects it
    const newest = await this.observations.newestRevision(accountId, entity.entity);
    // the current values (as of any revision there will ever be)
    const rows = await this.observations.list(accountId, entity.entity, { axis, start, asOf: Number.MAX_SAFE_INTEGER, limit: MAX_WINDOW });
    const c: CachedAxis = { firstIndex: from ?? NaN, values: [], revisions: [], revision: newest, complete: from === undefined };
    for (const r of rows) {
      put(c, indexOf(entity.frequency, r.time)!, r.value, r.revision);
      c.revision = Math.max(c.revision, r.revision);
    }
    return c;
  }
}

/** Set grid step `index` (≥ the window's first) to `value` unless a newer revision holds it; grows the window. */
function put(c: CachedAxis, index: number, value: number, revision: number): void {
  if (Number.isNaN(c.firstIndex)) c.firstIndex = index;
  const k = index - c.firstIndex;
  while (c.values.length <= k) {
    c.values.push(NaN);
    c.revisions.push(-1);
  }
  if (revision >= c.revisions[k]) {
    c.values[k] = value;
    c.revisions[k] = revision;
  }
}

/** Drop all but the newest `keep` steps. */
function trim(c: CachedAxis, keep: number): void {
  const excess = c.values.length - keep;
  if (excess <= 0) return;
  c.complete = false;
  c.values.splice(0, excess);
  c.revisions.splice(0, excess);
  c.firstIndex += excess;
}
