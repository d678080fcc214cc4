/**
 * Aggregation and printing for `forecast evaluate`: per model, overall and per group, the M4
 * figures (sMAPE, MASE, OWA against Naive2 as ratios of totals, MSIS, coverage), the scaled
 * pinball loss, coverage per horizon step and speed.
 */
import { aggregateScores, type AggregateScore } from '../engine/metrics';
import type { SeriesResult } from './evaluate-series';

/** Figures of one model on a set of series. */
export interface ModelReport extends AggregateScore {
  /** Mean seconds per series spent forecasting (single thread). */
  readonly seconds_per_series: number;
  /** Series where the model failed (scored with Naive2's forecast instead). */
  readonly failures: number;
  /** Coverage of the central interval at each horizon step (mean over the series that have that step). */
  readonly coverage_by_step: number[];
}

/** Full report of one model: overall and per group. */
export interface FullModelReport extends ModelReport {
  readonly model: string;
  readonly groups: Record<string, ModelReport>;
  /** The most frequent fitted-model names, for seeing what `auto` chose. */
  readonly chosen: Record<string, number>;
  /** With `--origins`: the figures per forecast origin (0 = the file's own, n = n steps before it), over every group. */
  readonly by_origin?: Record<string, ModelReport>;
}

function summarise(results: readonly SeriesResult[], k: number): ModelReport {
  const scores = results.map((r) => ({ ...r.models[k], smapeNaive2: r.smapeNaive2, maseNaive2: r.maseNaive2 }));
  const agg = aggregateScores(scores);
  const seconds = scores.reduce((s, r) => s + r.seconds, 0);
  return {
    ...agg,
    seconds_per_series: results.length > 0 ? seconds / results.length : NaN,
    failures: scores.filter((r) => r.error !== undefined).length,
    coverage_by_step: coverageByStep(scores.map((r) => r.inside)),
  };
}

/** Mean of the per-step 0/1 indicators over series (NaN skipped); as long as the longest horizon. */
export function coverageByStep(inside: readonly (readonly number[])[]): number[] {
  const h = inside.reduce((m, v) => Math.max(m, v.length), 0);
  const sum = new Array<number>(h).fill(0);
  const n = new Array<number>(h).fill(0);
  for (const v of inside) {
    for (let i = 0; i < v.length; i++) {
      if (Number.isNaN(v[i])) continue;
      sum[i] += v[i];
      n[i]++;
    }
  }
  return sum.map((s, i) => (n[i] > 0 ? s / n[i] : NaN));
}

/** Build the report of model number `k` (in the `--models` order). */
export function modelReport(results: readonly SeriesResult[], k: number, model: string): FullModelReport {
  const groups: Record<string, ModelReport> = {};
  for (const g of [...new Set(results.map((r) => r.group))].sort()) {
    groups[g] = summarise(
      results.filter((r) => r.group === g),
      k,
    );
  }
  const chosen: Record<string, number> = {};
  for (const r of results) {
    const name = r.models[k].fitted.replace(/\(.*$/s, '');
    chosen[name] = (chosen[name] ?? 0) + 1;
  }
  const origins = [...new Set(results.flatMap((r) => (r.origin === undefined ? [] : [r.origin])))].sort((a, b) => a - b);
  const byOrigin =
    origins.length > 0
      ? { by_origin: Object.fromEntries(origins.map((o) => [String(o), summarise(results.filter((r) => r.origin === o), k)])) }
      : {};
  return { model, ...summarise(results, k), groups, chosen, ...byOrigin };
}

const fmt = (v: number, d = 3): string => (Number.isFinite(v) ? v.toFixed(d) : String(v));

/** The table's header, for rows of `group` (the second column's name). */
function header(group: string, level: number): string {
  const pct = Math.round(level * 100);
  return ['model', group, 'series', 'sMAPE', 'MASE', 'OWA', `MSIS${pct}`, `cover${pct}`, 'SPL', 's/series', 'failed']
    .map((c, i) => (i < 2 ? c.padEnd(i === 0 ? 22 : 10) : c.padStart(9)))
    .join(' ');
}

/** One row of the table: `model`'s figures `m` on the rows called `label`. */
function formatRow(model: string, label: string, m: ModelReport): string {
  return [
    model.slice(0, 22).padEnd(22),
    label.padEnd(10),
    String(m.series).padStart(9),
    fmt(m.smape).padStart(9),
    fmt(m.mase).padStart(9),
    fmt(m.owa).padStart(9),
    fmt(m.msis).padStart(9),
    fmt(m.coverage).padStart(9),
    fmt(m.spl).padStart(9),
    fmt(m.seconds_per_series, 4).padStart(9),
    String(m.failures).padStart(9),
  ].join(' ');
}

/** A plain-text table of reports. */
export function formatReports(reports: readonly FullModelReport[], level: number, wallSeconds: number): string {
  const lines: string[] = [header('group', level)];
  for (const r of reports) {
    for (const [g, m] of Object.entries(r.groups)) lines.push(formatRow(r.model, g, m));
    lines.push(formatRow(r.model, 'ALL', r));
  }
  lines.push(`wall time ${wallSeconds.toFixed(1)} s`);
  return lines.join('\n');
}

/** The same table per forecast origin (`by_origin`, over every group); empty when there is none. */
export function formatByOrigin(reports: readonly FullModelReport[], level: number): string {
  if (!reports.some((r) => r.by_origin)) return '';
  const lines: string[] = [`by forecast origin (0 = the file's own, n = n steps before it)`, header('origin', level)];
  for (const r of reports) for (const [o, m] of Object.entries(r.by_origin ?? {})) lines.push(formatRow(r.model, o, m));
  return lines.join('\n');
}

/** Coverage per horizon step, one block per model and group: `step  coverage` rows of 12 steps. */
export function formatByHorizon(reports: readonly FullModelReport[], level: number): string {
  const lines: string[] = [`coverage of the central ${Math.round(level * 100)}% interval by horizon step`];
  for (const r of reports) {
    for (const [g, m] of [...Object.entries(r.groups), ['ALL', r] as const]) {
      lines.push(`${r.model} ${g}:`);
      const c = m.coverage_by_step;
      for (let i = 0; i < c.length; i += 12) {
        lines.push('  ' + c.slice(i, i + 12).map((v, j) => `${String(i + j + 1).padStart(3)}:${fmt(v * 100, 1).padStart(5)}`).join(' '));
      }
    }
  }
  return lines.join('\n');
}
