/**
 * Benchmark data loading for `forecast evaluate`: one JSON object per line, optionally gzipped,
 * in the format of `shared/data/README.md` (`id`, `group`, `period`, `horizon`, `train`, `test`).
 * Any file in that format is accepted; records are validated here and the offending line named.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** One benchmark series. */
export interface BenchmarkSeries {
  readonly id: string;
  readonly group: string;
  readonly period: number;
  readonly horizon: number;
  readonly train: number[];
  readonly test: number[];
}

/** Read a `.jsonl` or `.jsonl.gz` file into objects (no validation). */
export function readJsonLines(file: string): unknown[] {
  let buf = readFileSync(file);
  if (file.endsWith('.gz')) buf = gunzipSync(buf);
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

/** Load and validate a benchmark file; `limit` keeps the first N series. */
export function loadBenchmark(file: string, limit?: number): BenchmarkSeries[] {
  const rows = readJsonLines(file);
  const out: BenchmarkSeries[] = [];
  for (let i = 0; i < rows.length && (limit === undefined || out.length < limit); i++) {
    const r = rows[i] as Record<string, unknown>;
    const where = `${file}: record ${i + 1}`;
    const train = numbers(r.train);
    const test = numbers(r.test);
    if (!train || train.length === 0) throw new Error(`${where}: "train" must be a non-empty array of numbers`);
    if (!test || test.length === 0) throw new Error(`${where}: "test" must be a non-empty array of numbers`);
    const period = r.period === undefined ? 1 : Number(r.period);
    if (!Number.isInteger(period) || period < 1) throw new Error(`${where}: "period" must be a positive integer`);
    const horizon = r.horizon === undefined ? test.length : Number(r.horizon);
    if (horizon !== test.length) throw new Error(`${where}: "horizon" ${horizon} but "test" has ${test.length} values`);
    out.push({
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

/** The shared benchmark folder: `../shared/data` from the repo root (CI), else `/work/shared/data`. */
export function sharedDataDir(): string {
  const rel = resolve('../shared/data');
  return existsSync(rel) ? rel : '/work/shared/data';
}
