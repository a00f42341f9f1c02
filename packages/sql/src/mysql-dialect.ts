import { MemoriaError, StoreUnavailableError, type WriteOutcome } from "@memoria/core";
import { loadPeerDependency, withTimeout } from "@memoria/core/store-kit";
import { MYSQL_MAX_ID_LENGTH, mysqlForms } from "./mysql-forms.js";
import { Rollback, type SqlDialect, type SqlProgram, type SqlStep, driveAsync } from "./sql-dialect.js";
import { poolHolder } from "./pool-holder.js";
import { type SqlHistoryStore, type SqlStoreOptions, createSqlStore } from "./sql-store.js";

/** The parts of a mysql2 (`mysql2/promise`) pooled connection the store uses. */
export interface MysqlConnectionLike {
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
  release(): void;
  destroy(): void;
}

/** The parts of a mysql2 (`mysql2/promise`) `Pool` the store uses. */
export interface MysqlPoolLike {
  getConnection(): Promise<MysqlConnectionLike>;
  end(): Promise<void>;
}

export interface MysqlStoreOptions extends SqlStoreOptions {
  /** e.g. `mysql://user:pass@host:3306/db`. Used when no `pool` is given. */
  uri?: string;
  /**
   * A mysql2 `Pool` (from `mysql2/promise`) to use instead of `uri`, created with
   * `flags: ["-FOUND_ROWS"]`: the store counts rows changed, not rows matched. The
   * store does not end it.
   */
  pool?: MysqlPoolLike;
  /**
   * Connections in the pool the store creates.
   * @default 10
   */
  maxConnections?: number;
  /**
   * How long one database call (a connection, a statement) may take before it
   * fails with `STORE_UNAVAILABLE`; the connection it ran on is dropped.
   * @default 10_000
   */
  operationTimeoutMs?: number;
}

type Mysql2 = { createPool(config: Record<string, unknown>): MysqlPoolLike };

/** Errors that mean the connection, not the statement, failed: what a write left behind is unknown. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR",
  "ER_SERVER_SHUTDOWN",
  "ER_CONNECTION_KILLED",
  "ER_QUERY_INTERRUPTED",
]);
/** A transaction that lost to another (a deadlock, a lock wait past the server's limit) was rolled back whole: it is run again. */
const RETRIED = new Set(["ER_LOCK_DEADLOCK", "ER_LOCK_WAIT_TIMEOUT"]);
const RETRIES = 5;
/** The server is out of disk: "disk full", "table full", or an engine's errno 28 (ENOSPC). */
const DISK_FULL = /^ER_(DISK_FULL|RECORD_FILE_FULL)$|errno: 28|No space left/;

/** A statement that did not answer in time; its connection is dropped. */
class TimedOut extends Error {}

/** A transaction the server rolled back to break a deadlock or a long lock wait: run again. */
class LostToAnother extends Error {
  constructor(override readonly cause: unknown) {
    super("the transaction lost to another");
  }
}

/**
 * Every error of the driver as a typed one: a value longer than its column (a key
 * past MySQL's key sizes) is `INVALID_ARGUMENT`; a lost, refused or timed-out
 * connection is `StoreUnavailableError` with what a write may have left (`outcome`);
 * an error the server answered with is one after which the statement, and a
 * transaction it was in, did not apply.
 */
function typedError(error: unknown, outcome: WriteOutcome = "unknown"): unknown {
  if (MemoriaError.isInstance(error)) return error;
  const { code, fatal } = (error ?? {}) as { code?: string; fatal?: boolean };
  const message = (error as Error)?.message ?? String(error);
  const named = `${message}${code ? ` (${code})` : ""}`;
  if (code === "ER_DATA_TOO_LONG") {
    return new MemoriaError("INVALID_ARGUMENT", `A value is longer than the MySQL store's column holds (an encoded session key holds at most ${MYSQL_MAX_ID_LENGTH} characters): ${message}.`, { cause: error });
  }
  if (error instanceof TimedOut || fatal === true || (code !== undefined && NETWORK_CODES.has(code))) {
    return new StoreUnavailableError(`MySQL is unreachable: ${named}.`, { cause: error, outcome: code === "ECONNREFUSED" ? "not-stored" : outcome });
  }
  if (typeof (error as { sqlState?: unknown })?.sqlState === "string") {
    const hint = DISK_FULL.test(`${code} ${message}`) ? " The server is out of disk." : "";
    return new StoreUnavailableError(`MySQL refused a statement: ${named}.${hint}`, { cause: error, outcome: "not-stored" });
  }
  return error;
}

/** Rows changed: an UPDATE's rows matched (as on the other engines), anything else's rows affected. */
function counted(header: { affectedRows?: number; info?: string }): number {
  const matched = /Rows matched: (\d+)/.exec(header.info ?? "");
  return matched ? Number(matched[1]) : (header.affectedRows ?? 0);
}

function mysqlDialect(options: MysqlStoreOptions): SqlDialect {
  const timeoutMs = options.operationTimeoutMs ?? 10_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new MemoriaError("INVALID_ARGUMENT", `operationTimeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}.`);
  const clientFlags = (options.pool as { pool?: { config?: { connectionConfig?: { clientFlags?: number } } } } | undefined)?.pool?.config?.connectionConfig?.clientFlags;
  if (clientFlags !== undefined && (clientFlags & 2) !== 0) {
    throw new MemoriaError("INVALID_ARGUMENT", 'The MySQL store counts rows changed: create its pool with flags: ["-FOUND_ROWS"].');
  }
  const timedOut = (what: string) => () => new TimedOut(`${what} did not answer within ${timeoutMs} ms (operationTimeoutMs)`);
  /** Connections this store has set up (exact SQL mode, UTC), by the driver's connection object. */
  const configured = new WeakSet<object>();

  const pools = poolHolder("mysql", options.pool, () =>
    loadPeerDependency<Mysql2>("mysql2/promise", "The MySQL store", import.meta.url).createPool({
      uri: options.uri,
      connectionLimit: options.maxConnections ?? 10,
      connectTimeout: timeoutMs || undefined,
      charset: "utf8mb4",
      flags: ["-FOUND_ROWS"],
      supportBigNumbers: true,
    }),
  );

  async function query(connection: MysqlConnectionLike, sql: string, params: readonly unknown[]): Promise<unknown> {
    const [result] = await withTimeout(connection.query(sql, params as unknown[]), timeoutMs, timedOut("A statement"));
    return result;
  }

  async function execute(connection: MysqlConnectionLike, step: SqlStep): Promise<unknown> {
    const result = await query(connection, step.sql, step.params);
    if (step.kind === "run") return Array.isArray(result) ? result.length : counted(result as { affectedRows?: number; info?: string });
    const rows = result as Record<string, unknown>[];
    if (step.kind === "all") return rows;
    return rows.map((row) => {
      for (const name in row) return row[name];
      return undefined;
    });
  }

  /** A pooled connection, set up on its first use: strict SQL (a too-long value fails, never truncated) and UTC. */
  async function connect(): Promise<MysqlConnectionLike> {
    const connecting = pools.get().getConnection();
    let connection: MysqlConnectionLike;
    try {
      connection = await withTimeout(connecting, timeoutMs, timedOut("Connecting"));
    } catch (error) {
      connecting.then((late) => late.release()).catch(() => undefined);
      throw typedError(error, "not-stored");
    }
    const driverConnection = (connection as { connection?: object }).connection ?? connection;
    if (configured.has(driverConnection)) return connection;
    try {
      await query(connection, "SET SESSION sql_mode = CONCAT(@@sql_mode, ',STRICT_ALL_TABLES'), time_zone = '+00:00'", []);
    } catch (error) {
      connection.destroy();
      throw typedError(error, "not-stored");
    }
    configured.add(driverConnection);
    return connection;
  }

  /** Runs `body` on a connection of its own; a connection that failed or timed out is dropped, not pooled. */
  async function withConnection<T>(body: (connection: MysqlConnectionLike, broken: () => void) => Promise<T>): Promise<T> {
    const connection = await connect();
    let isBroken = false;
    try {
      return await body(connection, () => {
        isBroken = true;
      });
    } finally {
      if (isBroken) connection.destroy();
      else connection.release();
    }
  }

  /** One try of a transaction. One that lost to another was rolled back whole, and is thrown as `LostToAnother`. */
  function attempt<T>(program: () => SqlProgram<T>): Promise<T> {
    return withConnection(async (connection, broken) => {
      let committing = false;
      try {
        await query(connection, "START TRANSACTION", []);
        const value = await driveAsync(program(), (step) => execute(connection, step));
        committing = true;
        await query(connection, "COMMIT", []);
        return value;
      } catch (error) {
        // Still running, or a COMMIT without its answer: the connection's state is unknown, and dropping it rolls back what is open.
        if (error instanceof TimedOut || committing) broken();
        else await query(connection, "ROLLBACK", []).catch(broken);
        if (error instanceof Rollback) return error.value as T;
        if (!committing && RETRIED.has((error as { code?: string })?.code as string)) throw new LostToAnother(error);
        // Before COMMIT, a failure rolls the transaction back; a COMMIT without its answer may have applied.
        throw typedError(error, committing ? "unknown" : "not-stored");
      }
    });
  }

  async function transaction<T>(program: () => SqlProgram<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt(program);
      } catch (error) {
        if (!(error instanceof LostToAnother)) throw error;
        if (tries >= RETRIES) throw typedError(error.cause, "not-stored");
      }
    }
  }

  return {
    ...mysqlForms,
    engine: "mysql",
    // Text, not MySQL's JSON type, which reorders keys and refuses nothing the store needs refused.
    jsonType: "LONGTEXT",
    blobType: "LONGBLOB",
    jsonText: (column) => column,
    // The statement's start, fixed for the statement: every column a statement compares with it agrees.
    nowMs: "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
    maxParams: 4_000,
    forUpdate: " FOR UPDATE",
    // Locks every lock row and the gaps between them (next-key locks) until commit: no lock is taken or passed meanwhile.
    freezeTable: (table) => `SELECT session_id FROM ${table} FOR UPDATE`,
    // Deleted rows stay in InnoDB's pages until purge and in its redo log until it wraps: see docs/faults-and-erasure.md.
    afterErase: async () => {},
    execute: <T>(step: SqlStep) =>
      withConnection(async (connection, broken) => {
        try {
          return (await execute(connection, step)) as T;
        } catch (error) {
          if (error instanceof TimedOut || (error as { fatal?: boolean })?.fatal) broken();
          throw typedError(error);
        }
      }),
    transaction,
    // DDL commits as it runs on MySQL, so a migration is not one transaction: a named lock keeps processes that start at once from migrating twice.
    exclusive: (program) =>
      withConnection(async (connection, broken) => {
        try {
          // Half the statement's time in seconds, so the lock's answer comes before the statement times out; no limit (-1) without one.
          const waitSeconds = timeoutMs === 0 ? -1 : timeoutMs / 2000;
          const [row] = (await query(connection, "SELECT GET_LOCK('memoria:migrate', ?) AS taken", [waitSeconds])) as { taken: number }[];
          if (Number(row?.taken) !== 1) {
            throw new StoreUnavailableError(`Another process's schema migration did not end within ${timeoutMs / 2} ms (half of operationTimeoutMs).`, { outcome: "not-stored" });
          }
          try {
            return await driveAsync(program(), (step) => execute(connection, step));
          } finally {
            await query(connection, "SELECT RELEASE_LOCK('memoria:migrate')", []).catch(broken);
          }
        } catch (error) {
          if (error instanceof TimedOut) broken();
          throw typedError(error, "not-stored");
        }
      }),
    close: () => pools.close(),
  };
}

/**
 * A history store in MySQL or MariaDB (through mysql2): the same model as the other
 * SQL stores, with pooled connections, InnoDB transactions and row locks.
 */
export function createMysqlStore(options: MysqlStoreOptions): SqlHistoryStore {
  return createSqlStore("mysql", mysqlDialect(options), options);
}
