/**
 * `forecast evaluate --data FILE.jsonl [--models LIST] [--level 95] [--json] [--limit N] [--workers N]
 *   [--calibrate auto|off|force]`
 *
 * Scores models on a benchmark file (format: shared/data/README.md) the way the M4 competition
 * does, using worker threads on every core. Progress goes to stderr when it is a TTY. With
 * `--json` the last line printed is one JSON object: `smape`, `mase`, `owa`, `msis`, `coverage`,
 * `seconds_per_series`, `series`, `groups` (per group, the same figures) for the first model,
 * plus `models` (every model's full report) when several are listed.
 *
 * Model names are the registry's (`forecast evaluate --models auto,ets,theta`); `a+b` is the
 * quantile-averaged combination of a and b. `--calibrate` (default `auto`, as the service) sets the
 * facade's interval calibration, which runs a rolling-origin backtest per series.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { allowOnly, optionValue, parseArgs, UsageError } from './args';
import { loadBenchmark } from './evaluate-data';
import { formatReports, modelReport } from './evaluate-report';
import { evaluateSeries, type SeriesResult } from './evaluate-series';
import type { WorkerInput } from './evaluate-worker';
import { progressPrinter, runWorkers } from './worker-batches';

/** Run `forecast evaluate` with the arguments after the command name; resolves the exit code. */
export async function evaluateCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['json']);
  allowOnly(args, ['data', 'models', 'level', 'json', 'limit', 'workers', 'calibrate']);
  const file = optionValue(args, 'data');
  if (!file) throw new UsageError('--data FILE.jsonl is required');
  const models = (optionValue(args, 'models') ?? 'auto').split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new UsageError('--models needs at least one model name');
  const levelPct = Number(optionValue(args, 'level') ?? '95');
  if (!(levelPct > 0 && levelPct < 100)) throw new UsageError(`--level must be in (0, 100), got ${optionValue(args, 'level')}`);
  const limitText = optionValue(args, 'limit');
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new UsageError(`--limit must be a positive integer, got ${limitText}`);
  const workersText = optionValue(args, 'workers');
  const level = levelPct / 100;
  const calibrate = (optionValue(args, 'calibrate') ?? 'auto') as 'auto' | 'off' | 'force';
  if (!['auto', 'off', 'force'].includes(calibrate)) throw new UsageError(`--calibrate must be auto, off or force, got ${calibrate}`);

  const series = loadBenchmark(file, limit);
  const workers = Math.max(1, Math.min(series.length, workersText ? Number(workersText) : availableParallelism()));
  if (!Number.isInteger(workers)) throw new UsageError(`--workers must be a positive integer, got ${workersText}`);
  // fail fast on an unknown model name, before starting threads
  evaluateSeries(series[0], models, level, calibrate).models.forEach((m) => {
    if (m.error?.startsWith('UnknownModelError')) throw new UsageError(m.error.replace(/^UnknownModelError: /, ''));
  });

  const t0 = performance.now();
  const progress = progressPrinter(series.length);
  const results =
    workers === 1
      ? series.map((s, i) => {
          const r = evaluateSeries(s, models, level, calibrate);
          progress(i + 1);
          return r;
        })
      : await runWorkers<SeriesResult>(__dirname, 'evaluate-worker', { file, limit, models, level, calibrate } satisfies WorkerInput, series.length, workers, progress);
  progress(-1);
  const wall = (performance.now() - t0) / 1000;

  const reports = models.map((m, k) => modelReport(results, k, m));
  process.stdout.write(formatReports(reports, level, wall) + '\n');
  if (args.options.has('json')) {
    const first = reports[0];
    const summary: Record<string, unknown> = {
      smape: first.smape,
      mase: first.mase,
      owa: first.owa,
      msis: first.msis,
      coverage: first.coverage,
      seconds_per_series: first.seconds_per_series,
      series: first.series,
      groups: first.groups,
      model: first.model,
      failures: first.failures,
      chosen: first.chosen,
      level,
      calibrate,
      workers,
      wall_seconds: wall,
    };
    if (reports.length > 1) summary.models = Object.fromEntries(reports.map((r) => [r.model, r]));
    process.stdout.write(JSON.stringify(summary) + '\n');
  }
  return 0;
}

if (require.main === module) {
  evaluateCommand(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`forecast evaluate: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = err instanceof UsageError ? 2 : 1;
    },
  );
}
