/**
 * A whole memoria store on `defineStore`: the engine moves strings in and out of SQLite
 * (better-sqlite3), the kit does the rest. Walked through in docs/write-your-own-store.md.
 */
import type { HistoryStore } from "@memoria/core";
import { LOCK_LOST, type StoreEngine, defineStore } from "@memoria/core/store-kit";
import Database from "better-sqlite3";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, active_at INTEGER NOT NULL, title TEXT, metadata TEXT);
  CREATE TABLE IF NOT EXISTS messages (id TEXT NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (id, seq)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS turns (id TEXT NOT NULL, turn TEXT NOT NULL, PRIMARY KEY (id, turn)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS state (id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (id, name)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS locks (id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL);`;

export function createSqliteEngineStore(path: string): HistoryStore {
  return defineStore(sqliteEngine(path));
}

/** The engine alone: what `defineStore` makes a store of. */
export function sqliteEngine(path: string): StoreEngine {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000"); // a second process's write waits its turn
  db.exec(SCHEMA);
  const one = <T>(sql: string, ...args: unknown[]) => db.prepare(sql).get(...args) as T | undefined;
  const all = <T>(sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as T[];
  const run = (sql: string, ...args: unknown[]) => db.prepare(sql).run(...args).changes;
  /** Runs `body` in a write transaction, taken at once (BEGIN IMMEDIATE), so two processes never deadlock upgrading a read. */
  const write = <T>(body: () => T): T => db.transaction(body).immediate();

  /** A fenced write goes ahead only while its lock is held by the token it carries. */
  const fenceHeld = (id: string, fence: string | undefined) =>
    fence === undefined || one<{ owner: string }>("SELECT owner FROM locks WHERE id = ?", id)?.owner === fence;
  /** The session's row, made when a write is its first; an append also marks it active. */
  const touch = (id: string, active: boolean) => {
    const now = Date.now();
    run(
      `INSERT INTO sessions (id, created_at, active_at) VALUES (?, ?, ?) ON CONFLICT (id) DO ${active ? "UPDATE SET active_at = excluded.active_at" : "NOTHING"}`,
      id,
      now,
      now,
    );
  };
  const countOf = (id: string) => one<{ n: number }>("SELECT count(*) AS n FROM messages WHERE id = ?", id)?.n ?? 0;
  /** Appends after the session's last message (seq numbers grow; trims and edits leave gaps). */
  const appendRows = (id: string, payloads: readonly string[]) => {
    const next = (one<{ seq: number | null }>("SELECT max(seq) AS seq FROM messages WHERE id = ?", id)?.seq ?? -1) + 1;
    const insert = db.prepare("INSERT INTO messages (id, seq, payload) VALUES (?, ?, ?)");
    for (const [i, payload] of payloads.entries()) insert.run(id, next + i, payload);
  };
  /** Deletes the session's first (`ASC`) or last (`DESC`) `count` messages; returns how many went. */
  const cut = (id: string, order: "ASC" | "DESC", count: number) =>
    run(`DELETE FROM messages WHERE id = ? AND seq IN (SELECT seq FROM messages WHERE id = ? ORDER BY seq ${order} LIMIT ?)`, id, id, count);

  return {
    name: "sqlite-engine-example",
    capabilities: { ttl: false, crossProcessLock: true, sharedBackend: true },

    async read({ id }, last) {
      const rows =
        last === undefined
          ? all<{ payload: string }>("SELECT payload FROM messages WHERE id = ? ORDER BY seq", id)
          : all<{ payload: string }>("SELECT payload FROM (SELECT seq, payload FROM messages WHERE id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq", id, last);
      return rows.map((row) => row.payload);
    },

    count: async ({ id }) => countOf(id),

    async append({ id }, payloads, turn) {
      return write(() => {
        if (!fenceHeld(id, turn.fence)) return LOCK_LOST;
        if (run("INSERT INTO turns (id, turn) VALUES (?, ?) ON CONFLICT DO NOTHING", id, turn.turnId) === 0) return { appended: false };
        touch(id, true);
        appendRows(id, payloads);
        return { appended: true };
      });
    },

    async clear({ id }) {
      write(() => {
        for (const table of ["sessions", "messages", "turns", "state", "locks"]) run(`DELETE FROM ${table} WHERE id = ?`, id);
      });
    },

    getState: async ({ id }, name) => one<{ value: string }>("SELECT value FROM state WHERE id = ? AND name = ?", id, name)?.value,

    getAllState: async ({ id }) =>
      all<{ name: string; value: string }>("SELECT name, value FROM state WHERE id = ?", id).map((row) => [row.name, row.value] as const),

    async setState({ id }, name, json, fence) {
      return write(() => {
        if (!fenceHeld(id, fence)) return LOCK_LOST;
        touch(id, false);
        run("INSERT INTO state (id, name, value) VALUES (?, ?, ?) ON CONFLICT (id, name) DO UPDATE SET value = excluded.value", id, name, json);
      });
    },

    // Every session, in id order: the kit keeps those the filter lists.
    list: async (_match, { after, limit }) =>
      all<{ id: string }>("SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?", after ?? "", limit).map((row) => row.id),

    async info({ id }) {
      type Row = { created_at: number; active_at: number; title: string | null; metadata: string | null };
      const row = one<Row>("SELECT created_at, active_at, title, metadata FROM sessions WHERE id = ?", id);
      if (!row) return undefined;
      return { id, createdAt: row.created_at, lastActiveAt: row.active_at, messageCount: countOf(id), title: row.title, metadata: row.metadata };
    },

    async setInfo({ id }, patch, fence) {
      return write(() => {
        if (!fenceHeld(id, fence)) return LOCK_LOST;
        touch(id, false);
        const columns = { title: patch.title, metadata: patch.metadata, created_at: patch.createdAt, active_at: patch.lastActiveAt };
        for (const [column, value] of Object.entries(columns)) if (value !== undefined) run(`UPDATE sessions SET ${column} = ? WHERE id = ?`, value, id);
      });
    },

    async replaceTail({ id }, tail, fence) {
      return write(() => {
        if (!fenceHeld(id, fence)) return LOCK_LOST;
        const held = countOf(id);
        if (held !== tail.count) return held;
        cut(id, "DESC", held - tail.from);
        appendRows(id, tail.payloads);
        return held;
      });
    },

    trim: async ({ id }, oldest) => write(() => cut(id, "ASC", oldest)),

    // A lease in the locks table: taken when free, expired, or already this owner's.
    lock({ id }, owner, ttlMs) {
      return {
        take: async () =>
          run(
            "INSERT INTO locks (id, owner, expires_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at WHERE locks.expires_at < ? OR locks.owner = excluded.owner",
            id,
            owner,
            Date.now() + ttlMs,
            Date.now(),
          ) === 1,
        renew: async () => run("UPDATE locks SET expires_at = ? WHERE id = ? AND owner = ?", Date.now() + ttlMs, id, owner) === 1,
        release: async () => void run("DELETE FROM locks WHERE id = ? AND owner = ?", id, owner),
      };
    },

    close: async () => void db.close(),
  };
}
