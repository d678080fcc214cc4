/**
 * Hierarchy benchmark files for `forecast evaluate-hierarchy` (format: shared/data/hierarchy/
 * README.md): bottom series with a `path` through the named `levels` and `attributes` for the
 * crossed `groupings`. Every aggregate is built here: for each depth k of the path and each
 * subset U of the groupings, one node per distinct (path prefix of length k, values of U) — so
 * the Australian tourism file (levels Total/State/Region, grouping Purpose) gives Total, State,
 * Region, Purpose, State × Purpose and Region × Purpose: 425 series. Any file in that format
 * works; records are validated and the offending one named.
 */
import { readDataFile } from './evaluate-data';
import { MAX_SEASON_LENGTH } from '../entities/frequency';

/** One node of the grouped structure. */
export interface HierarchyNode {
  /** `Total`, `NSW`, `NSW/Holiday`: the path prefix and grouping values, joined by `/`. */
  readonly id: string;
  /** Name of the node's level (`State × Purpose`). */
  readonly level: string;
  /** Indices of the bottom series it sums. */
  readonly leaves: readonly number[];
  /** True for the finest level (path to the end, every grouping): bottom-up's inputs. */
  readonly bottom: boolean;
  /** The node's values over the whole file (sum of its leaves). */
  readonly values: Float64Array;
}

/** A loaded hierarchy benchmark. */
export interface HierarchyData {
  readonly name: string;
  readonly period: number;
  readonly trainLength: number;
  readonly horizon: number;
  /** Level names in print order. */
  readonly levels: readonly string[];
  readonly nodes: readonly HierarchyNode[];
}

/** Most groupings a file may cross (found by QA: 30 of them asked for 2^30 aggregate sets and ran out of memory). */
const MAX_GROUPINGS = 10;

function fail(file: string, where: string, problem: string): never {
  throw new Error(`${file}: ${where}: ${problem}`);
}

function stringArray(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0) ? (v as string[]) : undefined;
}

/** Load and validate a hierarchy file; `horizon` overrides the file's (must fit in the test part). */
export function loadHierarchy(file: string, horizon?: number): HierarchyData {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readDataFile(file).toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${file}: not a readable JSON file (${(err as Error).message})`);
  }
  const levelNames = stringArray(raw.levels);
  if (!levelNames || levelNames.length === 0) fail(file, '"levels"', 'must be a non-empty array of names');
  const groupings = raw.groupings === undefined ? [] : stringArray(raw.groupings);
  if (!groupings) fail(file, '"groupings"', 'must be an array of names');
  // every subset of the groupings is a set of aggregates: 2^n of them
  if (groupings.length > MAX_GROUPINGS) fail(file, '"groupings"', `at most ${MAX_GROUPINGS} (each doubles the aggregates), got ${groupings.length}`);
  const period = raw.period === undefined ? 1 : Number(raw.period);
  if (!Number.isInteger(period) || period < 1 || period > MAX_SEASON_LENGTH) fail(file, '"period"', `must be an integer 1..${MAX_SEASON_LENGTH}`);
  if (!Array.isArray(raw.series) || raw.series.length === 0) fail(file, '"series"', 'must be a non-empty array');
  const length = Number(raw.length ?? (raw.series[0] as { values?: unknown[] })?.values?.length);
  const trainLength = Number(raw.train_length);
  if (!Number.isInteger(trainLength) || trainLength < 2 || trainLength >= length) fail(file, '"train_length"', `must be an integer in [2, ${length - 1}]`);
  const h = horizon ?? Number(raw.horizon ?? length - trainLength);
  if (!Number.isInteger(h) || h < 1 || trainLength + h > length) fail(file, 'horizon', `must be 1..${length - trainLength} (the values after train_length), got ${h}`);
  const series = raw.series.map((s, i) => {
    const r = s as Record<string, unknown>;
    const where = `series[${i}]`;
    const path = stringArray(r.path);
    if (!path || path.length !== levelNames.length) fail(file, `${where}.path`, `must name one value per level (${levelNames.length})`);
    const attrs = (r.attributes ?? {}) as Record<string, unknown>;
    const groups = groupings.map((g) => {
      const v = attrs[g];
      if (typeof v !== 'string' || v === '') fail(file, `${where}.attributes.${g}`, 'must be a non-empty string');
      return v;
    });
    const values = r.values;
    if (!Array.isArray(values) || values.length !== length) fail(file, `${where}.values`, `must hold ${length} numbers`);
    const v = Float64Array.from(values, (x) => (x === null ? NaN : Number(x)));
    if (v.some((x, t) => !Number.isFinite(x) && values[t] !== null)) fail(file, `${where}.values`, 'must be numbers or null');
    return { path, groups, values: v };
  });
  return { name: String(raw.name ?? file), period, trainLength, horizon: h, ...buildNodes(levelNames, groupings, series) };
}

/** Every aggregate of the grouped structure (see the file comment). */
function buildNodes(
  levelNames: readonly string[],
  groupings: readonly string[],
  series: readonly { path: readonly string[]; groups: readonly string[]; values: Float64Array }[],
): { levels: string[]; nodes: HierarchyNode[] } {
  const L = levelNames.length;
  const subsets = Array.from({ length: 1 << groupings.length }, (_, mask) => groupings.map((_, g) => g).filter((g) => mask & (1 << g)));
  const rootSingle = new Set(series.map((s) => s.path[0])).size === 1;
  const levels: string[] = [];
  const nodes: HierarchyNode[] = [];
  for (const subset of subsets) {
    for (let k = 1; k <= L; k++) {
      const crossed = subset.map((g) => groupings[g]).join(' × ');
      const level = subset.length === 0 ? levelNames[k - 1] : k === 1 && rootSingle ? crossed : `${levelNames[k - 1]} × ${crossed}`;
      levels.push(level);
      const byKey = new Map<string, number[]>();
      series.forEach((s, i) => {
        const key = [...s.path.slice(0, k), ...subset.map((g) => s.groups[g])].join('/');
        (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(i);
      });
      for (const [id, leaves] of [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const values = new Float64Array(series[0].values.length);
        for (const i of leaves) for (let t = 0; t < values.length; t++) values[t] += series[i].values[t];
        nodes.push({ id, level, leaves, bottom: k === L && subset.length === groupings.length, values });
      }
    }
  }
  return { levels, nodes };
}
