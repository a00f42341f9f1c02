/** What `watchStatements` needs of a better-sqlite3 `Database`. */
export interface PreparingDatabase {
  prepare(sql: string): unknown;
}

/**
 * Calls `seen` with each statement's SQL every time it runs (`run`, `all`, `get`,
 * `iterate`) on `db`, a better-sqlite3 `Database`, whose `prepare` it wraps: how a
 * test or the bench counts the statements a store sends. Returns `db`.
 */
export function watchStatements<D extends PreparingDatabase>(db: D, seen: (sql: string) => void): D {
  const prepare = db.prepare.bind(db);
  db.prepare = (sql: string) => {
    const statement = prepare(sql) as Record<string, unknown>;
    for (const name of ["run", "all", "get", "iterate"]) {
      const original = statement[name];
      if (typeof original !== "function") continue;
      statement[name] = (...args: unknown[]) => {
        seen(sql);
        return original.apply(statement, args);
      };
    }
    return statement;
  };
  return db;
}
