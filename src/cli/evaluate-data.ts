/**
 * Benchmark data loading for `forecast evaluate`: one JSON object per line, optionally gzipped,
 * in the format of `shared/data/README.md` (`id`, `group`, `period`, `horizon`, `train`, `test`).
 * Any file in that format is accepted; records are validated here and the offending line named.
 * A hierarchy file (`shared/data/hierarchy/README.md`: one JSON object with bottom `series` and
 * `train_length`) is accepted too, as every series of the hierarchy (`hierarchySeries`).
 */
import { existsSync } from 'node:fs';
import { FileTooLarge, readFileAtMost } from './bounded-read';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { MAX_SEASON_LENGTH } from '../entities/frequency';
import { UsageError } from './args';

/** One benchmark series. */
export interface BenchmarkSeries {
  readonly id: string;
  readonly group: string;
  readonly period: number;
  readonly horizon: number;
  readonly train: number[];
  readonly test: number[];
  /** `"kind": "count"` in the record: count data (integer quantiles); absent = the CLI's `--kind`. */
  readonly kind?: 'continuous' | 'count';
  /** Set by `rollingOrigins`: how many steps before the file's own forecast origin this record's is (0 = the file's). */
  readonly origin?: number;
}

/**
 * Most bytes of a data file (`--data`, `--sum`, a hierarchy), unpacked: 100 times the largest
 * shared benchmark file (M4 weekly, 2.9 MB), and the end of a read that would not end (found by
 * QA: `evaluate --data /dev/zero` read until killed; `readFileAtMost`) or of a small `.gz` that
 * unpacks to gigabytes.
 */
export const MAX_DATA_FILE_BYTES = 256 * 1024 * 1024;

/** A data file's bytes (unpacked when it ends in `.gz`), at most `MAX_DATA_FILE_BYTES`. */
export function readDataFile(file: string): Buffer {
  const tooLarge = () => new Error(`${file}: larger than ${MAX_DATA_FILE_BYTES} bytes${file.endsWith('.gz') ? ' unpacked' : ''}: split it into smaller files`);
  let buf: Buffer;
  try {
    buf = readFileAtMost(file, MAX_DATA_FILE_BYTES);
  } catch (err) {
    throw err instanceof FileTooLarge ? tooLarge() : err;
  }
  if (!file.endsWith('.gz')) return buf;
  try {
    return gunzipSync(buf, { maxOutputLength: MAX_DATA_FILE_BYTES });
  } catch (err) {
    throw (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? tooLarge() : err;
  }
}

/** Read a `.jsonl` or `.jsonl.gz` file into objects (no validation). */
export function readJsonLines(file: string): unknown[] {
  const buf = readDataFile(file);
  const out: unknown[] = [];
  const text = buf.toString('utf8');
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    lineNo++;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      throw new Error(`${file}:${lineNo}: not valid JSON (${(err as Error).message})`);
    }
  }
  return out;
}

/** `null` in a JSON array means a missing value. */
function numbers(v: unknown): number[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x === null) out[i] = NaN;
    else if (typeof x === 'number' && Number.isFinite(x)) out[i] = x;
    else return undefined;
  }
  return out;
}

/**
 * Every series of a hierarchy file as benchmark records: the bottom series and each aggregate
 * (every node along the bottom series' `path`, each grouping alone, and each grouping crossed
 * with the path's levels between the top and the last: for the tourism data Total, State,
 * Region, Purpose, State × Purpose — 425 series), trained on the first `train_length` values;
 * group = the file's frequency name.
 */
export function hierarchySeries(doc: Record<string, unknown>, file: string): Record<string, unknown>[] {
  const series = doc.series as { id: string; path: string[]; attributes: Record<string, string>; values: number[] }[];
  const trainLength = Number(doc.train_length);
  if (!Array.isArray(series) || !(trainLength > 0)) throw new Error(`${file}: a hierarchy needs "series" and "train_length"`);
  const groupings = (doc.groupings as string[] | undefined) ?? [];
  const frequency: Record<string, string> = { P1Y: 'yearly', P3M: 'quarterly', P1M: 'monthly', P1W: 'weekly', P1D: 'daily', PT1H: 'hourly' };
  const sums = new Map<string, number[]>();
  const add = (id: string, v: number[]) => sums.set(id, (sums.get(id) ?? new Array<number>(v.length).fill(0)).map((x, i) => x + v[i]));
  for (const s of series) {
    const nodes = s.path.map((_, i) => s.path.slice(0, i + 1).join('/'));
    const crossed = groupings.flatMap((g) => [s.attributes[g], ...nodes.slice(1, -1).map((n) => `${n}|${s.attributes[g]}`)]);
    for (const id of [...nodes, ...crossed, s.id]) add(id, s.values);
  }
  const group = frequency[String(doc.frequency)] ?? 'all';
  const horizon = Number(doc.horizon);
  return [...sums].map(([id, v]) => ({ id, group, period: doc.period, horizon: horizon || v.length - trainLength, train: v.slice(0, trainLength), test: v.slice(trainLength) }));
}

/** Load and validate a benchmark file; `limit` keeps the first N series. */
export function loadBenchmark(file: string, limit?: number): BenchmarkSeries[] {
  const rows = file.endsWith('.json') ? hierarchySeries(JSON.parse(readDataFile(file).toString('utf8')) as Record<string, unknown>, file) : readJsonLines(file);
  const out: BenchmarkSeries[] = [];
  for (let i = 0; i < rows.length && (limit === undefined || out.length < limit); i++) {
    const r = rows[i] as Record<string, unknown>;
    const where = `${file}: record ${i + 1}`;
    const train = numbers(r.train);
    const test = numbers(r.test);
    if (!train || train.length === 0) throw new Error(`${where}: "train" must be a non-empty array of numbers`);
    if (!test || test.length === 0) throw new Error(`${where}: "test" must be a non-empty array of numbers`);
    const period = r.period === undefined ? 1 : Number(r.period);
    if (!Number.isInteger(period) || period < 1 || period > MAX_SEASON_LENGTH) throw new Error(`${where}: "period" must be an integer 1..${MAX_SEASON_LENGTH}`);
    const horizon = r.horizon === undefined ? test.length : Number(r.horizon);
    if (horizon !== test.length) throw new Error(`${where}: "horizon" ${horizon} but "test" has ${test.length} values`);
    if (r.kind !== undefined && r.kind !== 'count' && r.kind !== 'continuous') throw new Error(`${where}: "kind" must be "count" or "continuous"`);
    out.push({
      ...(r.kind !== undefined ? { kind: r.kind as 'continuous' | 'count' } : {}),
      id: typeof r.id === 'string' ? r.id : String(i + 1),
      group: typeof r.group === 'string' ? r.group : 'all',
      period,
      horizon,
      train,
      test,
    });
  }
  return out;
}

/** Which series of a file to evaluate. */
export interface SeriesSelection {
  /** Only series of this group. */
  readonly group?: string;
  /** Every k-th series (after the group filter), starting with the first. */
  readonly every?: number;
  /** At most this many (after the other filters). */
  readonly limit?: number;
}

/** Apply a selection (group, then every k-th, then the limit). */
export function selectSeries<T extends { readonly group: string }>(all: readonly T[], select: SeriesSelection): T[] {
  const every = select.every ?? 1;
  return all
    .filter((s) => select.group === undefined || s.group === select.group)
    .filter((_, i) => i % every === 0)
    .slice(0, select.limit ?? Infinity);
}

/**
 * How `forecast evaluate` reshapes the selected series before scoring them, in this order (each
 * optional; none given = the file's series as they are).
 */
export interface SeriesReshape {
  /** Sum blocks of this many values (`aggregateSeries`). */
  readonly aggregate?: number;
  /** Split each series again so that its last `horizon` values are the test part. */
  readonly horizon?: number;
  /** Forecast origins per series (`rollingOrigins`). */
  readonly origins?: number;
  /** Keep only the last `history` values before each record's origin (how a method does on short histories). */
  readonly history?: number;
}

/**
 * Fewest history values of a reshaped record (`SeriesReshape`) and of a calibration prior's
 * validation window (`evaluate-prior.ts`); fewer and the record is dropped. Why 8: the shortest
 * M3 series, 14 yearly values, leave 8 before their last 6.
 */
export const MIN_HISTORY = 8;

/** Frequencies that a sum of K values of a named group is (group and seasonal period). */
const AGGREGATED: Readonly<Record<string, Readonly<Record<number, readonly [string, number]>>>> = {
  hourly: { 24: ['daily', 7], 168: ['weekly', 1] },
  daily: { 7: ['weekly', 1] },
  monthly: { 3: ['quarterly', 4], 12: ['yearly', 1] },
  quarterly: { 4: ['yearly', 1] },
};

/**
 * Temporal aggregation: the whole series (train and test) summed over blocks of `k` values,
 * aligned to its end (the last block ends at the last value; fewer than `k` values left over at
 * the start are dropped; a block with a missing value is missing), split again with the last
 * `horizon` sums as the test part (default: the original horizon / k, at least 1). A known
 * frequency becomes the one its sum is (`AGGREGATED`: quarterly × 4 is yearly, period 1;
 * hourly × 24 daily, period 7); any other group is named `group×k`, with period / k (the period
 * must then be 1 or a multiple of k). Why: a set of one frequency is a second source for another
 * (the Australian tourism quarters as yearly series), with its own years of history.
 */
export function aggregateSeries(s: BenchmarkSeries, k: number, horizon?: number): BenchmarkSeries {
  const known = AGGREGATED[s.group]?.[k];
  if (!known && s.period > 1 && s.period % k !== 0) {
    throw new UsageError(`cannot sum blocks of ${k} values: series ${s.id} has period ${s.period}, which is not a multiple of ${k}`);
  }
  const [group, period] = known ?? [`${s.group}×${k}`, Math.max(1, s.period / k)];
  const all = [...s.train, ...s.test];
  const blocks = Math.floor(all.length / k);
  const start = all.length - blocks * k;
  const sums = Array.from({ length: blocks }, (_, b) => {
    let sum = 0;
    for (let i = start + b * k; i < start + (b + 1) * k; i++) sum += all[i];
    return sum;
  });
  return splitEnd({ ...s, group, period }, sums, horizon ?? Math.max(1, Math.floor(s.horizon / k)));
}

/** `s` with `values` split so that their last `horizon` (at most all of them) are the test part. */
function splitEnd(s: BenchmarkSeries, values: readonly number[], horizon: number): BenchmarkSeries {
  const h = Math.min(horizon, values.length);
  return { ...s, horizon: h, train: values.slice(0, values.length - h), test: values.slice(values.length - h) };
}

/**
 * Rolling origins: the series forecast from `n` origins, the file's own (origin 0) and the ones
 * 1, 2, …, n − 1 steps before it, each scored on the `horizon` values after it (so every window
 * is whole, and the earlier ones reach back into the training part). Origins that would leave
 * fewer than `MIN_HISTORY` values of history are left out. Why: one test window is one stretch of
 * time; coverage from many origins shows whether a set's figure is the calibration or its period.
 */
export function rollingOrigins(s: BenchmarkSeries, n: number): BenchmarkSeries[] {
  const out: BenchmarkSeries[] = [];
  for (let j = 0; j < n; j++) {
    const r = atOrigin(s, j);
    if (!r) break;
    out.push(r);
  }
  return out;
}

/**
 * The record forecast from `j` steps before the file's own origin and scored on the `horizon`
 * values after it (`origin` = j); null when fewer than `MIN_HISTORY` values would precede it.
 * With j a multiple of the horizon, the window lies wholly in the training part (the calibration
 * priors' validation windows, `evaluate-prior.ts`).
 */
export function atOrigin(s: BenchmarkSeries, j: number): BenchmarkSeries | null {
  const t = s.train.length - j;
  if (t < MIN_HISTORY) return null;
  // a window wholly in the training part is cut from it alone: no test value can reach it
  const all = j >= s.horizon ? s.train : [...s.train, ...s.test];
  return { ...s, train: all.slice(0, t), test: all.slice(t, t + s.horizon), origin: j };
}

/** True when a reshape asks for anything (`reshapeSeries` leaves the series alone otherwise). */
export function reshapes(reshape: SeriesReshape = {}): boolean {
  return Object.values(reshape).some((v) => v !== undefined);
}

/** Apply a reshape (`SeriesReshape`) to selected series; records with fewer than `MIN_HISTORY` history values are dropped. */
export function reshapeSeries(series: readonly BenchmarkSeries[], reshape: SeriesReshape = {}): BenchmarkSeries[] {
  const { aggregate, horizon, origins, history } = reshape;
  if (!reshapes(reshape)) return [...series];
  return series.flatMap((original) => {
    let s = original;
    if (aggregate !== undefined) s = aggregateSeries(s, aggregate, horizon);
    else if (horizon !== undefined) s = splitEnd(s, [...s.train, ...s.test], horizon);
    const records = origins !== undefined ? rollingOrigins(s, origins) : s.train.length >= MIN_HISTORY ? [s] : [];
    return history === undefined ? records : records.map((r) => ({ ...r, train: r.train.slice(-history) })).filter((r) => r.train.length >= MIN_HISTORY);
  });
}

/** The series `forecast evaluate` scores from `file`: loaded, selected, then reshaped (the main thread and every worker call this alike). */
export function evaluationSeries(file: string, select: SeriesSelection, reshape?: SeriesReshape): BenchmarkSeries[] {
  return reshapeSeries(selectSeries(loadBenchmark(file), select), reshape);
}

/**
 * The shared benchmark folder: `SHARED_DATA_DIR` if set, else `shared/data` beside the repository
 * (found from this file, not the working directory). Throws naming the path when it is absent.
 */
export function sharedDataDir(): string {
  if (process.env.SHARED_DATA_DIR) return resolve(process.env.SHARED_DATA_DIR);
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const data = resolve(dir, '..', 'shared', 'data');
  if (!existsSync(data)) throw new Error(`benchmark data folder ${data} is missing (set SHARED_DATA_DIR to the shared/data folder)`);
  return data;
}
