/**
 * Fits the calibration priors of `src/engine/calibration/prior.ts` from benchmark files and
 * prints them as TypeScript, with the figures they were fitted on:
 *
 *   node dist/src/cli/evaluate-prior.js --data FILE[,FILE...] [--sum FILE:K:H[,...]]
 *     [--cut FILE:N[/N...][,...]] [--workers N]
 *
 * `--sum FILE:K:H` adds FILE's training parts summed over blocks of K values (`summedTraining`:
 * the test part is dropped first, so no test value reaches a prior), with validation windows of H
 * sums: a set of one frequency as a source for another (M4 hourly as short daily series).
 * `--cut FILE:N[/N...]` adds FILE's validation windows again, each forecast from only the last N
 * values before it (`priorRecord`'s `cut`): short histories of a route whose benchmark series are
 * all long (M4 weekly: 80+ values), or of a route the full histories do not take at all (M4 hourly
 * under 504 hours goes to Theta + DOTM + ETS, the full histories to the AR). They make the length
 * classes of their route and stay out of its pooled class, and a class may not hold both cut and
 * full histories (`fitPriors` refuses), so the priors of full histories do not change.
 *
 * Only the training part of each series is used (`validationSplit`): its last `horizon` values, and
 * the `horizon` values before them (`VALIDATION_WINDOWS`), are the windows the priors are fitted
 * on, each forecast from the values before it, so the test windows
 * that `forecast evaluate` and `bench/engine-vs-r.ts` score are never seen (why: priors fitted on
 * the test windows would report their own fit as out-of-sample coverage).
 * Per series (in worker threads, as the facade forecasts with `auto`): the route's forecast of the
 * validation window without calibration, and the facade's 3-origin backtest of the same model on
 * the history before it. Per class
 * (route model, seasonal period, length class of the history, at least `MIN_CLASS` validation
 * windows; `*` = every length, at least `MIN_POOLED`), per side of the interval: the per-step
 * one-sided conformal factors of the pooled validation errors (`sideFactor`: each end missed at
 * most 2.5% of the time, errors measured as |e| / reach, reach = the model's 95% interval's
 * distance from the mean on the error's side), and the curve exp(a + b·ln k + c·ln²k) fitted to
 * them by least squares; then the shrinkage `k0` of the series' own
 * backtest evidence (from 1, 3, 10, 30) that gives the lowest MSIS with coverage in `COVERAGE_WINDOW`
 * under two-fold cross-fitting (the curve fitted on the even-numbered series' windows scores the
 * odd ones' and vice versa). Printed per file and group: coverage / MSIS of the model's own intervals, of the
 * per-series rule without priors, and cross-fitted with the priors. Intermittent series (the
 * Croston route) have no prior and are left out.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { backtest } from '../engine/backtest';
import { planCalibration, planFactors, PRIOR_FACTOR_BOUNDS, standardisedError, uniformFactors, type SideFactors } from '../engine/calibration/conformal';
import { lengthClass, QUADRATIC_MIN_STEPS, type CalibrationPrior, type PriorCurve } from '../engine/calibration/prior';
import { solve } from '../engine/models/arima/linalg';
import { guardBand } from '../engine/guard';
import { maseScale } from '../engine/metrics';
import { autoModelName, keepsOwnIntervals, resolveModel } from '../engine/registry';
import type { BacktestResult } from '../engine/backtest';
import { allowOnly, optionValue, parseArgs, UsageError } from './args';
import { aggregateSeries, atOrigin, loadBenchmark, MIN_HISTORY, type BenchmarkSeries } from './evaluate-data';
import { periodsFor } from './evaluate-series';
import { workerScript } from '../worker-script';

/** What one series contributes. */
export interface PriorRecord {
  readonly set: string;
  /** The series' number in its file (its windows share a cross-fitting fold). */
  readonly series: number;
  /** Validation window (1 = the last `horizon` values of the training part, 2 = the ones before). */
  readonly window: number;
  readonly model: string;
  readonly period: number;
  readonly length: string;
  /** `--cut`: the history was cut to its last N values (the record then stays out of the pooled `*` class). */
  readonly cut?: number;
  /** Validation window (`validationSplit`): actual, mean, and the model's 2.5% / 97.5% quantiles, per step. */
  readonly y: number[];
  readonly mean: number[];
  readonly lo: number[];
  readonly hi: number[];
  /** The plausibility band's ends (0 floor included) per step, as the facade clamps. */
  readonly bandLo: number[];
  readonly bandHi: number[];
  readonly scale: number;
  readonly backtest: BacktestResult;
}

/**
 * Validation windows per series. Why two: one window is one stretch of time, and a set whose last
 * training years were unusual would set its class's prior by them (the Australian tourism
 * series' last 8 training quarters: model coverage 82.5%, against 88%+ on M3 quarterly).
 */
export const VALIDATION_WINDOWS = 2;

/**
 * The series a prior is fitted on: window w (1 = the last) is the training part's
 * ((w − 1)·horizon, w·horizon] last values, forecast from the values before it; null when fewer
 * than `MIN_HISTORY` values would precede it (`atOrigin`, window × horizon steps back). The test
 * part is dropped.
 */
export function validationSplit(s: BenchmarkSeries, window = 1): BenchmarkSeries | null {
  return atOrigin(s, window * s.horizon);
}

/** The record of validation window `window` of series number `index` (`validationSplit`), or null for intermittent series, too-short series and failures. */
export function priorRecord(full: BenchmarkSeries, set: string, index: number, window = 1, cut?: number): PriorRecord | null {
  const split = validationSplit(full, window);
  if (!split || (cut !== undefined && split.train.length < cut)) return null;
  const s = cut === undefined ? split : { ...split, train: split.train.slice(-cut) };
  const info = { period: s.period, periods: periodsFor(s) };
  const y = Float64Array.from(s.train);
  const model = autoModelName(y, info);
  if (keepsOwnIntervals(model)) return null;
  const family = resolveModel(model);
  const h = s.horizon;
  try {
    const fitted = family.fit(y, info, { horizon: h });
    const pd = fitted.forecast(h);
    const bt = backtest(fitted.refit ?? family, y, info, { horizon: h, origins: 3, level: 0.95, fitOptions: { horizon: h } });
    const band = guardBand(y, h);
    const floor = band?.nonNegative ? 0 : -Infinity;
    return {
      set: `${set} ${s.group}${cut === undefined ? '' : ` last ${cut}`}`,
      series: index,
      window,
      model,
      period: s.period,
      length: lengthClass(y.length),
      ...(cut === undefined ? {} : { cut }),
      y: s.test,
      mean: Array.from(pd.mean),
      lo: pd.steps.map((st) => st.quantile(0.025)),
      hi: pd.steps.map((st) => st.quantile(0.975)),
      bandLo: Array.from({ length: h }, (_, k) => (band ? Math.max(floor, band.lower[k]) : -Infinity)),
      bandHi: Array.from({ length: h }, (_, k) => (band ? band.upper[k] : Infinity)),
      scale: maseScale(s.train, s.period),
      // without the origins' forecast objects: records cross threads, and only the errors are used
      backtest: { ...bt, origins: bt.origins.map(({ forecast: _unused, ...o }) => o) },
    };
  } catch {
    return null;
  }
}

/** Coverage and MSIS of a record's validation window with per-step factors `f` of each side's reach. */
export function scoreWith(r: PriorRecord, f: SideFactors): { coverage: number; msis: number } {
  let inside = 0;
  let sum = 0;
  let n = 0;
  for (let k = 0; k < r.y.length; k++) {
    const y = r.y[k];
    if (Number.isNaN(y)) continue;
    const lo = Math.min(r.bandHi[k], Math.max(r.bandLo[k], r.mean[k] + f.lower[k] * (r.lo[k] - r.mean[k])));
    const hi = Math.min(r.bandHi[k], Math.max(r.bandLo[k], r.mean[k] + f.upper[k] * (r.hi[k] - r.mean[k])));
    if (y >= lo && y <= hi) inside++;
    sum += hi - lo + (y < lo ? 40 * (lo - y) : 0) + (y > hi ? 40 * (y - hi) : 0);
    n++;
  }
  return { coverage: n > 0 ? inside / n : NaN, msis: n > 0 ? sum / n / r.scale : NaN };
}

/**
 * The one-sided conformal factor of a step: the smallest q such that the errors on `side` with
 * |e| / reach > q are at most `tail`·(n + 1) of the step's n errors (both sides counted in n), so
 * that each end of the interval is missed at most `tail` of the time; NaN under 20 errors.
 */
export function sideFactor(z: readonly number[], n: number, tail: number): number {
  if (n < 20) return NaN;
  const s = Float64Array.from(z).sort();
  const allowed = Math.floor(tail * (n + 1));
  // all but `allowed` of this side's errors inside; none of them needed: the smallest factor the facade applies
  return allowed >= s.length ? PRIOR_FACTOR_BOUNDS[0] : Math.max(PRIOR_FACTOR_BOUNDS[0], s[s.length - 1 - allowed]);
}

/**
 * Least-squares fit of ln f = a + b·ln k + c·ln²k to the per-step one-sided conformal factors
 * (`sideFactor`, 2.5% per side) of `records`' validation errors on `side`, or for `both` to the
 * two-sided ones (5% of the errors beyond either end), weighted by each step's number of errors
 * (why: a class pooling sets of different horizons has the later steps from one set only, e.g.
 * steps 7–8 of the period-1 class from the 121 M3 "other" windows against 964 at steps 1–6; c = 0
 * under `QUADRATIC_MIN_STEPS` fitted steps, b = c = 0 with a single one).
 */
export function fitCurve(records: readonly PriorRecord[], side: 'lower' | 'upper' | 'both'): PriorCurve & { steps: number[]; last: number } {
  const h = records.reduce((m, r) => Math.max(m, r.y.length), 0);
  const steps: number[] = [];
  const rows: number[][] = [];
  const ys: number[] = [];
  const weights: number[] = [];
  for (let k = 0; k < h; k++) {
    const z: number[] = [];
    let n = 0;
    for (const r of records) {
      if (k >= r.y.length || Number.isNaN(r.y[k])) continue;
      n++;
      const e = r.y[k] - r.mean[k];
      if (side === 'both' || (side === 'upper' ? e >= 0 : e < 0)) z.push(standardisedError(e, e >= 0 ? r.hi[k] - r.mean[k] : r.mean[k] - r.lo[k]));
    }
    const q = sideFactor(z, n, side === 'both' ? 0.05 : 0.025);
    steps.push(q);
    if (Number.isFinite(q) && q > 0) {
      const x = Math.log(k + 1);
      rows.push([1, x, x * x]);
      ys.push(Math.log(q));
      weights.push(n);
    }
  }
  const terms = rows.length >= QUADRATIC_MIN_STEPS ? 3 : rows.length >= 2 ? 2 : rows.length;
  // the last step with a factor: beyond it the facade continues the curve with its slope there
  const last = steps.reduce((m, q, k) => (Number.isFinite(q) && q > 0 ? k + 1 : m), 0);
  if (terms === 0) return { a: 0, b: 0, c: 0, steps, last };
  // weighted normal equations of the first `terms` regressors (weight: the step's error count)
  const xtx = new Float64Array(terms * terms);
  const xty = new Float64Array(terms);
  rows.forEach((r, i) => {
    for (let p = 0; p < terms; p++) {
      xty[p] += weights[i] * r[p] * ys[i];
      for (let q = 0; q < terms; q++) xtx[p * terms + q] += weights[i] * r[p] * r[q];
    }
  });
  const beta = solve(xtx, xty, terms, 1) ?? new Float64Array(terms);
  return { a: beta[0], b: beta[1] ?? 0, c: beta[2] ?? 0, steps, last };
}

/**
 * How far each side's curve moves from the two-sided one, in logs: side = λ·own + (1 − λ)·both.
 * Why not all the way (λ = 1): the asymmetry of the errors changes over time more than their size
 * does, so fully one-sided factors learnt on the validation windows overshot on later data (M3
 * quarterly: 5.5% of test values below the interval). Chosen by the temporal holdout of
 * `asymmetryHoldout`, pooled over every class (printed by this command; 4,641 window-1 records,
 * coverage / MSIS relative to λ = 0: λ 0 93.5%; 0.25 93.5% ×0.988; 0.5 93.3% ×0.982; 0.75
 * 93.0% ×0.984; 1 92.6% ×0.996; with the weekly histories cut short added, engine 1.8.0, 6,795
 * records: 93.6%; 93.5% ×0.993; 93.4% ×0.991; 93.2% ×0.994; 92.7% ×1.005). One λ for every
 * class: choosing it per class by the same holdout (a few hundred records each) was tried and
 * followed noise (on the test windows it was worse than the pooled choice on M3 quarterly, M4
 * weekly and tourism coverage).
 */
export const ASYMMETRY = 0.5;

/** The asymmetries the holdout compares. */
export const ASYMMETRY_GRID = [0, 0.25, 0.5, 0.75, 1];

/** Fewest records in each validation window for a class to take part in the holdout. */
const MIN_HOLDOUT = 60;

/** `k0` of the holdout (the curves are compared, not the shrinkage, chosen afterwards by cross-fitting). */
const HOLDOUT_K0 = 10;

/**
 * The temporal holdout of `ASYMMETRY`: in every length class (model, period, length) with at
 * least `MIN_HOLDOUT` records in both validation windows, the curves fitted on its window-2
 * records at each λ of `ASYMMETRY_GRID` score its window-1 records (later in time). Per λ: the
 * coverage and the MSIS relative to λ = 0, averaged over classes weighted by window-1 records.
 */
export function asymmetryHoldout(records: readonly PriorRecord[]): { lambda: number; coverage: number; relativeMsis: number; records: number }[] {
  const totals = ASYMMETRY_GRID.map((lambda) => ({ lambda, coverage: 0, relativeMsis: 0, records: 0 }));
  for (const rs of classesOf(records, false).values()) {
    const fit = rs.filter((r) => r.window === 2);
    const held = rs.filter((r) => r.window === 1);
    if (fit.length < MIN_HOLDOUT || held.length < MIN_HOLDOUT) continue;
    const scores = ASYMMETRY_GRID.map((lambda) => {
      const prior = { ...fitSides(fit, lambda), k0: HOLDOUT_K0 };
      return mean(held, (r) => priorRule(r, prior));
    });
    scores.forEach((sc, i) => {
      totals[i].coverage += sc.coverage * held.length;
      totals[i].relativeMsis += (sc.msis / scores[0].msis) * held.length;
      totals[i].records += held.length;
    });
  }
  return totals.map((t) => ({ ...t, coverage: t.coverage / t.records, relativeMsis: t.relativeMsis / t.records }));
}

/** Both sides' curves of `records` (`ASYMMETRY`), rounded as printed. */
export function fitSides(records: readonly PriorRecord[], asymmetry = ASYMMETRY): { lower: PriorCurve; upper: PriorCurve; last: number; steps: string } {
  const round = (c: PriorCurve): PriorCurve => ({ a: Number(c.a.toFixed(4)), b: Number(c.b.toFixed(4)), c: Number(c.c.toFixed(4)) });
  const both = fitCurve(records, 'both');
  const lower = fitCurve(records, 'lower');
  const upper = fitCurve(records, 'upper');
  const mix = (own: PriorCurve): PriorCurve => ({
    a: asymmetry * own.a + (1 - asymmetry) * both.a,
    b: asymmetry * own.b + (1 - asymmetry) * both.b,
    c: asymmetry * own.c + (1 - asymmetry) * both.c,
  });
  const fmt = (v: number[]) => v.map((x) => x.toFixed(2)).join(' ');
  return { lower: round(mix(lower)), upper: round(mix(upper)), last: both.last, steps: `lower ${fmt(lower.steps)} | upper ${fmt(upper.steps)} | both ${fmt(both.steps)}` };
}

/** The factors the facade would use on `r` with prior (a, b, k0). */
function priorRule(r: PriorRecord, prior: Pick<CalibrationPrior, 'lower' | 'upper' | 'k0'>): SideFactors {
  const bt = r.backtest.origins.length > 0 ? r.backtest : null;
  return planFactors(planCalibration(bt, { prior }), r.y.length);
}

/** The factors of the per-series rule without a prior (what the facade did before priors). */
function plainRule(r: PriorRecord): SideFactors {
  if (r.backtest.origins.length === 0) return noFactors(r);
  return planFactors(planCalibration(r.backtest), r.y.length);
}

type Score = { coverage: number; msis: number; series: number };

/** Factors of 1 over a record's window (the model's own intervals). */
function noFactors(r: PriorRecord): SideFactors {
  return uniformFactors(r.y.length);
}

/** Records by class `model|period|length`, and with `pooled` also by `model|period|*` (every length). */
function classesOf(records: readonly PriorRecord[], pooled: boolean): Map<string, PriorRecord[]> {
  const classes = new Map<string, PriorRecord[]>();
  const add = (key: string, r: PriorRecord) => {
    const list = classes.get(key);
    if (list) list.push(r);
    else classes.set(key, [r]);
  };
  for (const r of records) {
    add(`${r.model}|${r.period}|${r.length}`, r);
    // histories cut short (`--cut`) teach their length class only: the pooled class stays the full histories'
    if (pooled && r.cut === undefined) add(`${r.model}|${r.period}|*`, r);
  }
  return classes;
}

function mean(rs: readonly PriorRecord[], rule: (r: PriorRecord) => SideFactors): Score {
  let c = 0;
  let m = 0;
  let nc = 0;
  let nm = 0;
  for (const r of rs) {
    const s = scoreWith(r, rule(r));
    if (Number.isFinite(s.coverage)) (c += s.coverage), nc++;
    if (Number.isFinite(s.msis)) (m += s.msis), nm++;
  }
  return { coverage: c / nc, msis: m / nm, series: rs.length };
}

const K0S = [1, 3, 10, 30];

/**
 * Fewest series for a length class's own prior, and for a pooled one. Why 100: a per-step curve
 * and a shrinkage choice from fewer series follow their noise (M3 quarterly under 25 values, 54
 * series: a curve from 0.81 to 1.84 over 8 steps, against 1.28 to 1.59 pooled).
 */
const MIN_CLASS = 100;
const MIN_POOLED = 30;

/**
 * Cross-fitted coverage a shrinkage choice must reach. Why a window narrower than the 93–97%
 * target: the choice is made on the same series it is scored on, and data the priors never saw
 * scatter around it (with [93.5, 96.5] M4 weekly chose k0 = 1 at 93.7%).
 */
const COVERAGE_WINDOW = [0.94, 0.96] as const;

/** Fit every class; returns the priors and a per-record cross-fitted rule. */
export function fitPriors(records: readonly PriorRecord[]): {
  priors: CalibrationPrior[];
  crossFitted: Map<PriorRecord, SideFactors>;
  stepFactors: Map<string, string>;
} {
  const classes = classesOf(records, true);
  for (const [key, rs] of classes) {
    // a cut record in the full histories' own class would move their prior (see `cutJobs`)
    if (!key.endsWith('|*') && rs.some((r) => r.cut !== undefined) && rs.some((r) => r.cut === undefined)) {
      throw new UsageError(`--cut: class ${key} would hold both histories cut short and full ones (cut ${[...new Set(rs.map((r) => r.cut).filter((c) => c !== undefined))].join('/')}): cut to lengths whose route or length class the full histories do not have`);
    }
  }
  const priors: CalibrationPrior[] = [];
  const stepFactors = new Map<string, string>();
  const crossFitted = new Map<PriorRecord, SideFactors>();
  for (const [key, rs] of [...classes].sort((a, b) => a[0].localeCompare(b[0]))) {
    const [model, period, length] = key.split('|');
    if (rs.length < (length === '*' ? MIN_POOLED : MIN_CLASS)) continue;
    // a length class holding every record of its pool adds nothing: the pooled prior serves it
    if (length !== '*' && rs.every((r) => r.cut === undefined) && classes.get(`${model}|${period}|*`)?.length === rs.length) continue;
    const folds = [rs.filter((r) => r.series % 2 === 0), rs.filter((r) => r.series % 2 === 1)];
    const curves = [fitSides(folds[1], ASYMMETRY), fitSides(folds[0], ASYMMETRY)]; // each fold scored by the other's curves
    const scored = K0S.map((k0) => {
      const rule = (r: PriorRecord, fold: number) => priorRule(r, { ...curves[fold], k0 });
      const all = folds.flatMap((f, i) => f.map((r) => ({ r, s: scoreWith(r, rule(r, i)) })));
      const cov = all.reduce((a, x) => a + x.s.coverage, 0) / all.length;
      const ms = all.filter((x) => Number.isFinite(x.s.msis));
      return { k0, coverage: cov, msis: ms.reduce((a, x) => a + x.s.msis, 0) / ms.length, rule };
    });
    const ok = scored.filter((s) => s.coverage >= COVERAGE_WINDOW[0] && s.coverage <= COVERAGE_WINDOW[1]);
    const best = ok.length > 0 ? ok.reduce((a, b) => (b.msis < a.msis ? b : a)) : scored.reduce((a, b) => (Math.abs(b.coverage - 0.95) < Math.abs(a.coverage - 0.95) ? b : a));
    const { lower, upper, last, steps } = fitSides(rs, ASYMMETRY);
    const before = mean(rs, noFactors);
    const sets = [...new Set(rs.map((r) => r.set))].map((s) => `${s} ${rs.filter((r) => r.set === s).length}`).join(', ');
    priors.push({
      model,
      period: Number(period),
      length: length as CalibrationPrior['length'],
      lower,
      upper,
      k0: best.k0,
      steps: last,
      fittedOn: `${sets}; cross-fitted coverage ${pct(before.coverage)} → ${pct(best.coverage)}, MSIS ${before.msis.toFixed(2)} → ${best.msis.toFixed(2)}`,
    });
    stepFactors.set(key, steps);
    // the cross-fitted factors per record, from its own length class when that has a prior
    folds.forEach((f, i) => f.forEach((r) => (length !== '*' || !crossFitted.has(r)) && crossFitted.set(r, best.rule(r, i))));
  }
  return { priors, crossFitted, stepFactors };
}

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

/** Priors as the TypeScript of `CALIBRATION_PRIORS` (`bench/priors.ts` compares the shipped ones printed so with a new fit). */
export function printPriors(priors: readonly CalibrationPrior[]): string {
  const lines = ['export const CALIBRATION_PRIORS: readonly CalibrationPrior[] = ['];
  for (const p of priors) {
    const curve = (c: PriorCurve) => `{ a: ${c.a}, b: ${c.b}, c: ${c.c} }`;
    lines.push(`  {\n    model: '${p.model}', period: ${p.period}, length: '${p.length}', k0: ${p.k0}, steps: ${p.steps},\n    lower: ${curve(p.lower)}, upper: ${curve(p.upper)},`);
    lines.push(`    fittedOn: '${p.fittedOn}',\n  },`);
  }
  lines.push('];');
  return lines.join('\n');
}

/** Print the priors as TypeScript and the figures per file and group. */
function report(records: readonly PriorRecord[]): void {
  const { priors, crossFitted, stepFactors } = fitPriors(records);
  console.log(printPriors(priors));
  console.log('\nper-step factors of the pooled validation errors, by class:');
  for (const [key, steps] of stepFactors) console.log(`${key}: ${steps}`);
  console.log('\nset group: validation windows, coverage / MSIS — model intervals | per-series rule | with priors (cross-fitted)');
  for (const set of [...new Set(records.map((r) => r.set))]) {
    const rs = records.filter((r) => r.set === set);
    const a = mean(rs, noFactors);
    const b = mean(rs, plainRule);
    const c = mean(rs, (r) => crossFitted.get(r) ?? noFactors(r));
    console.log(`${set}: ${rs.length}, ${pct(a.coverage)} / ${a.msis.toFixed(2)} | ${pct(b.coverage)} / ${b.msis.toFixed(2)} | ${pct(c.coverage)} / ${c.msis.toFixed(2)}`);
  }
  const holdout = asymmetryHoldout(records);
  console.log(`\nasymmetry holdout (window 2 → window 1, ${holdout[0].records} records; ASYMMETRY = ${ASYMMETRY}): ${holdout.map((h) => `λ ${h.lambda}: ${pct(h.coverage)}, MSIS ×${h.relativeMsis.toFixed(3)}`).join('; ')}`);
}

interface Job {
  readonly file: string;
  readonly indices: number[];
  /** `--sum`: block size and validation horizon of the summed training parts. */
  readonly sum?: { readonly k: number; readonly horizon: number };
  /** `--cut`: the histories before the validation windows cut to their last N values. */
  readonly cut?: number;
}

/**
 * A series' training part summed over blocks of `k` values (`aggregateSeries`, aligned to the
 * training part's end), as a prior's source: no test part, validation windows of `horizon` sums.
 */
export function summedTraining(s: BenchmarkSeries, k: number, horizon: number): BenchmarkSeries {
  return { ...aggregateSeries({ ...s, test: [] }, k, 0), horizon };
}

/** `--sum FILE:K:H[,...]` as jobs' file and block size / horizon. */
function sumJobs(text: string | undefined): { file: string; sum: { k: number; horizon: number } }[] {
  return (text ?? '')
    .split(',')
    .filter(Boolean)
    .map((spec) => {
      const m = /^(.+):(\d+):(\d+)$/.exec(spec);
      const k = Number(m?.[2]);
      const horizon = Number(m?.[3]);
      if (!m || !(k > 1) || !(horizon > 0)) throw new UsageError(`--sum wants FILE:K:H with K > 1 and H > 0, got ${spec}`);
      return { file: m[1], sum: { k, horizon } };
    });
}

/**
 * `--cut FILE:N[/N...][,...]` as one job per file and length (whole N from `MIN_HISTORY`). A cut
 * record joins the length class of N under the route `auto` takes on N values; where that class is
 * also the full histories' own (weekly cuts of 50+, hourly ones of 504+ hours) `fitPriors` refuses
 * the mix, since the cut would change the prior of every long series. N had to be under 50 for that
 * reason before, which also barred hourly cuts of 50–503 hours, whose route no full history takes.
 */
function cutJobs(text: string | undefined): { file: string; cut: number }[] {
  return (text ?? '')
    .split(',')
    .filter(Boolean)
    .flatMap((spec) => {
      const m = /^(.+):([\d/]+)$/.exec(spec);
      const lengths = (m?.[2] ?? '').split('/').map(Number);
      if (!m || lengths.some((n) => !Number.isInteger(n) || n < MIN_HISTORY)) {
        throw new UsageError(`--cut wants FILE:N[/N...] with whole N from ${MIN_HISTORY}, got ${spec}`);
      }
      return lengths.map((cut) => ({ file: m[1], cut }));
    });
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, []);
  allowOnly(args, ['data', 'workers', 'sum', 'cut']);
  const files = (optionValue(args, 'data') ?? '').split(',').filter(Boolean);
  if (files.length === 0) throw new UsageError('--data FILE[,FILE...] is required');
  const workers = Number(optionValue(args, 'workers') ?? availableParallelism());
  const jobs: Job[] = [...files.map((file): Omit<Job, 'indices'> => ({ file })), ...sumJobs(optionValue(args, 'sum')), ...cutJobs(optionValue(args, 'cut'))].map((j: Omit<Job, 'indices'>) => {
    const loaded = loadBenchmark(j.file);
    // a K that does not fit a series' period is a usage error here, not a worker's crash
    if (j.sum) for (const s of loaded) summedTraining(s, j.sum.k, j.sum.horizon);
    return { ...j, indices: loaded.map((_, i) => i) };
  });
  const records: PriorRecord[] = [];
  for (const job of jobs) {
    const parts = Array.from({ length: workers }, (_, w) => job.indices.filter((i) => i % workers === w));
    const results = await Promise.all(
      parts.map(
        (indices) =>
          new Promise<(PriorRecord | null)[]>((ok, fail) => {
            const w = new Worker(workerScript(__dirname, 'evaluate-prior'), { workerData: { ...job, indices } satisfies Job });
            w.once('message', ok);
            w.once('error', fail);
          }),
      ),
    );
    for (const part of results) for (const r of part) if (r) records.push(r);
    process.stderr.write(`${job.file}: ${records.length} records so far\n`);
  }
  report(records);
  return 0;
}

if (!isMainThread && parentPort) {
  const { file, indices, sum, cut } = workerData as Job;
  const loaded = loadBenchmark(file);
  const all = sum ? loaded.map((s) => summedTraining(s, sum.k, sum.horizon)) : loaded;
  const base = file.split('/').slice(-1)[0].replace(/\.jsonl?(\.gz)?$/, '');
  const name = sum ? `${base}×${sum.k}` : base;
  parentPort.postMessage(indices.flatMap((i) => Array.from({ length: VALIDATION_WINDOWS }, (_, w) => priorRecord(all[i], name, i, w + 1, cut))));
} else if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`evaluate-prior: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = err instanceof UsageError ? 2 : 1;
    },
  );
}
