import type { Tables } from "./schema.js";
import { type SqlDialect, type SqlProgram, all } from "./sql-dialect.js";

/**
 * Each recall scope's version, kept by the database itself: triggers on the recall
 * table stamp a scope with the next tick of one clock whenever a row of it is added,
 * changed or deleted, by any writer (another process, a cascade from an erased
 * session, an expiry). A copy of a scope held in a process (recall-scope-cache.ts)
 * is current while its version is. The clock only moves forward, so a version is
 * never given twice, even to a scope emptied and filled again. A scope's row goes
 * with its last item: an erased user's scope id stays nowhere. SQLite only; the
 * server engines rank in SQL (PostgreSQL reads a scope's vectors each time).
 */
export function recallVersionSchema(t: Tables): string[] {
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

const versionOf = (t: Tables) => `SELECT version FROM ${t.recallScopes} WHERE scope_id = ?`;

/** A scope's version now; 0 for a scope with no items. */
export async function scopeVersion(dialect: SqlDialect, t: Tables, scope: string): Promise<number> {
  const [version] = await dialect.execute<unknown[]>({ kind: "column", sql: versionOf(t), params: [scope] });
  return Number(version ?? 0);
}

/** The same, inside a transaction's program. */
export function* scopeVersionNow(t: Tables, scope: string): SqlProgram<number> {
  const [row] = yield* all<{ version: number | string }>(versionOf(t), [scope]);
  return Number(row?.version ?? 0);
}
