import type { Tables } from "./schema.js";
import { type SqlDialect, type SqlProgram, all } from "./sql-dialect.js";

/*
 * Each recall scope's version, kept by the database itself: triggers on the recall
 * table stamp a scope with the next tick of one clock whenever a row of it is added,
 * changed or deleted, by any writer (another process, a cascade from an erased
 * session, an expiry). A copy of a scope held in a process (recall-scope-cache.ts)
 * is current while its version is. A clock's tick is never given twice, so neither is
 * a version, even to a scope emptied and filled again. A scope's row goes with its
 * last item: an erased user's scope id stays nowhere. MySQL keeps none (its queries
 * rank in SQL).
 */
/** SQLite's: a row-level trigger per change, the clock a one-row table (writers are serialised already). */
export function sqliteRecallVersions(t: Tables): string[] {
  // The scope given `scope`'s next version (an INSERT…SELECT takes ON CONFLICT only after a WHERE).
  const stamp = (scope: string) => `INSERT INTO ${t.recallScopes} (scope_id, version) SELECT ${scope}, now FROM ${t.recallClock} WHERE true
      ON CONFLICT (scope_id) DO UPDATE SET version = excluded.version;`;
  const tick = `UPDATE ${t.recallClock} SET now = now + 1;`;
  const dropIfEmpty = (scope: string) =>
    `DELETE FROM ${t.recallScopes} WHERE scope_id = ${scope} AND NOT EXISTS (SELECT 1 FROM ${t.recall} WHERE scope_id = ${scope});`;
  return [
    `CREATE TABLE ${t.recallClock} (now BIGINT NOT NULL)`,
    `INSERT INTO ${t.recallClock} (now) VALUES (1)`,
    `CREATE TABLE ${t.recallScopes} (scope_id TEXT PRIMARY KEY, version BIGINT NOT NULL)`,
    `INSERT INTO ${t.recallScopes} (scope_id, version) SELECT DISTINCT scope_id, 1 FROM ${t.recall}`,
    `CREATE TRIGGER ${t.recall}_added AFTER INSERT ON ${t.recall} BEGIN ${tick} ${stamp("NEW.scope_id")} END`,
    `CREATE TRIGGER ${t.recall}_changed AFTER UPDATE ON ${t.recall} BEGIN ${tick} ${stamp("NEW.scope_id")} ${stamp("OLD.scope_id")} ${dropIfEmpty("OLD.scope_id")} END`,
    `CREATE TRIGGER ${t.recall}_removed AFTER DELETE ON ${t.recall} BEGIN ${tick} ${stamp("OLD.scope_id")} ${dropIfEmpty("OLD.scope_id")} END`,
  ];
}

/**
 * PostgreSQL's: the clock a sequence (it takes no lock, so writers of different scopes
 * never wait on one another), and one trigger per statement over the rows it changed,
 * so erasing a session of 100,000 items stamps its scope once, not 100,000 times.
 */
export function postgresRecallVersions(t: Tables): string[] {
  const stamp = (rows: string) => `INSERT INTO ${t.recallScopes} (scope_id, version)
        SELECT scope_id, nextval('${t.recallClock}') FROM (SELECT DISTINCT scope_id FROM ${rows}) AS changed
        ON CONFLICT (scope_id) DO UPDATE SET version = excluded.version;`;
  const left = `(SELECT DISTINCT scope_id FROM old_rows) AS left_scope`;
  const body = `BEGIN
      IF TG_OP <> 'DELETE' THEN
        ${stamp("new_rows")}
      END IF;
      IF TG_OP <> 'INSERT' THEN
        DELETE FROM ${t.recallScopes} s USING ${left}
          WHERE s.scope_id = left_scope.scope_id AND NOT EXISTS (SELECT 1 FROM ${t.recall} r WHERE r.scope_id = left_scope.scope_id);
        INSERT INTO ${t.recallScopes} (scope_id, version)
          SELECT scope_id, nextval('${t.recallClock}') FROM ${left}
          WHERE EXISTS (SELECT 1 FROM ${t.recall} r WHERE r.scope_id = left_scope.scope_id)
          ON CONFLICT (scope_id) DO UPDATE SET version = excluded.version;
      END IF;
      RETURN NULL;
    END`;
  const on = (event: string, tables: string) =>
    `CREATE TRIGGER ${t.recall}_${event === "INSERT" ? "added" : event === "UPDATE" ? "changed" : "removed"} AFTER ${event} ON ${t.recall}
      REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION ${t.recall}_stamp()`;
  return [
    `CREATE SEQUENCE ${t.recallClock}`,
    `CREATE TABLE ${t.recallScopes} (scope_id TEXT PRIMARY KEY, version BIGINT NOT NULL)`,
    `INSERT INTO ${t.recallScopes} (scope_id, version) SELECT scope_id, nextval('${t.recallClock}') FROM (SELECT DISTINCT scope_id FROM ${t.recall}) AS held`,
    `CREATE FUNCTION ${t.recall}_stamp() RETURNS trigger LANGUAGE plpgsql AS $stamp$ ${body} $stamp$`,
    on("INSERT", "NEW TABLE AS new_rows"),
    on("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
    on("DELETE", "OLD TABLE AS old_rows"),
  ];
}

const versionOf = (t: Tables) => `SELECT version FROM ${t.recallScopes} WHERE scope_id = ?`;

/** A scope's version now; 0 for a scope with no items. */
export async function scopeVersion(dialect: SqlDialect, t: Tables, scope: string): Promise<number> {
  const [version] = await dialect.driver.execute<unknown[]>({ kind: "column", sql: versionOf(t), params: [scope] });
  return Number(version ?? 0);
}

/**
 * The same, inside a transaction's program; `lock` holds the scope's version row until
 * commit (where the engine's transactions do not exclude each other already), so no
 * other writer's change to the scope commits between this read and the commit.
 */
export function* scopeVersionNow(t: Tables, scope: string, lock = ""): SqlProgram<number> {
  const [row] = yield* all<{ version: number | string }>(versionOf(t) + lock, [scope]);
  return Number(row?.version ?? 0);
}
