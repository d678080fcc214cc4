/**
 * The R side of `bench/engine-vs-r.ts`: writes series as `period,horizon,y…` lines, runs
 * `scripts/r/bench-models.R` once per method, parses its forecasts, and caches them under
 * `node_modules/.cache/engine-vs-r/` keyed by the SHA-256 of the script, the method and the input
 * (why: R's auto.arima alone takes most of an hour on the hourly and daily sets; the cache makes
 * repeated runs cheap and is invalidated by any change to the data or the script).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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

function parse(text: string, n: number): RForecast[] {
  const acc = Array.from({ length: n }, () => ({ cpuSeconds: 0 }) as Record<string, unknown> & { cpuSeconds: number });
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const parts = line.split(',');
    const i = Number(parts[1]) - 1;
    const what = parts[3];
    if (what === 'failed') {
      acc[i].failed = parts.slice(4).join(',');
      continue;
    }
    acc[i].cpuSeconds = Number(parts[2]);
    acc[i][what] = parts.slice(4).map(Number);
  }
  return acc as unknown as RForecast[];
}

/**
 * R's forecasts of `series` by `method` (`ets`, `arima`, `thetaf`, `snaive`, `croston`), from the
 * cache or by running R (asynchronously, so several methods can run at once).
 */
export async function rForecasts(series: readonly BenchmarkSeries[], method: string): Promise<RForecast[]> {
  const script = repoFile('scripts/r/bench-models.R');
  const csv = series.map((s) => [s.period, s.horizon, ...s.train.map((v) => (Number.isNaN(v) ? 'NA' : v))].join(',')).join('\n') + '\n';
  const key = createHash('sha256').update(readFileSync(script)).update(`\0${method}\0`).update(csv).digest('hex').slice(0, 24);
  const cached = join(cacheDir(), `${method}-${key}.csv`);
  if (!existsSync(cached)) {
    const dir = mkdtempSync(join(tmpdir(), 'engine-vs-r-'));
    writeFileSync(join(dir, 'in.csv'), csv);
    await new Promise<void>((ok, fail) => {
      const child = spawn('Rscript', [script, join(dir, 'in.csv'), join(dir, 'out.csv'), method], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', fail);
      child.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`R ${method} failed: ${err.trim().split('\n').pop()}`))));
    });
    copyFileSync(join(dir, 'out.csv'), `${cached}.tmp`);
    renameSync(`${cached}.tmp`, cached);
  }
  return parse(readFileSync(cached, 'utf8'), series.length);
}
