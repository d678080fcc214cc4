/**
 * Load an axis as a regular series for the engine: observations as of a data revision, placed on
 * the entity's frequency grid from the first to the last observation, gaps as NaN. Cached per
 * (account, entity, axis) and validated by the entity's newest revision, so a new ingest for an
 * entity invalidates exactly that entity's series (on every replica: the check is a query).
 */
import { createHash } from 'node:crypto';
import type { AxisRecord, EntityRecord } from '../entities/entity-store';
import { indexOf } from '../entities/frequency';
import { MAX_AXIS_SPAN_STEPS, type ObservationStore } from '../entities/observation-store';
import { ServiceError } from '../rpc/errors';
import { SharedRuns } from '../shared-runs';

export interface LoadedSeries {
  readonly axis: string;
  readonly values: Float64Array;
  /** Grid index of values[0] (NaN when empty). */
  readonly firstIndex: number;
  /** Grid index of the last value. */
  readonly lastIndex: number;
  /** Non-missing observations. */
  readonly nobs: number;
  readonly firstTime: number | undefined;
  readonly lastTime: number | undefined;
  /** SHA-256 of the canonical series (grid start, frequency, kind, values as float64). */
  readonly digest: string;
}

/**
 * What is said of a series read, without its values (a manifest's input): what answers kept in
 * a cache hold, so that they do not keep every series they read (up to `MAX_SERIES_STEPS` values
 * each) alive with them.
 */
export type SeriesRead = Omit<LoadedSeries, 'values'>;

/** `series` as a `SeriesRead`. */
export function seriesRead({ values, ...read }: LoadedSeries): SeriesRead {
  return read;
}

/** Longest series span forecast, in grid steps: what ingest allows (a 10-year hourly series is ~87,600). */
export const MAX_SERIES_STEPS = MAX_AXIS_SPAN_STEPS;
const CACHE_SIZE = 4096;
/**
 * Grid steps the cache holds at most, all its series together (160 MB of float64). Why, besides
 * `CACHE_SIZE`: series of up to `MAX_SERIES_STEPS` steps, 4,096 of them were 6.5 GB (measured: a
 * cold depth query over 200 leaves of 200,000 hourly steps left 614 MB held after it).
 */
const CACHE_STEPS = 20_000_000;

/**
 * Each entity's newest revision, read once for one query (`SeriesLoader.revisions`). Why: a depth
 * query reads, per entity, the steps of each axis's series (`checkDepthSteps`) and then each
 * series, and every one of those reads asked the database for the entity's newest revision again
 * (a warm query over 425 entities: 850 such reads for one axis). With the memo the query also
 * sees one revision per entity throughout: the steps checked are the steps read.
 */
export class RevisionMemo {
  private readonly seen = new Map<string, Promise<number>>();

  constructor(private readonly observations: ObservationStore) {}

  newest(accountId: string, entity: string): Promise<number> {
    const key = `${accountId}\u0000${entity}`;
    let newest = this.seen.get(key);
    if (!newest) this.seen.set(key, (newest = this.observations.newestRevision(accountId, entity)));
    return newest;
  }
}

export class SeriesLoader {
  private readonly cache = new Map<string, { revision: number; series: LoadedSeries }>();
  /** Grid steps of the series in `cache`. */
  private cachedSteps = 0;
  /**
   * Reads in flight, shared by callers asking the same (found measuring identical depth queries:
   * eight over 400 leaves read every series eight times, one SQLite turn at a time, and the shared
   * computation waited for all of them). Each caller may still leave alone (`SharedRuns`).
   */
  private readonly reads = new SharedRuns<LoadedSeries>();
  /** Reads started, and loads that joined one in flight. */
  readonly stats = this.reads.stats;

  constructor(private readonly observations: ObservationStore) {}

  /** A memo of newest revisions for one query's reads (`RevisionMemo`). */
  revisions(): RevisionMemo {
    return new RevisionMemo(this.observations);
  }

  /**
   * The series of `axis` as of `asOf`; a read not yet made when `signal` aborts is not made
   * (`ObservationStore.series`). `revisions`: one query's memo of each entity's newest revision
   * (`RevisionMemo`), where it reads several series or steps of one entity.
   */
  async load(accountId: string, entity: EntityRecord, axis: AxisRecord, asOf: number, signal?: AbortSignal, revisions?: RevisionMemo): Promise<LoadedSeries> {
    const { key, newest, cached } = await this.lookUp(accountId, entity, axis, asOf, signal, revisions);
    if (cached) return cached;
    // What the read returns: the data as of the newest revision seen when nothing newer than asOf
    // exists (the current data, kept in the cache under that revision), else the data as of asOf.
    // Read as of that revision, not as of asOf: an ingest landing between the revision's read and
    // the series' would otherwise be kept under the older revision.
    const upTo = Math.min(asOf, newest);
    const read = `${key}\u0000${axis.kind}\u0000${newest <= asOf ? `current ${newest}` : `as of ${asOf}`}`;
    const series = await this.reads.run(read, signal, async (s) => build(entity, axis, await this.observations.series(accountId, entity.entity, axis.name, upTo, s)));
    if (newest <= asOf) this.keep(key, newest, series);
    return series;
  }

  /**
   * Grid steps the series `load` returns covers, first to last observation (0: none), without
   * reading it: what it costs to hold (8 bytes a step, gaps included). From the cache when it
   * serves `asOf`, else from the axis's first and last observation (`ObservationStore.ends`).
   */
  async steps(accountId: string, entity: EntityRecord, axis: AxisRecord, asOf: number, signal?: AbortSignal, revisions?: RevisionMemo): Promise<number> {
    const { newest, cached } = await this.lookUp(accountId, entity, axis, asOf, signal, revisions);
    if (cached) return cached.values.length;
    const ends = await this.observations.ends(accountId, entity.entity, axis.name, Math.min(asOf, newest));
    return ends ? indexOf(entity.frequency, ends.last)! - indexOf(entity.frequency, ends.first)! + 1 : 0;
  }

  /** The cache key of a series, the entity's newest revision, and the cached series when it serves `asOf`. */
  private async lookUp(accountId: string, entity: EntityRecord, axis: AxisRecord, asOf: number, signal?: AbortSignal, revisions?: RevisionMemo) {
    signal?.throwIfAborted(); // no revision read for a caller already gone
    const key = `${accountId}\u0000${entity.entity}\u0000${axis.name}\u0000${entity.frequency}`;
    const newest = await (revisions ? revisions.newest(accountId, entity.entity) : this.observations.newestRevision(accountId, entity.entity));
    const entry = this.cache.get(key);
    // The cache holds current data; it serves `asOf` only when nothing newer than asOf exists.
    return { key, newest, cached: entry && entry.revision === newest && newest <= asOf ? entry.series : undefined };
  }

  /** Cache `series` (current as of `revision`), dropping the oldest beyond `CACHE_SIZE` series or `CACHE_STEPS` steps. */
  private keep(key: string, revision: number, series: LoadedSeries): void {
    this.drop(key);
    this.cache.set(key, { revision, series });
    this.cachedSteps += series.values.length;
    while (this.cache.size > CACHE_SIZE || this.cachedSteps > CACHE_STEPS) this.drop(this.cache.keys().next().value!);
  }

  private drop(key: string): void {
    const entry = this.cache.get(key);
    if (!entry) return;
    this.cache.delete(key);
    this.cachedSteps -= entry.series.values.length;
  }
}

function build(entity: EntityRecord, axis: AxisRecord, rows: readonly { time: number; value: number }[]): LoadedSeries {
  if (rows.length === 0) {
    return { axis: axis.name, values: new Float64Array(0), firstIndex: NaN, lastIndex: NaN, nobs: 0, firstTime: undefined, lastTime: undefined, digest: digestOf(entity, axis, NaN, new Float64Array(0)) };
  }
  const first = indexOf(entity.frequency, rows[0].time)!;
  const last = indexOf(entity.frequency, rows[rows.length - 1].time)!;
  const span = last - first + 1;
  // Data stored before ingest checked spans can still be this long: it cannot be used (422), which is no bug (500).
  if (span > MAX_SERIES_STEPS) {
    throw new ServiceError('insufficient_data', `axis ${axis.name} of ${entity.entity} covers ${span} ${entity.frequency} grid points; at most ${MAX_SERIES_STEPS} can be forecast (correct or delete the outlying observations)`, {
      axis: axis.name,
      span,
      max: MAX_SERIES_STEPS,
    });
  }
  const values = new Float64Array(span).fill(NaN);
  for (const r of rows) values[indexOf(entity.frequency, r.time)! - first] = r.value;
  return {
    axis: axis.name,
    values,
    firstIndex: first,
    lastIndex: last,
    nobs: rows.length,
    firstTime: rows[0].time,
    lastTime: rows[rows.length - 1].time,
    digest: digestOf(entity, axis, first, values),
  };
}

/** SHA-256 of a series on the entity's grid: frequency, kind, first grid index, values as float64. */
export function digestOf(entity: Pick<EntityRecord, 'frequency'>, axis: Pick<AxisRecord, 'kind'>, first: number, values: Float64Array): string {
  return createHash('sha256')
    .update(`${entity.frequency}\u0000${axis.kind}\u0000${first}\u0000`)
    .update(Buffer.from(values.buffer, values.byteOffset, values.byteLength))
    .digest('hex');
}
