import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { MemoriaError, StoreUnavailableError } from "@memoria/core";
import { loadPeerDependency } from "@memoria/core/store-kit";
import { Rollback, type SqlDialect, type SqlDriver, type SqlProgram, type SqlStep, driveSync } from "./sql-dialect.js";
import { type HeldRecallOptions, recallCacheBytesOf } from "./recall-scope-cache.js";
import { type SqlForms, standardForms } from "./sql-forms.js";
import { type SqlHistoryStore, type SqlStoreOptions, createSqlStore } from "./sql-store.js";

/** The parts of a better-sqlite3 `Database` the store uses. */
export interface SqliteDatabaseLike {
  readonly inTransaction?: boolean;
  prepare(sql: string): SqliteStatementLike;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
}

export interface SqliteStatementLike {
  run(...params: unknown[]): { changes: number };
  all(...params: unknown[]): unknown[];
  /** better-sqlite3: rows as their first column's value (`pluck(true)`). */
  pluck?(toggle?: boolean): SqliteStatementLike;
}

export interface SqliteStoreOptions extends SqlStoreOptions, HeldRecallOptions {
  /**
   * The database file, created (with its folder) if missing. `":memory:"` keeps
   * the database in this process's memory.
   * @default "./.memoria/history.db"
   */
  path?: string;
  /** An open better-sqlite3 `Database` to use instead of `path`. The store does not close it. */
  database?: SqliteDatabaseLike;
  /**
   * How long to wait for another process's write lock before failing.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * SQLite's `synchronous` setting in WAL mode. `"FULL"` syncs the log on every
   * commit, so a committed turn survives power loss; `"NORMAL"` survives a crash of
   * the process but may lose the last turns on power loss, and is faster.
   * @default "FULL"
   */
  synchronous?: "FULL" | "NORMAL";
}

const LOCK_SCHEMA = "memoria_lockdb";

/** Where the SQLite store keeps its file when given no `path`. */
export const DEFAULT_SQLITE_PATH = "./.memoria/history.db";

type BetterSqlite3 = new (path: string, options?: { timeout?: number }) => SqliteDatabaseLike;

/** SQLite result codes that mean the disk or the file, not the statement, failed. */
const STORAGE_CODES = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|CANTOPEN|READONLY|NOMEM|PROTOCOL|CORRUPT|NOTADB)/;

/**
 * Every error of the driver (a `SqliteError`, with its `SQLITE_…` code) as
 * `StoreUnavailableError`: a full disk, an I/O error, a database locked past the
 * busy timeout, a corrupt file, or a statement the database refused (a table
 * dropped under the store). A transaction that failed was rolled back whole, and a
 * statement outside one that failed did not apply, so nothing of it was stored.
 */
function driverError(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (MemoriaError.isInstance(error) || typeof code !== "string" || !code.startsWith("SQLITE_")) return error;
  const hint = code.startsWith("SQLITE_FULL") ? " The disk is full: free space, then retry." : "";
  const what = STORAGE_CODES.test(code) ? "SQLite could not use its file" : "SQLite refused a statement";
  return new StoreUnavailableError(`${what}: ${(error as Error).message} (${code}).${hint}`, { cause: error, outcome: "not-stored" });
}

/** Creates `path` readable and writable by its owner only (0600), in a folder only the owner can enter (0700), if it is new. */
function createPrivately(path: string): void {
  if (path === ":memory:" || existsSync(path)) return;
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
}

/**
 * SQLite through better-sqlite3, which is synchronous. A transaction runs from
 * BEGIN IMMEDIATE to COMMIT without yielding to the event loop, so it never holds
 * the write lock while other code of this process waits on it (two connections in
 * one thread would otherwise deadlock in the busy handler). Operations of one store
 * run one at a time because each runs whole when called; across processes, the busy
 * timeout orders writers.
 */
function sqliteDialect(options: SqliteStoreOptions): SqlDialect {
  const recallCacheBytes = recallCacheBytesOf(options);
  const owned = options.database === undefined;
  let db: SqliteDatabaseLike | undefined = options.database;
  const statements = new Map<string, SqliteStatementLike>();

  /** The connection, opened and configured on first use. */
  function open(): SqliteDatabaseLike {
    if (db) return db;
    const path = options.path ?? DEFAULT_SQLITE_PATH;
    // SQLite gives its -wal and -shm files the main file's permissions.
    createPrivately(path);
    if (path !== ":memory:") createPrivately(`${path}-locks`);
    const Database = loadPeerDependency<BetterSqlite3>("better-sqlite3", "The SQLite store", import.meta.url);
    let opened: SqliteDatabaseLike;
    try {
      opened = new Database(path);
    } catch (error) {
      throw driverError(error);
    }
    if (path !== ":memory:") opened.pragma("journal_mode = WAL");
    opened.pragma(`synchronous = ${options.synchronous === "NORMAL" ? "NORMAL" : "FULL"}`);
    configure(opened);
    attachLocks(opened, path);
    db = opened;
    return opened;
  }

  /**
   * Turn locks live in a second file beside the history (`<path>-locks`), written
   * without fsync: a lock is worth nothing after a crash (it expires anyway), and
   * syncing its take and release would triple the fsyncs of every turn.
   */
  function attachLocks(database: SqliteDatabaseLike, path: string): void {
    const attached = database.pragma("database_list") as { name: string }[];
    if (attached.some((entry) => entry.name === LOCK_SCHEMA)) return; // another store on this connection did it
    database.prepare(`ATTACH DATABASE ? AS ${LOCK_SCHEMA}`).run(path === ":memory:" ? ":memory:" : `${path}-locks`);
    if (path !== ":memory:") database.pragma(`${LOCK_SCHEMA}.journal_mode = WAL`);
    database.pragma(`${LOCK_SCHEMA}.synchronous = OFF`);
  }

  /** Settings of ours that a given database gets too (outside any transaction). */
  function configure(database: SqliteDatabaseLike): void {
    database.pragma("foreign_keys = ON");
    // Deleted content is overwritten with zeros, so erased messages do not linger in free pages.
    database.pragma("secure_delete = ON");
    database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  }
  if (db) {
    configure(db);
    const [main] = db.pragma("database_list") as { name: string; file: string }[];
    attachLocks(db, main?.file ? main.file : ":memory:");
  }

  let vectorFunctions = false;
  /** sqlite-vec's functions on this connection (an optional peer, loaded when recall first needs it). */
  function loadVectorFunctions(): void {
    if (vectorFunctions) return;
    const sqliteVec = loadPeerDependency<{ load(db: unknown): void }>("sqlite-vec", "Recall memory on SQLite", import.meta.url);
    sqliteVec.load(open());
    vectorFunctions = true;
  }

  function statement(sql: string): SqliteStatementLike {
    let prepared = statements.get(sql);
    if (!prepared) {
      prepared = open().prepare(sql);
      statements.set(sql, prepared);
    }
    return prepared;
  }

  function execute(step: SqlStep): unknown {
    if (step.kind === "column") return column(step.sql, step.params);
    const prepared = statement(step.sql);
    return step.kind === "all" ? prepared.all(...step.params) : prepared.run(...step.params).changes;
  }

  const columns = new Map<string, { prepared: SqliteStatementLike; plucked: boolean }>();

  /** The first column of each row, without building row objects where the driver can (`pluck`). */
  function column(sql: string, params: readonly unknown[]): unknown[] {
    let entry = columns.get(sql);
    if (!entry) {
      const prepared = open().prepare(sql);
      entry = prepared.pluck ? { prepared: prepared.pluck(true), plucked: true } : { prepared, plucked: false };
      columns.set(sql, entry);
    }
    const rows = entry.prepared.all(...params);
    return entry.plucked ? rows : rows.map((row) => Object.values(row as object)[0]);
  }

  /**
   * Runs `body` now; storage failures become typed. Every body is synchronous from
   * start to end (better-sqlite3 is), so nothing else of this process can run on the
   * connection in between, and no queue is needed to keep operations apart.
   */
  function typed<T>(body: () => T): Promise<T> {
    try {
      return Promise.resolve(body());
    } catch (error) {
      return Promise.reject(driverError(error));
    }
  }

  function transaction<T>(program: () => SqlProgram<T>): Promise<T> {
    return typed(() => {
      statement("BEGIN IMMEDIATE").run();
      try {
        const value = driveSync(program(), execute);
        statement("COMMIT").run();
        return value;
      } catch (error) {
        // SQLite may have rolled back already (a full disk does): a second ROLLBACK must not hide the cause.
        if (open().inTransaction !== false) {
          try {
            statement("ROLLBACK").run();
          } catch {
            // nothing left to roll back
          }
        }
        if (error instanceof Rollback) return error.value as T;
        throw error;
      }
    });
  }

  const forms: SqlForms = {
    ...standardForms("sqlite"),
    jsonType: "TEXT",
    blobType: "BLOB",
    vectorDistance(column) {
      loadVectorFunctions();
      return `vec_distance_cosine(${column}, ?)`;
    },
    jsonText: (column) => column,
    nowMs: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
    lockSchema: LOCK_SCHEMA,
    forUpdate: "",
  };
  const driver: SqlDriver = {
    // The log still holds the erased rows' frames until a checkpoint copies it into the
    // database (where secure_delete zeroed them) and truncates it.
    afterErase: () =>
      typed(() => {
        open().pragma("wal_checkpoint(TRUNCATE)");
        open().pragma(`${LOCK_SCHEMA}.wal_checkpoint(TRUNCATE)`);
      }),
    execute: <T>(step: SqlStep) => typed(() => execute(step) as T),
    transaction,
    exclusive: transaction,
    async close() {
      await typed(() => {
        statements.clear();
        columns.clear();
        if (owned && db) db.close();
        db = undefined;
      });
    },
  };
  return { engine: "sqlite", driver, forms, features: { maxParams: 32_766, returning: true, windowsByRange: true, recallCacheBytes } };
}

/**
 * A history store in one SQLite file: the embedded default, no server needed.
 * One row per message keyed by (session, seq); WAL mode; schema created on first
 * use and migrated through a version table.
 */
export function createSqliteStore(options: SqliteStoreOptions = {}): SqlHistoryStore {
  return createSqlStore("sqlite", sqliteDialect(options), options);
}
