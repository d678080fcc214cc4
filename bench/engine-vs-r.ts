/**
 * The default engine side by side with R's forecast package on every data set in
 * `shared/data`, in one run (`make bench`; issue 16's table). Per set and frequency group:
 * sMAPE (where defined), MASE, MSIS and coverage of 95% intervals, the scaled pinball loss of the
 * 0.5/0.9/0.95 quantiles, and CPU seconds per series, for `auto` (as the service forecasts:
 * calibration included) and R's `ets()`, `auto.arima()`, `thetaf()` (plus `snaive()` on daily data
 * and `croston()`/`snaive()` beside our Croston/SBA/TSB on the intermittent car parts). The M3
 * monthly speed line compares fit + forecast only (no backtest on either side).
 *
 * R runs through `scripts/r/bench-models.R` (`engine-vs-r-runner.ts`, cached); without `Rscript`
 * only the engine's figures are printed. Usage: `node dist/bench/engine-vs-r.js [--sets a,b]
 * [--every K] [--no-r | --r-only] [--r-jobs N]` (`--r-only` fills R's cache). Sets: m3, weekly, hourly, daily,
 * carparts, tourism (the 425 series of the Australian tourism hierarchy, quarterly).
 */
import { join } from 'node:path';
import { loadBenchmark, selectSeries, sharedDataDir, type BenchmarkSeries } from '../src/cli/evaluate-data';
import { runEvaluation } from '../src/cli/evaluate';
import { PINBALL_PROBS } from '../src/cli/evaluate-series';
import { coverage, mase, maseScale, msis, scaledPinball, smape } from '../src/engine/metrics';
import { rAvailable, rForecasts, type RForecast } from './engine-vs-r-runner';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

interface BenchSet {
  readonly key: string;
  readonly title: string;
  readonly file: () => string;
  readonly kind?: 'count';
  /** Our models beside `auto`. */
  readonly ours: readonly string[];
  readonly r: readonly string[];
  /** sMAPE is undefined for series of zeros (car parts). */
  readonly smape: boolean;
}

const R_MAIN = ['ets', 'arima', 'thetaf'];

const SETS: readonly BenchSet[] = [
  { key: 'm3', title: 'M3', file: () => join(sharedDataDir(), 'm3/m3.jsonl'), ours: [], r: R_MAIN, smape: true },
  { key: 'weekly', title: 'M4 weekly', file: () => join(sharedDataDir(), 'm4/m4-weekly.jsonl'), ours: [], r: R_MAIN, smape: true },
  { key: 'hourly', title: 'M4 hourly', file: () => join(sharedDataDir(), 'm4/m4-hourly.jsonl'), ours: [], r: R_MAIN, smape: true },
  { key: 'daily', title: 'web traffic (daily)', file: () => join(sharedDataDir(), 'daily/web-traffic.jsonl'), ours: [], r: [...R_MAIN, 'snaive'], smape: true },
  {
    key: 'carparts',
    title: 'car parts (intermittent, count)',
    file: () => join(sharedDataDir(), 'intermittent/carparts.jsonl'),
    kind: 'count',
    ours: ['croston', 'sba', 'tsb'],
    r: [...R_MAIN, 'croston', 'snaive'],
    smape: false,
  },
  { key: 'tourism', title: 'Australian tourism hierarchy (425 quarterly)', file: () => join(sharedDataDir(), 'hierarchy/australian-tourism.json'), ours: [], r: R_MAIN, smape: true },
];

/** One row of the table. */
interface Row {
  set: string;
  group: string;
  method: string;
  series: number;
  smape: number;
  mase: number;
  msis: number;
  coverage: number;
  spl: number;
  cpu: number;
}

const mean = (v: number[]): number => {
  const f = v.filter(Number.isFinite);
  return f.length > 0 ? f.reduce((a, b) => a + b, 0) / f.length : NaN;
};

function rRows(set: BenchSet, series: readonly BenchmarkSeries[], method: string, fc: readonly RForecast[]): Row[] {
  const groups = ['ALL', ...new Set(series.map((s) => s.group))];
  return groups.map((g) => {
    const idx = series.map((s, i) => (g === 'ALL' || s.group === g ? i : -1)).filter((i) => i >= 0);
    const per = idx.map((i) => {
      const s = series[i];
      const f = fc[i];
      const scale = maseScale(s.train, s.period);
      const q = [f.mean, f.q90 ?? f.mean, f.q95 ?? f.mean];
      return {
        smape: smape(s.test, f.mean),
        mase: mase(s.test, f.mean, scale),
        msis: f.lo95 && f.hi95 ? msis(s.test, f.lo95, f.hi95, scale) : NaN,
        coverage: f.lo95 && f.hi95 ? coverage(s.test, f.lo95, f.hi95) : NaN,
        spl: scaledPinball(s.test, q, PINBALL_PROBS, scale),
        cpu: f.cpuSeconds,
      };
    });
    const failed = idx.filter((i) => fc[i].failed).length;
    return {
      set: set.title,
      group: g,
      method: `R ${method}${failed > 0 ? ` (${failed} failed → naive)` : ''}`,
      series: idx.length,
      smape: set.smape ? mean(per.map((p) => p.smape)) : NaN,
      mase: mean(per.map((p) => p.mase)),
      msis: mean(per.map((p) => p.msis)),
      coverage: mean(per.map((p) => p.coverage)),
      spl: mean(per.map((p) => p.spl)),
      cpu: mean(per.map((p) => p.cpu)),
    };
  });
}

async function oursRows(set: BenchSet, file: string, every: number, model: string): Promise<{ rows: Row[]; chosen: Record<string, number> }> {
  const ev = await runEvaluation({ file, select: { every }, models: [model], level: 0.95, calibrate: 'auto', kind: set.kind ?? 'continuous', quantiles: PINBALL_PROBS, workers: 2 });
  const report = ev.reports[0];
  // CPU of the whole process (both worker threads), apportioned to groups by their threads' time
  const totalThread = ev.results.reduce((a, r) => a + r.models[0].seconds, 0);
  const cpuOf = (g: string) => {
    const rs = ev.results.filter((r) => g === 'ALL' || r.group === g);
    return (ev.cpuSeconds * (rs.reduce((a, r) => a + r.models[0].seconds, 0) / totalThread)) / rs.length;
  };
  const rows = [['ALL', report] as const, ...Object.entries(report.groups)].map(([g, m]) => ({
    set: set.title,
    group: g,
    method: model === 'auto' ? 'engine auto' : `engine ${model}`,
    series: m.series,
    smape: set.smape ? m.smape : NaN,
    mase: m.mase,
    msis: m.msis,
    coverage: m.coverage,
    spl: m.spl,
    cpu: cpuOf(g),
  }));
  return { rows, chosen: report.chosen };
}

/** fit + forecast only, one thread, no backtest: the like-for-like speed of `auto` vs R's ets(). */
async function speedLine(every: number, rOn: boolean): Promise<string> {
  const file = join(sharedDataDir(), 'm3/m3.jsonl');
  const select = { group: 'monthly', every };
  const ev = await runEvaluation({ file, select, models: ['auto'], level: 0.95, calibrate: 'off', quantiles: PINBALL_PROBS, workers: 1 });
  const ours = ev.cpuSeconds / ev.results.length;
  let line = `M3 monthly, fit + forecast only (no backtest): engine auto ${ours.toFixed(4)} CPU s/series`;
  if (rOn) {
    const fc = await rForecasts(selectSeries(loadBenchmark(file), select), 'ets');
    const r = mean(fc.map((f) => f.cpuSeconds));
    line += `, R ets() ${r.toFixed(4)} → ${(r / ours).toFixed(1)}× faster`;
  }
  return line;
}

const fmt = (v: number, d: number) => (Number.isFinite(v) ? (Math.abs(v) >= 1e4 ? v.toExponential(2) : v.toFixed(d)) : '–');

/** Run the comparison; resolves the exit code. */
export async function runEngineVsR(): Promise<number> {
  const keys = arg('sets', SETS.map((s) => s.key).join(',')).split(',');
  const every = Number(arg('every', '1'));
  const jobs = Number(arg('r-jobs', '1'));
  const rOn = !process.argv.includes('--no-r') && rAvailable();
  if (!rOn) console.log('R forecast: skipped (Rscript or the forecast package is not installed, or --no-r)');
  const rows: Row[] = [];
  for (const set of SETS.filter((s) => keys.includes(s.key))) {
    const setRows: Row[] = [];
    const file = set.file();
    const series = selectSeries(loadBenchmark(file), { every });
    console.log(`${set.title}: ${series.length} series${every > 1 ? ` (every ${every}th)` : ''}`);
    // R first (its processes run while our engine runs in worker threads of this one)
    const rJobs = rOn ? limitConcurrency(set.r.map((m) => () => rForecasts(series, m)), jobs) : Promise.resolve([]);
    for (const model of process.argv.includes('--r-only') ? [] : ['auto', ...set.ours]) {
      const { rows: mine, chosen } = await oursRows(set, file, every, model);
      setRows.push(...mine);
      if (model === 'auto') console.log(`  auto chose: ${Object.entries(chosen).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    const rResults = await rJobs;
    set.r.forEach((m, i) => rResults[i] && setRows.push(...rRows(set, series, m, rResults[i])));
    // per set: groups in name order, ALL last; methods in run order within a group
    const groups = [...new Set(series.map((s) => s.group))].sort();
    const kept = groups.length === 1 ? setRows.filter((r) => r.group === 'ALL').map((r) => ({ ...r, group: groups[0] })) : setRows;
    const order = (r: Row) => (r.group === 'ALL' ? groups.length : groups.indexOf(r.group));
    rows.push(...kept.map((r, i) => [r, i] as const).sort((a, b) => order(a[0]) - order(b[0]) || a[1] - b[1]).map(([r]) => r));
  }
  const header = ['set', 'group', 'method', 'series', 'sMAPE', 'MASE', 'MSIS', 'cover95', 'SPL', 'CPU s/series'];
  console.log(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  for (const r of rows) {
    console.log(`| ${[r.set, r.group, r.method, r.series, fmt(r.smape, 2), fmt(r.mase, 3), fmt(r.msis, 2), fmt(r.coverage * 100, 1), fmt(r.spl, 3), fmt(r.cpu, 4)].join(' | ')} |`);
  }
  if (keys.includes('m3')) console.log('\n' + (await speedLine(every, rOn)));
  return 0;
}

/** Run thunks at most `n` at a time; results in order. */
async function limitConcurrency<T>(tasks: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out = new Array<T>(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, n) }, lane));
  return out;
}

if (require.main === module) {
  runEngineVsR().then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
