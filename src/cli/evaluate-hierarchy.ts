/**
 * `forecast evaluate-hierarchy --data FILE.json [--horizon H] [--json] [--workers N] [--draws K]`
 *
 * Scores hierarchical reconciliation on a hierarchy benchmark file (format:
 * shared/data/hierarchy/README.md): base forecasts of every series of the grouped structure are
 * fitted on the training part in worker threads (as the service fits them), reconciled with each
 * method (`mint_shrink`, `wls_struct`, `ols`, `bottom_up`; distributions by reconciling joint
 * draws), and scored on the test part per level and over all series: MASE, RMSSE, scaled CRPS,
 * 95% coverage, plus the largest coherence error. With `--json` stdout carries only one JSON
 * object, `{"series", "horizon", "methods": {"base": {mase, rmsse, crps, coverage, levels: {…}},
 * "mint_shrink": {…}, …}, "coherence_error"}`, and the table and notes go to stderr (as
 * `forecast evaluate --json` does). Progress goes to stderr when it is a TTY.
 */
import { performance } from 'node:perf_hooks';
import { floorsAtZero } from '../engine/guard';
import { atomsWhere, buildStructure, DEFAULT_DRAWS, errorRows, RECONCILE_METHODS, reconcile } from '../engine/reconcile/index';
import { allowOnly, optionValue, parseArgs, positiveIntegerOption, UsageError } from './args';
import { loadHierarchy } from './evaluate-hierarchy-data';
import { coherenceError, formatHierarchyReport, methodReport, scoreNodes, type MethodReport } from './evaluate-hierarchy-report';
import { baseForecast, type BaseForecast, type HierarchyWorkerInput } from './evaluate-hierarchy-worker';
import { progressPrinter, runWorkers, workerCount } from './worker-batches';

/** Most draws held in all (series × steps × draws), about 160 MB for each of the two grids. */
const MAX_DRAW_VALUES = 20_000_000;

/** Run `forecast evaluate-hierarchy` with the arguments after the command name; resolves the exit code. */
export async function evaluateHierarchyCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['json']);
  allowOnly(args, ['data', 'horizon', 'json', 'workers', 'draws']);
  const file = optionValue(args, 'data');
  if (!file) throw new UsageError('--data FILE.json is required');
  const data = loadHierarchy(file, positiveIntegerOption(args, 'horizon'));
  const draws = positiveIntegerOption(args, 'draws') ?? DEFAULT_DRAWS;
  // every node keeps its draws for every step, twice, until reconciled (found by QA: --draws 1e8 grew without end)
  const maxDraws = Math.max(1, Math.floor(MAX_DRAW_VALUES / (data.nodes.length * data.horizon)));
  if (draws > maxDraws) throw new UsageError(`--draws must be at most ${maxDraws} for ${data.nodes.length} series and horizon ${data.horizon}, got ${draws}`);
  const workers = Math.min(data.nodes.length, workerCount(positiveIntegerOption(args, 'workers')));
  const h = data.horizon;

  const t0 = performance.now();
  const progress = progressPrinter(data.nodes.length);
  const input: HierarchyWorkerInput = { file, horizon: h, draws };
  const base =
    workers === 1
      ? data.nodes.map((node, i) => {
          const r = baseForecast(node.values.slice(0, data.trainLength), data.period, h, draws);
          progress(i + 1);
          return r;
        })
      : await runWorkers<BaseForecast>(__dirname, 'evaluate-hierarchy-worker', input, data.nodes.length, workers, progress);
  progress(-1);

  const stepsOf = (mean: (b: BaseForecast) => Float64Array, grid: (b: BaseForecast) => Float64Array) =>
    Array.from({ length: h }, (_, k) => ({
      means: base.map((b) => mean(b)[k]),
      draws: base.map((b) => grid(b).subarray(k * draws, (k + 1) * draws)),
    }));
  // scored as depth-0 queries answer; reconciled as depth queries take them
  const baseSteps = stepsOf((b) => b.means, (b) => b.grid);
  const reconcileSteps = stepsOf((b) => b.baseMeans, (b) => b.baseGrid);
  const structure = buildStructure(
    data.nodes.map((n) => n.leaves),
    data.nodes.map((n) => n.bottom),
  );
  // as the service: atoms whose bottom series' training data are non-negative are censored at 0
  const floored = new Set(data.nodes.filter((n) => n.bottom && floorsAtZero(n.values.subarray(0, data.trainLength))).flatMap((n) => n.leaves));
  const nonNegative = atomsWhere(structure, (leaf) => floored.has(leaf as number));
  const errors = errorRows(
    base.map((b) => ({ start: 0, inSample: b.residuals, backtest: b.backtest })),
    h,
  );
  const reports: Record<string, MethodReport> = { base: methodReport(data, scoreNodes(data, baseSteps)) };
  const notes: string[] = [];
  let coherence = 0;
  for (const method of RECONCILE_METHODS) {
    const out = reconcile({ structure, method, errors, steps: reconcileSteps, kind: 'continuous', nonNegative, seed: 1 });
    if (out.method !== method) throw new Error(`${method} fell back to ${out.method}: ${out.warnings.join('; ')}`);
    reports[method] = methodReport(data, scoreNodes(data, out.steps));
    coherence = Math.max(coherence, coherenceError(data, out.steps));
    if (out.lambda !== null) notes.push(`${method}: covariance of the ${out.errorSource} errors, shrinkage intensity λ = ${out.lambda.toFixed(4)}`);
    notes.push(...out.warnings.map((w) => `${method}: ${w}`));
  }
  const wall = (performance.now() - t0) / 1000;
  const failed = base.filter((b) => b.model.startsWith('failed')).length;
  // with --json, stdout is for the JSON object alone
  const table = args.options.has('json') ? process.stderr : process.stdout;
  table.write(`${data.name}: ${data.nodes.length} series, horizon ${h}, ${draws} draws per series and step${failed ? `, ${failed} base fits failed (seasonal naive used)` : ''}\n`);
  table.write(formatHierarchyReport(data, reports, coherence, wall) + '\n');
  for (const n of notes) table.write(n + '\n');
  if (args.options.has('json')) {
    process.stdout.write(JSON.stringify({ series: data.nodes.length, horizon: h, methods: reports, coherence_error: coherence }) + '\n');
  }
  return 0;
}

if (require.main === module) {
  evaluateHierarchyCommand(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`forecast evaluate-hierarchy: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = err instanceof UsageError ? 2 : 1;
    },
  );
}
