/**
 * The R side of `bench/engine-vs-r.ts`: writes series as `period,horizon,y…` lines, runs
 * `scripts/r/bench-models.R` on them, parses its forecasts, and caches them per series under
 * `node_modules/.cache/engine-vs-r/` (one `<method>-<script hash>.jsonl` store per method, each
 * line a series' key, the SHA-256 of its input line, and R's output for it). Why per series: R's
 * auto.arima takes about a minute per hourly series and seconds per M3 monthly one, so a run on
 * every series reuses what a subsample run already computed, and a run that is stopped keeps what
 * it finished (R runs in chunks of `CHUNK` series, each appended as it completes). Any change to
 * the script or to a series' data is a miss.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BenchmarkSeries } from '../src/cli/evaluate-data';

/** One R method's forecast of one series. */
export interface RForecast {
  readonly mean: number[];
  /** Central 95% interval, absent for methods without intervals (croston). */
  readonly lo95?: number[];
  readonly hi95?: number[];
  /** 0.9 and 0.95 quantiles (upper ends of the 80% and 90% intervals). */
  readonly q90?: number[];
  readonly q95?: number[];
  /** CPU seconds of the fit and forecast. */
  readonly cpuSeconds: number;
  /** Set when the method failed and R's naive() was used instead. */
  readonly failed?: string;
}

/** Series per R process: small enough that a stopped run loses little, large enough that R's start-up (about 0.5 s) does not count. */
const CHUNK = 40;

/** True when `Rscript` with the forecast package runs. */
export function rAvailable(): boolean {
  const probe = spawnSync('Rscript', ['-e', 'suppressPackageStartupMessages(library(forecast))'], { encoding: 'utf8' });
  return !probe.error && probe.status === 0;
}

function repoFile(rel: string): string {
  const f = [resolve(rel), join(__dirname, '../..', rel), join(__dirname, '..', rel)].find((p) => existsSync(p));
  if (!f) throw new Error(`${rel} not found`);
  return f;
}

function cacheDir(): string {
  const dir = join(repoFile('package.json'), '..', 'node_modules/.cache/engine-vs-r');
  mkdirSync(dir, { recursive: true });
  return dir;
}

const inputLine = (s: BenchmarkSeries): string => [s.period, s.horizon, ...s.train.map((v) => (Number.isNaN(v) ? 'NA' : v))].join(',');
const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex').slice(0, 24);

/** R's output lines of one series, without the `method,index,` prefix: `cpu,what,v1,…`. */
type Lines = string[];

/** Output lines of a run on `n` series, grouped by series (1-based `index` in the second field). */
function splitOutput(text: string, n: number): Lines[] {
  const out = Array.from({ length: n }, (): Lines => []);
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const parts = line.split(',');
    out[Number(parts[1]) - 1].push(parts.slice(2).join(','));
  }
  return out;
}

function parseOne(lines: Lines): RForecast {
  const acc: Record<string, unknown> & { cpuSeconds: number } = { cpuSeconds: 0 };
  for (const line of lines) {
    const parts = line.split(',');
    if (parts[1] === 'failed') {
      acc.failed = parts.slice(2).join(',');
      continue;
    }
    acc.cpuSeconds = Number(parts[0]);
    acc[parts[1]] = parts.slice(2).map(Number);
  }
  return acc as unknown as RForecast;
}

function runR(script: string, method: string, csv: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'engine-vs-r-'));
  writeFileSync(join(dir, 'in.csv'), csv);
  return new Promise<string>((ok, fail) => {
    const child = spawn('Rscript', [script, join(dir, 'in.csv'), join(dir, 'out.csv'), method], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => {
      const text = code === 0 ? readFileSync(join(dir, 'out.csv'), 'utf8') : '';
      rmSync(dir, { recursive: true, force: true });
      if (code === 0) ok(text);
      else fail(new Error(`R ${method} failed: ${err.trim().split('\n').pop()}`));
    });
  });
}

/**
 * R's forecasts of `series` by `method` (`ets`, `arima`, `thetaf`, `snaive`, `croston`), from the
 * cache or by running R on the series it lacks (asynchronously, so several methods can run at once).
 */
export async function rForecasts(series: readonly BenchmarkSeries[], method: string): Promise<RForecast[]> {
  const script = repoFile('scripts/r/bench-models.R');
  const store = join(cacheDir(), `${method}-${sha(readFileSync(script))}.jsonl`);
  const known = new Map<string, Lines>();
  if (existsSync(store)) {
    for (const line of readFileSync(store, 'utf8').split('\n')) {
      if (line === '') continue;
      const entry = JSON.parse(line) as { k: string; lines: Lines };
      known.set(entry.k, entry.lines);
    }
  }
  const inputs = series.map(inputLine);
  const keys = inputs.map(sha);
  // each uncached input once (identical series, e.g. all-zero parts, share a key)
  const missing: number[] = [];
  const queued = new Set<string>();
  keys.forEach((k, i) => {
    if (known.has(k) || queued.has(k)) return;
    queued.add(k);
    missing.push(i);
  });
  for (let c = 0; c < missing.length; c += CHUNK) {
    const chunk = missing.slice(c, c + CHUNK);
    const out = splitOutput(await runR(script, method, chunk.map((i) => inputs[i]).join('\n') + '\n'), chunk.length);
    appendFileSync(store, chunk.map((i, j) => JSON.stringify({ k: keys[i], lines: out[j] }) + '\n').join(''));
    chunk.forEach((i, j) => known.set(keys[i], out[j]));
  }
  return keys.map((k) => parseOne(known.get(k) as Lines));
}
