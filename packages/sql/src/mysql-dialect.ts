import { MemoriaError, StoreUnavailableError } from "@memoria/core";
import { loadPeerDependency, withTimeout } from "@memoria/core/store-kit";
import { MYSQL_MAX_TERM_LENGTH, mysqlForms } from "./mysql-forms.js";
import type { SqlForms } from "./sql-forms.js";
import { LostToAnother, RETRIED, RETRIES, TimedOut, counted, typedError } from "./mysql-errors.js";
import { Rollback, type SqlDialect, type SqlDriver, type SqlProgram, type SqlStep, driveAsync } from "./sql-dialect.js";
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
   * `flags: ["-FOUND_ROWS"]`: the store counts rows changed, not rows matched. With
   * `multipleStatements: true` as well (the store's own pool has it; every value is
   * sent as a parameter), a turn's append is one round trip instead of eight. The
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

function mysqlDialect(options: MysqlStoreOptions): SqlDialect {
  const timeoutMs = options.operationTimeoutMs ?? 10_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw new MemoriaError("INVALID_ARGUMENT", `operationTimeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}.`);
  const given = (options.pool as { pool?: { config?: { connectionConfig?: { clientFlags?: number; multipleStatements?: boolean } } } } | undefined)?.pool
    ?.config?.connectionConfig;
  const clientFlags = given?.clientFlags;
  if (clientFlags !== undefined && (clientFlags & 2) !== 0) {
    throw new MemoriaError("INVALID_ARGUMENT", 'The MySQL store counts rows changed: create its pool with flags: ["-FOUND_ROWS"].');
  }
  // Several statements in one query: the store's own pool's connections take them; a given pool's, if it was made so.
  const scripts = options.pool === undefined || given?.multipleStatements === true;
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
      // Values are always sent as parameters, escaped by the driver: a script of several statements is one round trip.
      multipleStatements: true,
    }),
  );

  async function query(connection: MysqlConnectionLike, sql: string, params: readonly unknown[]): Promise<unknown> {
    const [result] = await withTimeout(connection.query(sql, params as unknown[]), timeoutMs, timedOut("A statement"));
    return result;
  }

  async function execute(connection: MysqlConnectionLike, step: SqlStep): Promise<unknown> {
    return shaped(step, await query(connection, step.sql, step.params));
  }

  /** A statement's result as `execute` gives it. */
  function shaped(step: SqlStep, result: unknown): unknown {
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

  /** Runs `attempt` again while it loses to another transaction, up to `RETRIES` times. */
  async function retried<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof LostToAnother)) throw error;
        if (tries >= RETRIES) throw typedError(error.cause, "not-stored");
      }
    }
  }

  /**
   * One try of a script that begins and commits its own transaction. A server error
   * stopped it before its COMMIT answered, rolled back whole: a deadlock is thrown as
   * `LostToAnother`, a duplicate key answers undefined. A lost or late answer may have
   * come after the COMMIT applied.
   */
  function runScript(sql: string, params: readonly unknown[]): Promise<unknown[] | undefined> {
    return withConnection(async (connection, broken) => {
      try {
        return (await query(connection, sql, params)) as unknown[];
      } catch (error) {
        const { code, fatal, sqlState } = (error ?? {}) as { code?: string; fatal?: boolean; sqlState?: unknown };
        if (error instanceof TimedOut || fatal === true || typeof sqlState !== "string") {
          broken();
          throw typedError(error, "unknown");
        }
        await query(connection, "ROLLBACK", []).catch(broken);
        if (RETRIED.has(code as string)) throw new LostToAnother(error);
        if (code === "ER_DUP_ENTRY") return undefined;
        throw typedError(error, "not-stored");
      }
    });
  }

  /** Statements in one round trip and one transaction (see `SqlDialect.inOneTrip`). */
  async function inOneTrip(steps: readonly SqlStep[]): Promise<unknown[]> {
    const script = ["START TRANSACTION", ...steps.map((step) => step.sql), "COMMIT"].join(";\n");
    const results = await retried(() =>
      runScript(
        script,
        steps.flatMap((step) => step.params),
      ),
    );
    if (results === undefined) throw new StoreUnavailableError("MySQL refused a duplicate key in statements that insert none.", { outcome: "not-stored" });
    return steps.map((step, i) => shaped(step, results[i + 1]));
  }

  const transaction = <T>(program: () => SqlProgram<T>): Promise<T> => retried(() => attempt(program));

  const forms: SqlForms = {
    ...mysqlForms,
    // Text, not MySQL's JSON type, which reorders keys and refuses nothing the store needs refused.
    jsonType: "LONGTEXT",
    blobType: "LONGBLOB",
    jsonText: (column) => column,
    // The statement's start, fixed for the statement: every column a statement compares with it agrees.
    nowMs: "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
    forUpdate: " FOR UPDATE",
    // Locks every lock row and the gaps between them (next-key locks) until commit: no lock is taken or passed meanwhile.
    freezeTable: (table) => `SELECT session_id FROM ${table} FOR UPDATE`,
  };
  const driver: SqlDriver = {
    // Deleted rows stay in InnoDB's pages until purge and in its redo log until it wraps: see docs/faults-and-erasure.md.
    afterErase: async () => {},
    // One statement, committed on its own: one that lost to another (InnoDB breaks a deadlock
    // between two lock takes' upserts by rolling one back) did not apply, and is run again.
    execute: <T>(step: SqlStep) =>
      retried(() =>
        withConnection(async (connection, broken) => {
          try {
            return (await execute(connection, step)) as T;
          } catch (error) {
            if (error instanceof TimedOut || (error as { fatal?: boolean })?.fatal) broken();
            if (RETRIED.has((error as { code?: string })?.code as string)) throw new LostToAnother(error);
            throw typedError(error);
          }
        }),
      ),
    transaction,
    ...(scripts ? { inOneTrip, script: (sql: string, params: readonly unknown[]) => retried(() => runScript(sql, params)) } : {}),
    // DDL commits as it runs on MySQL, so a migration is not one transaction: a named lock keeps processes that start at once from migrating twice.
    exclusive: (program) =>
      withConnection(async (connection, broken) => {
        try {
          // Half the statement's time in seconds, so the lock's answer comes before the statement times out; no limit (-1) without one.
          const waitSeconds = timeoutMs === 0 ? -1 : timeoutMs / 2000;
          const [row] = (await query(connection, "SELECT GET_LOCK('memoria:migrate', ?) AS taken", [waitSeconds])) as { taken: number }[];
          if (Number(row?.taken) !== 1) {
            throw new StoreUnavailableError(`Another process's schema migration did not end within ${timeoutMs / 2} ms (half of operationTimeoutMs).`, {
              outcome: "not-stored",
            });
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
  // No RETURNING and no conditional upsert: the store reads instead (mysql-forms.ts).
  return { engine: "mysql", driver, forms, features: { maxParams: 4_000, maxTermLength: MYSQL_MAX_TERM_LENGTH, returning: false } };
}

/**
 * A history store in MySQL or MariaDB (through mysql2): the same model as the other
 * SQL stores, with pooled connections, InnoDB transactions and row locks.
 */
export function createMysqlStore(options: MysqlStoreOptions): SqlHistoryStore {
  return createSqlStore("mysql", mysqlDialect(options), options);
}
