import {
  type FencedWriteOptions,
  type InfoPage,
  type InfoPatch,
  type ListOptions,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  createKeyFilter,
  createSessionKey,
  encodeSessionKey,
} from "@memoria/core";
import { checkInfoPatch, listLimit, parseRecentCursor, recentCursor, sessionInfo, withoutScopes } from "@memoria/core/store-kit";
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

function infoOf(row: InfoRow): SessionInfo {
  const lastActiveAt = Number(row.active_at ?? 0);
  return sessionInfo(createSessionKey(JSON.parse(row.key_json)), {
    createdAt: Number(row.created_at ?? lastActiveAt),
    lastActiveAt,
    messageCount: Number(row.message_count),
    title: row.title,
    metadata: row.metadata,
  });
}

/**
 * Conversation info on the sessions table: `created_at` and `active_at` are set by
 * the writes that make or append to a session, in the same statement; `recent`
 * walks the `(active_at DESC, id)` index, or a user's rows of the fields index.
 */
export function conversationQueries(
  dialect: SqlDialect,
  t: Tables,
  writer: TurnWriter,
  ready: () => Promise<void>,
  alive: (column: string) => string,
) {
  const query = <T>(sql: string, params: readonly unknown[]) => dialect.execute<T[]>({ kind: "all", sql, params });

  return {
    async info(key: SessionKey): Promise<SessionInfo | undefined> {
      const id = encodeSessionKey(createSessionKey(key));
      await ready();
      const [row] = await query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${t.sessions} s WHERE s.id = ? AND ${alive("s.expires_at")}`, [id]);
      return row && infoOf(row);
    },

    async setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      const checked = checkInfoPatch(patch);
      const id = encodeSessionKey(sessionKey);
      const sets: string[] = [];
      const params: unknown[] = [];
      for (const column of ["title", "metadata"] as const) {
        if (checked[column] === undefined) continue;
        sets.push(`${column} = ?`);
        params.push(checked[column]);
      }
      await ready();
      await dialect.transaction(function* () {
        yield* checkFence(dialect, t, sessionKey, id, options);
        yield* writer.upsertSession(sessionKey, id, 0);
        if (sets.length > 0) yield* run(`UPDATE ${t.sessions} SET ${sets.join(", ")} WHERE id = ?`, [...params, id]);
      });
    },

    async recent(filter?: SessionKeyFilter, options?: ListOptions): Promise<InfoPage> {
      const entries = Object.entries(createKeyFilter(filter));
      const limit = listLimit(options);
      const after = parseRecentCursor(options?.cursor);
      await ready();
      const params: unknown[] = [];
      let from = `${t.sessions} s`;
      let where = alive("s.expires_at");
      for (const [i, [field, value]] of entries.entries()) {
        from += ` JOIN ${t.fields} f${i} ON f${i}.session_id = s.id AND f${i}.field = ? AND f${i}.value = ?`;
        params.push(field, value);
      }
      if (after) {
        where += " AND (s.active_at < ? OR (s.active_at = ? AND s.id > ?))";
        params.push(after.lastActiveAt, after.lastActiveAt, after.id);
      }
      params.push(limit + 1);
      const rows = await query<InfoRow>(`SELECT ${INFO_COLUMNS} FROM ${from} WHERE ${where} ORDER BY s.active_at DESC, s.id LIMIT ?`, params);
      const page = rows.slice(0, limit);
      const result: InfoPage = { sessions: withoutScopes(page.map(infoOf), (info) => info.key, filter) };
      const last = page[page.length - 1];
      if (rows.length > limit && last) result.cursor = recentCursor(Number(last.active_at ?? 0), last.id);
      return result;
    },
  };
}
