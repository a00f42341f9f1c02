import { MemoriaError, StoreUnavailableError, type WriteOutcome } from "@memoria/core";
import { loadPeerDependency, withTimeout } from "@memoria/core/store-kit";
import { Rollback, type SqlDialect, type SqlDriver, type SqlProgram, type SqlStep, driveAsync } from "./sql-dialect.js";
import { type HeldRecallOptions, recallCacheBytesOf } from "./recall-scope-cache.js";
import { type SqlForms, standardForms } from "./sql-forms.js";
import { executing, inlined, pgStatement } from "./postgres-statements.js";
import { poolHolder } from "./pool-holder.js";
import { type SqlHistoryStore, type SqlStoreOptions, createSqlStore } from "./sql-store.js";

interface PgResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/**
 * A statement as pg takes it: its text and values, and, to have the connection keep
 * it parsed and planned, the name it is prepared under (the same text, always).
 */
export interface PgQuery {
  text: string;
  values?: unknown[];
  name?: string;
}

/** The parts of a pg `Pool` the store uses. */
export interface PgPoolLike {
  query(query: string | PgQuery, params?: unknown[]): Promise<PgResult>;
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

export interface PgClientLike {
  query(query: string | PgQuery, params?: unknown[]): Promise<PgResult>;
  release(error?: Error | boolean): void;
  on?(event: "error", listener: (error: Error) => void): unknown;
  removeListener?(event: "error", listener: (error: Error) => void): unknown;
}

export interface PostgresStoreOptions extends SqlStoreOptions, HeldRecallOptions {
  /** e.g. `postgres://user:pass@host:5432/db`. Used when no `pool` is given. */
  connectionString?: string;
  /** A pg `Pool` to use instead of `connectionString`. The store does not end it. */
  pool?: PgPoolLike;
  /**
   * Connections in the pool the store creates.
   * @default 10
   */
  maxConnections?: number;
  /**
   * How long one database call (a connection, a statement) may take before it
   * fails with `STORE_UNAVAILABLE`, so a hung or unreachable server fails a turn
   * instead of stalling it. The connection it ran on is dropped.
   * @default 10_000
   */
  operationTimeoutMs?: number;
  /**
   * Whether the store's statements with parameters are prepared by name on each
   * connection, so the server parses and plans a turn's statements once per
   * connection rather than on every call. Set `false` behind a connection pooler
   * that hands one client's statements to several server connections without
   * keeping prepared statements (PgBouncer in transaction mode before 1.21).
   * @default true
   */
  preparedStatements?: boolean;
}

type PgModule = {
  Pool: new (config: {
    connectionString?: string;
    max?: number;
    connectionTimeoutMillis?: number;
  }) => PgPoolLike & {
    on(event: "error", listener: (error: Error) => void): unknown;
    on(event: "connect", listener: (client: PgClientLike) => void): unknown;
  };
};

/** A statement's result in the form its step asks for. */
function shaped(step: SqlStep, result: PgResult): unknown {
  if (step.kind === "column") return result.rows.map(firstValue);
  return step.kind === "all" ? result.rows : (result.rowCount ?? 0);
}

/** A row's only column, without the array `Object.values` makes per row. */
function firstValue(row: Record<string, unknown>): unknown {
  for (const name in row) return row[name];
  return undefined;
}

type Queryable = Pick<PgClientLike, "query">;

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "57P01",
  "57P02",
  "57P03",
  "08006",
  "08003",
  "08001",
]);
const NETWORK_MESSAGES = /Connection terminated|connection timeout|not queryable|terminating connection|Connection closed/i;

/** A statement that did not answer in time; its connection is dropped. */
class TimedOut extends Error {}

/**
 * Every error of the driver as `StoreUnavailableError`: a lost, refused or
 * timed-out connection, with what a write may have left behind (`outcome`); or an
 * error the server answered with (a SQLSTATE code: a full disk, a serialization
 * failure, a table dropped under the store), after which the statement, and a
 * transaction it was in, did not apply. Errors of memoria's own pass as they are.
 */
function unavailable(error: unknown, outcome: WriteOutcome = "unknown"): unknown {
  if (MemoriaError.isInstance(error)) return error;
  const code = (error as { code?: string })?.code;
  const message = (error as Error)?.message ?? String(error);
  const named = `${message}${code ? ` (${code})` : ""}`;
  if (error instanceof TimedOut || (code && NETWORK_CODES.has(code)) || NETWORK_MESSAGES.test(message)) {
    const refused = code === "ECONNREFUSED" || code === "57P03";
    return new StoreUnavailableError(`PostgreSQL is unreachable: ${named}.`, { cause: error, outcome: refused ? "not-stored" : outcome });
  }
  if (typeof code === "string" && SQLSTATE.test(code)) {
    const hint = code.startsWith("53") ? " The server is out of disk, memory or connections." : PREPARED_LOST.has(code) ? ` ${PREPARED_HINT}` : "";
    return new StoreUnavailableError(`PostgreSQL refused a statement: ${named}.${hint}`, { cause: error, outcome: "not-stored" });
  }
  return error;
}

/** A prepared statement missing, or one of another client's in the way: a pooler sharing server connections. */
const PREPARED_LOST = new Set(["26000", "42P05"]);
const PREPARED_HINT =
  "A connection pooler that does not keep prepared statements (PgBouncer in transaction mode before 1.21) needs the store's preparedStatements: false.";

/** A server error's code: five digits or capitals (class and condition). */
const SQLSTATE = /^[0-9A-Z]{5}$/;

function postgresDialect(options: PostgresStoreOptions): SqlDialect {
  const timeoutMs = options.operationTimeoutMs ?? 10_000;
  const recallCacheBytes = recallCacheBytesOf(options);
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw new MemoriaError("INVALID_ARGUMENT", `operationTimeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}.`);
  const timedOut = (what: string) => () => new TimedOut(`${what} did not answer within ${timeoutMs} ms (operationTimeoutMs)`);

  const pools = poolHolder<PgPoolLike>("postgres", options.pool, () => {
    const pg = loadPeerDependency<PgModule>("pg", "The PostgreSQL store", import.meta.url);
    const created = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 10, connectionTimeoutMillis: timeoutMs });
    // An idle connection dropped by the server must not crash the process; the
    // next query on the pool fails (or reconnects) instead.
    created.on("error", () => {});
    // Nor one dropped while checked out but between calls (a server killed just as
    // the pool hands a client over): pg emits the error on the client itself, and
    // with no listener there Node ends the process. The failure still reaches the
    // caller through the next query on that client.
    created.on("connect", (client) => client.on?.("error", () => {}));
    return created;
  });

  const prepared = options.preparedStatements ?? true;
  /** The statements each connection has prepared with SQL's PREPARE (`executing`). */
  const preparedOn = new WeakMap<PgClientLike, Set<string>>();
  async function execute(target: Queryable, step: SqlStep): Promise<unknown> {
    const { text, name } = pgStatement(step);
    const values = [...step.params];
    const sent = prepared && name ? target.query({ name, text, values }) : target.query(text, values);
    return shaped(step, await withTimeout(sent, timeoutMs, timedOut("A statement")));
  }

  /**
   * Statements sent as one query of the simple protocol: PostgreSQL runs them as one
   * transaction, and under READ COMMITTED (set first, whatever the database's default)
   * each takes its own snapshot when it starts, so each sees what the ones before it
   * did and everything committed meanwhile. That protocol carries no parameters, so
   * the values are written into the text as literals that no value can break out of
   * (`inlined`); with `preparedStatements`, each statement is prepared once on its
   * connection with SQL's `PREPARE` and run as `EXECUTE` with those literals
   * (`executing`), so the server parses and plans a lock's try and read once per
   * connection, not on every turn.
   */
  async function inOneTrip(steps: readonly SqlStep[]): Promise<unknown[]> {
    if (!prepared) {
      const text = ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED", ...steps.map(inlined)].join(";\n");
      const results = (await withTimeout(pools.get().query(text), timeoutMs, timedOut("A statement"))) as unknown as PgResult[];
      return steps.map((step, i) => shaped(step, results[i + 1] as PgResult));
    }
    const client = await connect();
    const known = preparedOn.get(client) ?? new Set<string>();
    preparedOn.set(client, known);
    const send = async (have: Set<string>) => {
      const statements = ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED"];
      const at = steps.map((step) => {
        statements.push(...executing(step, have));
        return statements.length - 1; // a step's result is its EXECUTE's, the last statement it added
      });
      const results = (await withTimeout(client.query(statements.join(";\n")), timeoutMs, timedOut("A statement"))) as unknown as PgResult[];
      return steps.map((step, i) => shaped(step, results[at[i] as number] as PgResult));
    };
    let failed = false;
    const onError = () => {};
    client.on?.("error", onError); // checked out, a client has no listener of the pool's
    try {
      try {
        return await send(known);
      } catch (error) {
        // The connection has statements it was not known to (a pool that hands out a new
        // client object for it), or lost some (DEALLOCATE): the query rolled back whole;
        // asked what it has, it is sent once more.
        const code = (error as { code?: string })?.code;
        if (code !== "42P05" && code !== "26000") throw error;
        const held = await withTimeout(client.query("SELECT name FROM pg_prepared_statements"), timeoutMs, timedOut("A statement"));
        known.clear();
        for (const row of held.rows) known.add(String(row.name));
        return await send(known);
      }
    } catch (error) {
      failed = true; // what the connection holds prepared is unknown now: it goes
      throw error;
    } finally {
      client.removeListener?.("error", onError);
      client.release(failed);
    }
  }

  /** A pooled client; one that connects after its wait timed out goes back to the pool at once. */
  async function connect(): Promise<PgClientLike> {
    const connecting = pools.get().connect();
    try {
      return await withTimeout(connecting, timeoutMs, timedOut("Connecting"));
    } catch (error) {
      connecting.then((late) => late.release(true)).catch(() => undefined);
      throw unavailable(error, "not-stored");
    }
  }

  async function transaction<T>(program: () => SqlProgram<T>, first?: [string, unknown[]]): Promise<T> {
    const client = await connect();
    // A checked-out client has no error listener of the pool's: a backend terminated
    // between two statements would otherwise crash the process.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on?.("error", onError);
    let committing = false;
    try {
      await execute(client, { kind: "run", sql: "BEGIN", params: [] });
      if (first) await execute(client, { kind: "run", sql: first[0], params: first[1] });
      const value = await driveAsync(program(), (step) => execute(client, step));
      committing = true;
      await execute(client, { kind: "run", sql: "COMMIT", params: [] });
      return value;
    } catch (error) {
      if (error instanceof TimedOut)
        broken = error; // still running: drop the connection, which rolls back
      else if (!committing && !broken) {
        try {
          await execute(client, { kind: "run", sql: "ROLLBACK", params: [] });
        } catch (rollbackError) {
          broken = rollbackError as Error; // the connection is unusable: drop it from the pool
        }
      }
      if (error instanceof Rollback) return error.value as T;
      // Before COMMIT, a lost connection rolls the transaction back; a COMMIT without its answer may have applied.
      throw unavailable(error, committing ? "unknown" : "not-stored");
    } finally {
      client.removeListener?.("error", onError);
      client.release(broken);
    }
  }

  const forms: SqlForms = {
    ...standardForms("postgres"),
    // json, not jsonb: jsonb refuses \u0000 inside strings, which chat content can hold,
    // and the store never queries inside a payload.
    jsonType: "json",
    blobType: "BYTEA",
    jsonText: (column) => `${column}::text`,
    nowMs: "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint",
    forUpdate: " FOR UPDATE",
    forKeyShare: " FOR KEY SHARE",
    // Lock rows are worth nothing after a crash (a lease ends with its server), so they
    // skip the WAL: taking a lock commits without waiting for a flush to disk.
    lockTableKind: "UNLOGGED",
    // Only a table still logged is rewritten: no exclusive table lock on every start.
    convertLockTable: (table) =>
      `DO $$ BEGIN IF (SELECT relpersistence FROM pg_class WHERE oid = to_regclass('${table}')) = 'p' THEN ALTER TABLE ${table} SET UNLOGGED; END IF; END $$`,
    freezeTable: (table) => `LOCK TABLE ${table} IN EXCLUSIVE MODE`,
  };
  const driver: SqlDriver = {
    // Deleted rows stay in heap pages until VACUUM and in the WAL until it is recycled: see docs/faults-and-erasure.md.
    afterErase: async () => {},
    execute: <T>(step: SqlStep) =>
      execute(pools.get(), step).then(
        (result) => result as T,
        (error: unknown) => {
          throw unavailable(error);
        },
      ),
    inOneTrip: (steps) =>
      inOneTrip(steps).catch((error: unknown) => {
        throw unavailable(error);
      }),
    transaction: (program) => transaction(program),
    // One advisory lock for every memoria migration in the database: processes
    // starting at once on an empty database create the schema exactly once.
    exclusive: (program) => transaction(program, ["SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", ["memoria:migrate"]]),
    close: () => pools.close(),
  };
  return { engine: "postgres", driver, forms, features: { maxParams: 65_535, returning: true, writesInOneStatement: true, recallCacheBytes } };
}

/**
 * A history store in PostgreSQL: the same model as SQLite (one row per message,
 * keyed by session and sequence number), with pooled connections, so many app
 * servers can share sessions.
 */
export function createPostgresStore(options: PostgresStoreOptions): SqlHistoryStore {
  return createSqlStore("postgres", postgresDialect(options), options);
}
