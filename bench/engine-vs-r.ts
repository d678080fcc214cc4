/**
 * Our default engine vs R `forecast::ets()` on the same M3 monthly series (every 10th: 143
 * series), side by side in one run: seconds per series (fit + forecast only, single thread on
 * both sides) and sMAPE. R runs through `child_process` (`scripts/r/bench-ets.R`), timing only
 * its fitting+forecast loop. Skips with a message when `Rscript` or the `forecast` package is
 * absent. Usage: `node dist/bench/engine-vs-r.js [--model NAME] [--every K] [--limit N]`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadBenchmark, sharedDataDir } from '../src/cli/evaluate-data';
import { forecastSeries } from '../src/engine/index';
import { smape } from '../src/engine/metrics';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

/** Run the comparison; returns the exit code. */
export function runEngineVsR(): number {
  const model = arg('model', 'auto');
  const every = Number(arg('every', '10'));
  const limit = Number(arg('limit', '100000'));
  const all = loadBenchmark(join(sharedDataDir(), 'm3/m3.jsonl')).filter((s) => s.group === 'monthly');
  const series = all.filter((_, i) => i % every === 0).slice(0, limit);
  console.log(`M3 monthly, every ${every}th series: ${series.length} series, h = 18`);

  // ours: the facade as the service calls it, without the per-query backtest (R has none either)
  let oursSmape = 0;
  const t0 = performance.now();
  const ours = series.map((s) => forecastSeries(s.train, { period: s.period }, { horizon: s.horizon, model, confidence: false }).distribution.mean);
  const oursSeconds = (performance.now() - t0) / 1000 / series.length;
  series.forEach((s, i) => (oursSmape += smape(s.test, ours[i])));
  oursSmape /= series.length;
  const oursLabel = `engine (${model})`;
  console.log(`${oursLabel.padEnd(22)} ${oursSeconds.toFixed(4)} s/series   sMAPE ${oursSmape.toFixed(3)}`);

  const probe = spawnSync('Rscript', ['-e', 'suppressPackageStartupMessages(library(forecast))'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    console.log('R forecast::ets(): skipped (Rscript or the forecast package is not installed)');
    return 0;
  }
  const dir = mkdtempSync(join(tmpdir(), 'engine-vs-r-'));
  const input = join(dir, 'in.csv');
  const output = join(dir, 'out.csv');
  writeFileSync(input, series.map((s) => [s.period, s.horizon, ...s.train].join(',')).join('\n') + '\n');
  // run from the repo root (make bench); else relative to dist/bench/
  const script = [resolve('scripts/r/bench-ets.R'), join(__dirname, '../../scripts/r/bench-ets.R')].find((f) => existsSync(f))!;
  const r = spawnSync('Rscript', [script, input, output], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) {
    console.log(`R forecast::ets(): failed (${r.stderr.trim().split('\n').pop()})`);
    return 1;
  }
  const rSeconds = Number(/seconds ([\d.]+)/.exec(r.stdout)![1]) / series.length;
  const rForecasts = readFileSync(output, 'utf8').trim().split('\n').map((l) => l.split(',').map(Number));
  let rSmape = 0;
  series.forEach((s, i) => (rSmape += smape(s.test, rForecasts[i])));
  rSmape /= series.length;
  console.log(`${'R forecast::ets()'.padEnd(22)} ${rSeconds.toFixed(4)} s/series   sMAPE ${rSmape.toFixed(3)}`);
  console.log(`speed-up ${(rSeconds / oursSeconds).toFixed(1)}x, sMAPE difference ${(oursSmape - rSmape).toFixed(3)} (negative = ours more accurate)`);
  return 0;
}

if (require.main === module) process.exitCode = runEngineVsR();
