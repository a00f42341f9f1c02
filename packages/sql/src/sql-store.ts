import type { SessionKey, SessionKeyFilter } from "@memoria/core";
import { type EngineSession, MemoriaError, StoreClosedError, type StoreEngine, StoreUnavailableError, defineStore } from "@memoria/core/store-kit";
import { readStatements } from "./history-reads.js";
import { type Tables, migrate, tablesFor } from "./schema.js";
import { type SqlDialect, all, run } from "./sql-dialect.js";
import { tableLock } from "./table-lock.js";
import { conversationQueries } from "./conversation-queries.js";
import { type SqlRecallIndex, recallTable } from "./recall-table.js";
import { replaceTail } from "./tail-replacement.js";
import { turnWriter } from "./turn-writer.js";
import type { SqlHistoryStore, SqlStoreOptions } from "./sql-store-types.js";

export type { SqlHistoryStore, SqlStoreOptions } from "./sql-store-types.js";

/**
 * The store shared by every SQL engine: an engine (below) that moves strings, and
 * `defineStore` for the rest. SQLite, PostgreSQL and MySQL differ only in their
 * dialect (sql-dialect.ts).
 */
export function createSqlStore(name: string, dialect: SqlDialect, options: SqlStoreOptions): SqlHistoryStore {
  const t: Tables = tablesFor(options.tablePrefix ?? "memoria_", dialect.forms.lockSchema);
  const ttlMs = ttlOf(options.ttlSeconds);
  const now = dialect.forms.nowMs;
  const alive = (column = "expires_at") => `(${column} IS NULL OR ${column} > ${now})`;
  const reads = readStatements(dialect, t, alive("s.expires_at"));
  // The same reads, returning rows only while the lock's owner (the last parameter) holds it: a lock's try reads with them.
  const lockedReads =
    dialect.driver.inOneTrip &&
    readStatements(dialect, t, `${alive("s.expires_at")} AND EXISTS (SELECT 1 FROM ${t.locks} l WHERE l.session_id = s.id AND l.owner = ?)`);
  const writer = turnWriter(dialect, t, ttlMs);
  let migrated: Promise<void> | undefined;
  /** Migrated and open: a read need not wait on `ready()` (an await of a settled promise still costs a tick). */
  let isReady = false;
  const conversations = conversationQueries(dialect, t, writer, () => ready(), alive);
  let closed = false;
  let recall: SqlRecallIndex | undefined;

  /** Migrates once; a failed start is retried by the next call. */
  function ready(): Promise<void> {
    if (closed) return Promise.reject(new StoreClosedError(name));
    migrated ??= migrate(dialect, t).then(
      () => {
        isReady = !closed;
      },
      (error: unknown) => {
        migrated = undefined;
        throw wrapUnavailable(name, error);
      },
    );
    return migrated;
  }

  /** Runs one statement outside a transaction. */
  function query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return dialect.driver.execute<T[]>({ kind: "all", sql, params });
  }
  /** Each row's first column, from one statement outside a transaction. */
  function column(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    return dialect.driver.execute<unknown[]>({ kind: "column", sql, params });
  }
  function change(sql: string, params: readonly unknown[] = []): Promise<number> {
    return dialect.driver.execute<number>({ kind: "run", sql, params });
  }

  /** The filter's fields as `EXISTS` conditions on `s.id`, beyond the one that drives the scan. */
  function fieldConditions(entries: [string, string][]): { sql: string; params: string[] } {
    return {
      sql: entries.map(() => ` AND EXISTS (SELECT 1 FROM ${t.fields} g WHERE g.session_id = s.id AND g.field = ? AND g.value = ?)`).join(""),
      params: entries.flat(),
    };
  }

  const engine: StoreEngine = {
    name,
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },
    recallIndex: () => (recall ??= recallTable(dialect, t, ready)),

    async read({ id }, last) {
      if (!isReady) await ready();
      return (await (last === undefined ? column(reads.all, [id]) : column(reads.last, reads.lastParams(id, last)))) as string[];
    },

    async append({ key, id }, payloads, turn) {
      if (!isReady) await ready();
      return writer.append(key, id, payloads, turn.turnId, turn.fence, turn.release);
    },

    async getState({ id }, stateKey) {
      await ready();
      const [row] = await query<{ value: string }>(
        `SELECT ${dialect.forms.jsonText("value")} AS value FROM ${t.state} WHERE session_id = ? AND name = ? AND NOT EXISTS (SELECT 1 FROM ${t.sessions} WHERE id = ? AND NOT ${alive()})`,
        [id, stateKey, id],
      );
      return row?.value;
    },

    async getAllState({ id }) {
      await ready();
      const rows = await query<{ name: string; value: string }>(
        `SELECT st.name, ${dialect.forms.jsonText("st.value")} AS value FROM ${t.state} st JOIN ${t.sessions} s ON s.id = st.session_id WHERE s.id = ? AND ${alive("s.expires_at")}`,
        [id],
      );
      return rows.map((row) => [row.name, row.value] as const);
    },

    async setState({ key, id }, stateKey, json, fence) {
      await ready();
      await writer.setStates(key, id, [[stateKey, json]], fence);
    },

    async setStates({ key, id }, values, fence) {
      await ready();
      await writer.setStates(key, id, values, fence);
    },

    info: conversations.info,
    setInfo: conversations.setInfo,
    recent: conversations.recent,

    async replaceTail({ key, id }, tail, fence) {
      await ready();
      return dialect.driver.transaction(() => replaceTail(dialect, t, writer, key, id, tail, fence));
    },

    async trim({ id }, oldest) {
      await ready();
      return dialect.driver.transaction(function* () {
        const removed = yield* run(
          `DELETE FROM ${t.messages} WHERE session_id = ? AND seq IN (SELECT seq FROM (SELECT seq FROM ${t.messages} WHERE session_id = ? ORDER BY seq LIMIT ?) AS oldest)`,
          [id, id, oldest],
        );
        if (removed > 0) yield* run(`UPDATE ${t.sessions} SET message_count = message_count - ? WHERE id = ?`, [removed, id]);
        return removed;
      });
    },

    async clear({ id }) {
      await ready();
      await dialect.driver.transaction(function* () {
        yield* run(`DELETE FROM ${t.locks} WHERE session_id = ?`, [id]);
        yield* run(`DELETE FROM ${t.sessions} WHERE id = ?`, [id]);
      });
    },

    async count({ id }) {
      await ready();
      const [row] = await query<{ message_count: number | string }>(`SELECT message_count FROM ${t.sessions} WHERE id = ? AND ${alive()}`, [id]);
      return row ? Number(row.message_count) : 0;
    },

    /** Sessions after `after`, every field of `match` held (the first through the fields index, the others as conditions), with their keys as written. */
    async list(match, { after, limit }) {
      await ready();
      const entries = Object.entries(match);
      let rows: { id: string; key_json: string }[];
      if (entries.length === 0) {
        rows = await query(`SELECT id, key_json FROM ${t.sessions} s WHERE id > ? AND ${alive()} ORDER BY id LIMIT ?`, [after ?? "", limit]);
      } else {
        const [[field, value], ...rest] = entries as [[string, string], ...[string, string][]];
        const more = fieldConditions(rest);
        rows = await query(
          `SELECT s.id, s.key_json FROM ${t.fields} f JOIN ${t.sessions} s ON s.id = f.session_id
           WHERE f.field = ? AND f.value = ? AND f.session_id > ? AND ${alive("s.expires_at")}${more.sql}
           ORDER BY f.session_id LIMIT ?`,
          [field, value, after ?? "", ...more.params, limit],
        );
      }
      return rows.map((row) => ({ id: row.id, key: JSON.parse(row.key_json) as SessionKey }));
    },

    async delete(match: SessionKeyFilter) {
      const [[field, value], ...rest] = Object.entries(match) as [[string, string], ...[string, string][]];
      const more = fieldConditions(rest);
      await ready();
      const matching = `SELECT s.id FROM ${t.fields} f JOIN ${t.sessions} s ON s.id = f.session_id WHERE f.field = ? AND f.value = ?${more.sql}`;
      const params = [field, value, ...more.params];
      // Erased sessions lose their locks in the same transaction, so a turn in flight on
      // one is refused at its save. PostgreSQL first freezes the lock table: no turn can
      // take a lock or pass its fence while the erasure runs, and a save already past its
      // fence ends before the erasure starts (and is erased with the rest). Otherwise a
      // turn that created a session under its lock while this ran could keep that lock.
      const deleted = await dialect.driver.transaction(function* () {
        if (dialect.forms.freezeTable) yield* run(dialect.forms.freezeTable(t.locks), []);
        const erased = dialect.features.returning
          ? yield* all<{ id: string }>(`DELETE FROM ${t.sessions} WHERE id IN (${matching}) RETURNING id`, params)
          : yield* all<{ id: string }>(`${matching}${dialect.forms.forUpdate}`, params);
        for (let from = 0; from < erased.length; from += dialect.features.maxParams) {
          const ids = erased.slice(from, from + dialect.features.maxParams).map((row) => row.id);
          const list = ids.map(() => "?").join(", ");
          // Without RETURNING (MySQL), the matching rows were read and locked first, then go here.
          if (!dialect.features.returning) yield* run(`DELETE FROM ${t.sessions} WHERE id IN (${list})`, ids);
          yield* run(`DELETE FROM ${t.locks} WHERE session_id IN (${list})`, ids);
        }
        return erased.length;
      });
      recall?.forget(); // nothing of an erased session stays held in this process
      await dialect.driver.afterErase();
      return deleted;
    },

    lock: ({ id }: EngineSession, owner, ttlMs) => tableLock(dialect, t, id, owner, ttlMs, ready, lockedReads || undefined),

    ready,

    async prune(batchSize = 500) {
      await ready();
      let total = 0;
      for (;;) {
        const deleted = await change(
          `DELETE FROM ${t.sessions} WHERE id IN (SELECT id FROM (
             SELECT id FROM ${t.sessions} WHERE expires_at IS NOT NULL AND expires_at <= ${now} LIMIT ?) AS expired)`,
          [batchSize],
        );
        total += deleted;
        if (deleted < batchSize) break;
      }
      if (total > 0) recall?.forget();
      await change(`DELETE FROM ${t.locks} WHERE expires_at <= ${now}`);
      return total;
    },

    async close() {
      closed = true;
      isReady = false;
      recall?.forget();
      await dialect.driver.close();
    },
  };

  return defineStore(engine) as SqlHistoryStore;
}

function ttlOf(ttlSeconds: number | undefined): number | undefined {
  if (ttlSeconds === undefined) return undefined;
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `ttlSeconds must be a positive number, got ${ttlSeconds}.`);
  }
  return Math.round(ttlSeconds * 1000);
}

/** A store that could not start wrote nothing: `not-stored`. */
function wrapUnavailable(name: string, error: unknown): unknown {
  if (MemoriaError.isInstance(error)) return error;
  return new StoreUnavailableError(`The ${name} store could not start: ${(error as Error)?.message ?? error}.`, { cause: error, outcome: "not-stored" });
}
