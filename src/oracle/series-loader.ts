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

/** Longest series span forecast, in grid steps: what ingest allows (a 10-year hourly series is ~87,600). */
export const MAX_SERIES_STEPS = MAX_AXIS_SPAN_STEPS;
const CACHE_SIZE = 4096;

export class SeriesLoader {
  private readonly cache = new Map<string, { revision: number; series: LoadedSeries }>();
  /**
   * Reads in flight, shared by callers asking the same (found measuring identical depth queries:
   * eight over 400 leaves read every series eight times, one SQLite turn at a time, and the shared
   * computation waited for all of them). Each caller may still leave alone (`SharedRuns`).
   */
  private readonly reads = new SharedRuns<LoadedSeries>();
  /** Reads started, and loads that joined one in flight. */
  readonly stats = this.reads.stats;

  constructor(private readonly observations: ObservationStore) {}

  /** The series of `axis` as of `asOf`; a read not yet made when `signal` aborts is not made (`ObservationStore.series`). */
  async load(accountId: string, entity: EntityRecord, axis: AxisRecord, asOf: number, signal?: AbortSignal): Promise<LoadedSeries> {
    signal?.throwIfAborted(); // no revision read for a caller already gone
    const key = `${accountId}\u0000${entity.entity}\u0000${axis.name}\u0000${entity.frequency}`;
    const newest = await this.observations.newestRevision(accountId, entity.entity);
    const cached = this.cache.get(key);
    // The cache holds current data; it serves `asOf` only when nothing newer than asOf exists.
    if (cached && cached.revision === newest && newest <= asOf) return cached.series;
    // what the read returns: the current data when nothing newer than asOf exists, else the data as of asOf
    const read = `${key}\u0000${axis.kind}\u0000${newest <= asOf ? `current ${newest}` : `as of ${asOf}`}`;
    const series = await this.reads.run(read, signal, async (s) => build(entity, axis, await this.observations.series(accountId, entity.entity, axis.name, asOf, s)));
    if (newest <= asOf) {
      this.cache.set(key, { revision: newest, series });
      if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    return series;
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
