/**
 * Prepared queries for hot paths. Building and compiling a kysely query costs more than running
 * it against a cached SQLite statement, so a hot query is built once with sentinel parameter
 * values, compiled for the database's dialect, and then instantiated with fresh values in the
 * compiled positions. The query stays a kysely query (dialect-neutral); only the build is cached.
 * Prepared queries are reads of committed data run through `Database.read` (never inside a
 * transaction: a transaction's own reads go through its kysely handle).
 */
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './database';

const SENTINEL = '\u0000param:';

/** Named parameters as the builder sees them: each is a placeholder the compiled SQL binds later. */
export type Placeholders<P> = { readonly [K in keyof P]: P[K] };

/** A prepared query: call it with parameters to get the compiled query to run. */
export type PreparedQuery<P, Row> = (params: P) => CompiledQuery<Row>;

/**
 * `build` receives placeholders (use them only as plain values: comparisons, inserted values)
 * and returns a compilable query; the result instantiates it with concrete parameters.
 */
export function preparedQuery<P extends Record<string, string | number | null>, Row>(
  db: Kysely<any>,
  build: (p: Placeholders<P>) => Compilable<Row>,
): PreparedQuery<P, Row> {
  let sql: string | undefined;
  // Each compiled parameter is either a named placeholder or a constant the builder wrote.
  let order: ({ name: keyof P } | { value: unknown })[] = [];
  return (params) => {
    if (sql === undefined) {
      const placeholders = new Proxy({}, { get: (_t, name) => `${SENTINEL}${String(name)}` }) as Placeholders<P>;
      const compiled = build(placeholders).compile();
      order = compiled.parameters.map((value) =>
        typeof value === 'string' && value.startsWith(SENTINEL) ? { name: value.slice(SENTINEL.length) as keyof P } : { value },
      );
      sql = compiled.sql;
    }
    return CompiledQuery.raw(sql, order.map((o) => ('name' in o ? params[o.name] : o.value))) as CompiledQuery<Row>;
  };
}

/** A prepared read run on its own through `Database.read`. */
export function prepared<P extends Record<string, string | number | null>, Row>(
  database: Database,
  build: (p: Placeholders<P>) => Compilable<Row>,
): (params: P) => Promise<Row[]> {
  const query = preparedQuery<P, Row>(database.db, build);
  return async (params) => (await database.read([query(params)]))[0] as Row[];
}
