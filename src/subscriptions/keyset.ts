/** Keyset pagination for lists ordered newest first by (create time, id). */
import { sql, type RawBuilder } from 'kysely';

/** Rows strictly after the keyset position `[time, id]` in descending (time, id) order. */
export function olderThan(timeColumn: string, idColumn: string, [time, id]: readonly [number, string]): RawBuilder<boolean> {
  const t = sql.ref(timeColumn);
  return sql<boolean>`(${t} < ${time} OR (${t} = ${time} AND ${sql.ref(idColumn)} < ${id}))`;
}
