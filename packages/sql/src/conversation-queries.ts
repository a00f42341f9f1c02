import type { SessionKey, SessionKeyFilter } from "@memoria/core";
import type { CheckedPatch, EngineInfo, EngineSession } from "@memoria/core/store-kit";
import type { Tables } from "./schema.js";
import { type SqlDialect, run } from "./sql-dialect.js";
import { checkFence } from "./table-lock.js";
import type { TurnWriter } from "./turn-writer.js";

interface InfoRow {
  id: string;
  key_json: string;
  created_at: number | string | null;
  active_at: number | string | null;
  message_count: number | string;
  title: string | null;
  metadata: string | null;
}

const INFO_COLUMNS = "s.id, s.key_json, s.created_at, s.active_at, s.message_count, s.title, s.metadata";

function infoOf(row: InfoRow): EngineInfo {
  const lastActiveAt = Number(row.active_at ?? 0);
  return {
    id: row.id,
    key: JSON.parse(row.key_json) as SessionKey, // as written, its fields in their order (the kit checks it)
    createdAt: Number(row.created_at ?? lastActiveAt),
    lastActiveAt,
    messageCount: Number(row.message_count),
    title: row.title,
    metadata: row.metadata,
  };
}

/**
 * Conversation info on the sessions table: `created_at` and `active_at` are set by
 * the writes that make or append to a session, in the same statement; `recent`
 * walks the `(active_at DESC, id)` index, or a user's rows of the fields index.
 */
export function conversationQueries(dialect: SqlDialect, t: Tables, writer: TurnWriter, ready: () => Promise<void>, alive: (column: string) => string) {
  const query = <T>(sql: string, params: readonly unknown[]) => dialect.driver.execute<T[]>({ kind: "all", sql, params });

  return {
    async info({ id }: EngineSession): Promise<EngineInfo | undefined> {
      await ready();
      const [row] = await query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${t.sessions} s WHERE s.id = ? AND ${alive("s.expires_at")}`, [id]);
      return row && infoOf(row);
    },

    async setInfo({ key, id }: EngineSession, patch: CheckedPatch, token: string | undefined): Promise<void> {
      const sets: string[] = [];
      const params: unknown[] = [];
      for (const [column, value] of [
        ["title", patch.title],
        ["metadata", patch.metadata],
        ["created_at", patch.createdAt],
        ["active_at", patch.lastActiveAt],
      ] as const) {
        if (value === undefined) continue;
        sets.push(`${column} = ?`);
        params.push(value);
      }
      await ready();
      await dialect.driver.transaction(function* () {
        yield* checkFence(dialect, t, key, id, token);
        yield* writer.upsertSession(key, id, 0);
        if (sets.length > 0) yield* run(`UPDATE ${t.sessions} SET ${sets.join(", ")} WHERE id = ?`, [...params, id]);
      });
    },

    /** Newest first, strictly after `after` in (active_at desc, id) order, every field of `match` held (a join on the fields index each). */
    async recent(match: SessionKeyFilter, page: { after: { lastActiveAt: number; id: string } | undefined; limit: number }): Promise<EngineInfo[]> {
      await ready();
      const params: unknown[] = [];
      let from = `${t.sessions} s`;
      let where = alive("s.expires_at");
      for (const [i, [field, value]] of Object.entries(match).entries()) {
        from += ` JOIN ${t.fields} f${i} ON f${i}.session_id = s.id AND f${i}.field = ? AND f${i}.value = ?`;
        params.push(field, value);
      }
      const { after } = page;
      if (after) {
        where += " AND (s.active_at < ? OR (s.active_at = ? AND s.id > ?))";
        params.push(after.lastActiveAt, after.lastActiveAt, after.id);
      }
      params.push(page.limit);
      const rows = await query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${from} WHERE ${where} ORDER BY s.active_at DESC, s.id LIMIT ?`, params);
      return rows.map(infoOf);
    },
  };
}
