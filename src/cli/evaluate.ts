/**
 * `forecast evaluate`: scores models on a benchmark file (format: shared/data/README.md) the way
 * the M4 competition does, using worker threads on every core (see `USAGE`). Progress goes to
 * stderr when it is a TTY. With `--json`, stdout carries only one JSON object (the table goes to
 * stderr): `smape`, `mase`, `owa`, `msis`, `coverage`, `spl`, `coverage_by_step`,
 * `seconds_per_series`, `series`, `groups` (per group, the same figures) for the first model,
 * plus `models` (every model's full report) when several are listed.
 *
 * Model names are the registry's (`forecast evaluate --models auto,ets,theta`); `a+b` is the
 * quantile-averaged combination of a and b. `--calibrate` (default `auto`, as the service) sets the
 * facade's interval calibration, which runs a rolling-origin backtest per series.
 */
import { performance } from 'node:perf_hooks';
import { allowOnly, optionValue, parseArgs, positiveIntegerOption, UsageError, type ParsedArgs } from './args';
import { evaluationSeries, MIN_HISTORY, reshapes, type BenchmarkSeries, type SeriesReshape, type SeriesSelection } from './evaluate-data';
import { formatByHorizon, formatByOrigin, formatReports, modelReport, type FullModelReport } from './evaluate-report';
import { evaluateSeries, PINBALL_PROBS, type SeriesResult } from './evaluate-series';
import type { WorkerInput } from './evaluate-worker';
import { progressPrinter, runWorkers, workerCount } from './worker-batches';

/** `forecast evaluate --help`. */
export const USAGE = `usage: forecast evaluate --data FILE.jsonl [options]

Scores models on a benchmark file (one JSON object per line: id, group, period, horizon, train,
test; optional "kind": "count") with the M4 metrics: sMAPE, MASE, OWA (vs Naive2), MSIS and
coverage of the central interval, and the scaled pinball loss (SPL) of quantiles.

  --models LIST        comma-separated registry names (default auto); a+b combines (mix:a+b as a mixture, a*2+b weighted), select:a/b selects
  --level PCT          central interval level in percent (default 95)
  --quantiles LIST     probabilities of the scaled pinball loss (default ${PINBALL_PROBS.join(',')})
  --calibrate MODE     interval calibration: auto (as the service), off or force (default auto)
  --kind KIND          continuous or count (integer quantiles) where a record has no "kind" (default continuous)
  --group G            only the series of group G
  --every K            only every K-th series
  --limit N            at most N series
  --aggregate K        sum blocks of K values first (quarterly data with K=4 is scored as yearly series)
  --horizon H          split each series again with its last H values as the test part
  --origins N          also forecast from the N-1 origins before the file's own, one step apart,
                       each scored on the horizon after it; prints the figures per origin
  --history N          keep only the last N values before each origin (short-history behaviour)
  --workers N          worker threads, at most 64 (default: one per core)
  --by-horizon         also print coverage per horizon step (always in --json)
  --json               print only one JSON object on stdout (the table goes to stderr)
  --help               print this and exit`;

/** Everything one evaluation needs (also what `bench/engine-vs-r.ts` passes). */
export interface EvaluationInput extends WorkerInput {
  /** Worker threads; 1 runs in this thread. */
  readonly workers: number;
}

/** What `runEvaluation` returns. */
export interface Evaluation {
  readonly results: SeriesResult[];
  readonly reports: FullModelReport[];
  readonly wallSeconds: number;
  /** CPU seconds of this process (all threads) during the evaluation. */
  readonly cpuSeconds: number;
}

/** Evaluate every selected series with every model (in worker threads unless `workers` is 1). */
export async function runEvaluation(
  input: EvaluationInput,
  progress: (done: number) => void = () => {},
  series: readonly BenchmarkSeries[] = evaluationSeries(input.file, input.select, input.reshape),
): Promise<Evaluation> {
  if (series.length === 0) throw new UsageError(`no series selected from ${input.file}`);
  const { workers, ...workerInput } = input;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const results =
    workers === 1 || series.length === 1
      ? series.map((s, i) => {
          const r = evaluateSeries(s, input.models, input);
          progress(i + 1);
          return r;
        })
      : await runWorkers<SeriesResult>(__dirname, 'evaluate-worker', workerInput satisfies WorkerInput, series.length, Math.min(workers, series.length), progress);
  const cpu = process.cpuUsage(c0);
  const wallSeconds = (performance.now() - t0) / 1000;
  const reports = input.models.map((m, k) => modelReport(results, k, m));
  return { results, reports, wallSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

function parseInput(args: ParsedArgs): EvaluationInput {
  const file = optionValue(args, 'data');
  if (!file) throw new UsageError('--data FILE.jsonl is required');
  const models = (optionValue(args, 'models') ?? 'auto').split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new UsageError('--models needs at least one model name');
  const levelPct = Number(optionValue(args, 'level') ?? '95');
  if (!(levelPct > 0 && levelPct < 100)) throw new UsageError(`--level must be in (0, 100), got ${optionValue(args, 'level')}`);
  const positive = (name: string): number | undefined => positiveIntegerOption(args, name);
  const calibrate = (optionValue(args, 'calibrate') ?? 'auto') as 'auto' | 'off' | 'force';
  if (!['auto', 'off', 'force'].includes(calibrate)) throw new UsageError(`--calibrate must be auto, off or force, got ${calibrate}`);
  const kind = (optionValue(args, 'kind') ?? 'continuous') as 'continuous' | 'count';
  if (kind !== 'continuous' && kind !== 'count') throw new UsageError(`--kind must be continuous or count, got ${kind}`);
  const qText = optionValue(args, 'quantiles');
  const quantiles = qText === undefined ? PINBALL_PROBS : qText.split(',').map(Number);
  if (quantiles.length === 0 || quantiles.some((p) => !(p > 0 && p < 1))) throw new UsageError(`--quantiles must be probabilities in (0, 1), got ${qText}`);
  const group = optionValue(args, 'group');
  const select: SeriesSelection = { limit: positive('limit'), every: positive('every'), ...(group !== undefined ? { group } : {}) };
  const reshape: SeriesReshape = { aggregate: positive('aggregate'), horizon: positive('horizon'), origins: positive('origins'), history: positive('history') };
  const workers = workerCount(positive('workers'));
  return { file, select, reshape, models, level: levelPct / 100, calibrate, kind, quantiles, workers };
}

/** Run `forecast evaluate` with the arguments after the command name; resolves the exit code. */
export async function evaluateCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['json', 'help', 'by-horizon']);
  if (args.options.has('help')) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  allowOnly(args, ['data', 'models', 'level', 'json', 'limit', 'workers', 'calibrate', 'kind', 'quantiles', 'group', 'every', 'by-horizon', 'aggregate', 'horizon', 'origins', 'history']);
  const input = parseInput(args);
  const series = evaluationSeries(input.file, input.select, input.reshape);
  if (series.length === 0) {
    throw new UsageError(`no series selected from ${input.file}${reshapes(input.reshape) ? ` with ${MIN_HISTORY} or more values of history after reshaping` : ''}`);
  }
  // fail fast on an unknown model name, before starting threads
  evaluateSeries(series[0], input.models, input).models.forEach((m) => {
    if (m.error?.startsWith('UnknownModelError')) throw new UsageError(m.error.replace(/^UnknownModelError: /, ''));
  });

  const progress = progressPrinter(series.length);
  const { reports, wallSeconds } = await runEvaluation(input, progress, series);
  progress(-1);
  const json = args.options.has('json');
  // with --json, stdout is for the JSON object alone
  const table = json ? process.stderr : process.stdout;
  table.write(formatReports(reports, input.level, wallSeconds) + '\n');
  if (args.options.has('by-horizon')) table.write(formatByHorizon(reports, input.level) + '\n');
  const byOrigin = formatByOrigin(reports, input.level);
  if (byOrigin) table.write(byOrigin + '\n');
  if (json) {
    const top = reports[0];
    const { model: _model, groups, chosen, ...figures } = top;
    const summary: Record<string, unknown> = {
      ...figures,
      groups,
      model: top.model,
      chosen,
      level: input.level,
      quantiles: input.quantiles,
      calibrate: input.calibrate,
      workers: input.workers,
      wall_seconds: wallSeconds,
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
