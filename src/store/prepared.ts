/**
 * Prepared queries for hot paths. Building and compiling a kysely query costs more than running
 * it against a cached SQLite statement, so a hot query is built once with sentinel parameter
 * values, compiled for the database's dialect, and then executed with fresh values in the
 * compiled positions. The query stays a kysely query (dialect-neutral); only the build is cached.
 */
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

const SENTINEL = '\u0000param:';

/** Named parameters as the builder sees them: each is a placeholder the compiled SQL binds later. */
export type Placeholders<P> = { readonly [K in keyof P]: P[K] };

/**
 * `build` receives placeholders (use them only as plain values: comparisons, inserted values)
 * and returns a compilable query; the result runs it with concrete parameters.
 */
export function prepared<P extends Record<string, string | number | null>, Row>(
  db: Kysely<any>,
  build: (p: Placeholders<P>) => Compilable<Row>,
): (params: P) => Promise<Row[]> {
  let sql: string | undefined;
  // Each compiled parameter is either a named placeholder or a constant the builder wrote.
  let order: ({ name: keyof P } | { value: unknown })[] = [];
  return async (params) => {
    if (sql === undefined) {
      const placeholders = new Proxy({}, { get: (_t, name) => `${SENTINEL}${String(name)}` }) as Placeholders<P>;
      const compiled = build(placeholders).compile();
      order = compiled.parameters.map((value) =>
        typeof value === 'string' && value.startsWith(SENTINEL) ? { name: value.slice(SENTINEL.length) as keyof P } : { value },
      );
      sql = compiled.sql;
    }
    const values = order.map((o) => ('name' in o ? params[o.name] : o.value));
    const result = await db.executeQuery<Row>(CompiledQuery.raw(sql, values));
    return result.rows as Row[];
  };
}
