/**
 * Reading what drift scoring needs of an axis: the newest observation before a revision (where
 * a new subscription's scoring starts) and a window of current values on the entity's grid.
 */
import type { EntityRecord } from '../entities/entity-store';
import { indexOf, timeOf } from '../entities/frequency';
import type { ObservationStore } from '../entities/observation-store';
import type { Database } from '../store/database';

/** Most steps loaded for one axis (the model's window and lags fit well inside). */
const MAX_WINDOW = 250_000;

/** Grid index of the newest observation of the axis recorded before `revision`, or undefined. */
export async function frontierBefore(database: Database, accountId: string, entity: EntityRecord, axis: string, revision: number): Promise<number | undefined> {
  const row = await database.db
    .selectFrom('observations')
    .select((eb) => eb.fn.max('time').as('t'))
    .where('account_id', '=', accountId)
    .where('entity', '=', entity.entity)
    .where('axis', '=', axis)
    .where('revision', '<', revision)
    .executeTakeFirst();
  const t = row?.t;
  return t === null || t === undefined ? undefined : indexOf(entity.frequency, Number(t));
}

/**
 * Current values of the axis from grid index `from` (undefined: its first observation) to its
 * newest observation, NaN where missing.
 */
export async function gridWindow(
  observations: ObservationStore,
  accountId: string,
  entity: EntityRecord,
  axis: string,
  from: number | undefined,
): Promise<{ values: Float64Array; firstIndex: number }> {
  const asOf = await observations.latestRevision();
  const start = from === undefined ? undefined : timeOf(entity.frequency, from);
  const rows = await observations.list(accountId, entity.entity, { axis, start, asOf, limit: MAX_WINDOW });
  if (rows.length === 0) return { values: new Float64Array(0), firstIndex: 0 };
  const first = indexOf(entity.frequency, rows[0].time)!;
  const last = indexOf(entity.frequency, rows[rows.length - 1].time)!;
  const values = new Float64Array(last - first + 1).fill(NaN);
  for (const r of rows) values[indexOf(entity.frequency, r.time)! - first] = r.value;
  return { values, firstIndex: first };
}
