/** Validation of entity definitions and observation rows: every problem names its field. */
import type { Axis, Observation } from '../../gen/forecast/v1/entity.pb';
import { invalidArgument, quote } from '../rpc/errors';
import { checkAxisName, parseEntityId } from './entity-id';
import type { AxisKind, AxisRecord } from './entity-store';
import { gridOf, indexOf, parseTime, type Frequency } from './frequency';
import { boundsText } from '../engine/guard';
import { MAX_MAGNITUDE, MIN_MAGNITUDE } from '../engine/index';

/** Most axes per entity, and per request (API.md: axes ≤ 32). */
export const MAX_AXES = 32;
export const MAX_PARENTS = 32;
export const MAX_OBSERVATIONS_PER_REQUEST = 10_000;
export const MAX_OBSERVATIONS_PER_STREAM = 1_000_000;
/** Earliest observation time accepted (inclusive): 1900-01-01T00:00:00Z. */
export const MIN_OBSERVATION_TIME = Date.UTC(1900, 0, 1);
/** Latest observation time accepted (exclusive): 2200-01-01T00:00:00Z. */
export const END_OBSERVATION_TIME = Date.UTC(2200, 0, 1);

/** Axes of a CreateEntity request, checked: names valid and unique, units short, kinds known. */
export function checkAxes(axes: readonly Axis[]): AxisRecord[] {
  if (axes.length > MAX_AXES) throw invalidArgument('axes', `at most ${MAX_AXES} axes, got ${axes.length}`);
  const seen = new Set<string>();
  return axes.map((a, i) => {
    checkAxisName(a.name, `axes[${i}].name`);
    if (seen.has(a.name)) throw invalidArgument(`axes[${i}].name`, `duplicate axis ${quote(a.name)}`);
    seen.add(a.name);
    if (a.unit.length > 32) throw invalidArgument(`axes[${i}].unit`, 'at most 32 characters');
    const kind = (a.kind || 'continuous') as AxisKind;
    if (kind !== 'continuous' && kind !== 'count') throw invalidArgument(`axes[${i}].kind`, `${quote(a.kind)} is not one of continuous, count`);
    const lowerBound = checkBound(a.lowerBound, kind, `axes[${i}].lower_bound`);
    const upperBound = checkBound(a.upperBound, kind, `axes[${i}].upper_bound`);
    if (lowerBound !== undefined && upperBound !== undefined && !(lowerBound < upperBound)) {
      throw invalidArgument(`axes[${i}].upper_bound`, `must be above lower_bound (${lowerBound}), got ${upperBound}`);
    }
    // found by QA: [5e-324, 1e-299] was accepted, and every series in it was refused at query time
    if (lowerBound !== undefined && upperBound !== undefined && lowerBound > -MIN_MAGNITUDE && upperBound < MIN_MAGNITUDE) {
      throw invalidArgument(`axes[${i}]`, `bounds [${lowerBound}, ${upperBound}] hold no value the engine forecasts but 0 (magnitudes ${MIN_MAGNITUDE} to ${MAX_BOUND}): store the axis in another unit`);
    }
    if (kind === 'count' && upperBound !== undefined && upperBound <= 0) {
      throw invalidArgument(`axes[${i}].upper_bound`, `a count axis's values are at least 0: an upper bound must be above 0, got ${upperBound}`);
    }
    return { name: a.name, unit: a.unit, kind, ...(lowerBound === undefined ? {} : { lowerBound }), ...(upperBound === undefined ? {} : { upperBound }) };
  });
}

/** Largest magnitude of a bound: the engine forecasts values up to this magnitude, so a bound beyond could never bind. */
export const MAX_BOUND = MAX_MAGNITUDE;

/** One bound of an axis (`Axis.lower_bound`, `upper_bound`): unset, or finite, within ±`MAX_BOUND`, whole on a count axis. */
function checkBound(value: number | undefined, kind: AxisKind, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value)) throw invalidArgument(field, `must be a finite number, got ${value}`);
  if (Math.abs(value) > MAX_BOUND) throw invalidArgument(field, `must lie within ±${MAX_BOUND}, got ${value}`);
  if (kind === 'count' && !Number.isInteger(value)) throw invalidArgument(field, `a count axis's bounds are whole numbers, got ${value}`);
  // -0 as 0: the same bound, one way to store and print it
  return value + 0;
}

/** Parents of a CreateEntity request: valid, unique, not the entity itself. */
export function checkParents(parents: readonly string[], self: string): string[] {
  if (parents.length > MAX_PARENTS) throw invalidArgument('parents', `at most ${MAX_PARENTS} parents, got ${parents.length}`);
  const seen = new Set<string>();
  parents.forEach((p, i) => {
    parseEntityId(p, `parents[${i}]`);
    if (p === self) throw invalidArgument(`parents[${i}]`, 'an entity cannot contain itself');
    if (seen.has(p)) throw invalidArgument(`parents[${i}]`, `duplicate parent ${quote(p)}`);
    seen.add(p);
  });
  return parents.slice();
}

/** What a row check needs to know about its entity. */
export interface RowContext {
  readonly frequency: Frequency;
  readonly axes: ReadonlyMap<string, Pick<AxisRecord, 'kind' | 'lowerBound' | 'upperBound'>>;
}

/** True when rows checked against `a` need no second look under `b`. */
export function sameRowContext(a: RowContext, b: RowContext): boolean {
  if (a.frequency !== b.frequency || a.axes.size !== b.axes.size) return false;
  for (const [name, x] of a.axes) {
    const y = b.axes.get(name);
    if (!y || y.kind !== x.kind || y.lowerBound !== x.lowerBound || y.upperBound !== x.upperBound) return false;
  }
  return true;
}

/**
 * Check observation rows of one entity and convert them; `field` prefixes the names
 * (`observations` → `observations[3].time`). `seen` spans a whole request or stream so
 * (axis, time) duplicates are caught across messages.
 */
export function checkRows(
  rows: readonly Observation[],
  ctx: RowContext,
  field: string,
  seen: Map<string, string>,
  entity: string,
): { axis: string; time: number; value: number }[] {
  return rows.map((o, i) => {
    const at = `${field}[${i}]`;
    const axis = ctx.axes.get(o.axis);
    if (!o.axis) throw invalidArgument(`${at}.axis`, 'is required');
    if (axis === undefined) throw invalidArgument(`${at}.axis`, `entity ${entity} has no axis ${quote(o.axis)}`);
    const { kind, lowerBound, upperBound } = axis;
    if (!o.time) throw invalidArgument(`${at}.time`, 'is required');
    const time = parseTime(o.time, `${at}.time`);
    if (time < MIN_OBSERVATION_TIME || time >= END_OBSERVATION_TIME) {
      throw invalidArgument(`${at}.time`, `${o.time.slice(0, 40)} is outside the supported range 1900-01-01T00:00:00Z to 2200-01-01T00:00:00Z (exclusive)`);
    }
    if (indexOf(ctx.frequency, time) === undefined) {
      throw invalidArgument(`${at}.time`, `${o.time} is not on the ${ctx.frequency} grid of ${entity} (${gridOf(ctx.frequency)})`);
    }
    if (!Number.isFinite(o.value)) throw invalidArgument(`${at}.value`, `must be a finite number, got ${o.value}`);
    if (kind === 'count' && (o.value < 0 || !Number.isInteger(o.value))) {
      throw invalidArgument(`${at}.value`, `axis ${o.axis} counts: values must be non-negative integers, got ${o.value}`);
    }
    if ((lowerBound !== undefined && o.value < lowerBound) || (upperBound !== undefined && o.value > upperBound)) {
      throw invalidArgument(`${at}.value`, `axis ${o.axis} takes values ${boundsText({ lower: lowerBound, upper: upperBound })}, got ${o.value}`);
    }
    if (o.revision && o.revision !== '0') throw invalidArgument(`${at}.revision`, 'is output only');
    const key = `${entity}\u0000${o.axis}\u0000${time}`;
    const first = seen.get(key);
    if (first !== undefined) throw invalidArgument(at, `repeats (axis ${o.axis}, time ${o.time}) of ${first}`);
    seen.set(key, at);
    return { axis: o.axis, time, value: o.value };
  });
}
