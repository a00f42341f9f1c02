import { MemoriaError, loadPeerDependency } from "@memoria/core";
import { Rollback, type SqlDialect, type SqlProgram, type SqlStep, driveAsync } from "./sql-dialect.js";
import { type SqlHistoryStore, type SqlStoreOptions, createSqlStore } from "./sql-store.js";

interface PgResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** The parts of a pg `Pool` the store uses. */
export interface PgPoolLike {
  query(text: string, params?: unknown[]): Promise<PgResult>;
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

export interface PgClientLike {
  query(text: string, params?: unknown[]): Promise<PgResult>;
  release(error?: Error | boolean): void;
}

export interface PostgresStoreOptions extends SqlStoreOptions {
  /** e.g. `postgres://user:pass@host:5432/db`. Used when no `pool` is given. */
  connectionString?: string;
  /** A pg `Pool` to use instead of `connectionString`. The store does not end it. */
  pool?: PgPoolLike;
  /**
   * Connections in the pool the store creates.
   * @default 10
   */
  maxConnections?: number;
}

type PgModule = { Pool: new (config: { connectionString?: string; max?: number }) => PgPoolLike & { on(event: "error", listener: (error: Error) => void): unknown } };

/** `?` placeholders to pg's `$1, $2, …` (the store's SQL holds no `?` inside strings). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const translated = new Map<string, string>();
function pgSql(sql: string): string {
  let text = translated.get(sql);
  if (text === undefined) {
    text = numbered(sql);
    translated.set(sql, text);
  }
  return text;
}

type Queryable = { query(text: string, params?: unknown[]): Promise<PgResult> };

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "57P01", "57P02", "57P03"]);

/** A lost or refused connection, as a MemoriaError that says so; other errors as they are. */
function unavailable(error: unknown): unknown {
  const code = (error as { code?: string })?.code;
  const message = (error as Error)?.message ?? String(error);
  if ((code && NETWORK_CODES.has(code)) || /Connection terminated|connection timeout/i.test(message)) {
    return new MemoriaError("STORE_UNAVAILABLE", `PostgreSQL is unreachable: ${message}${code ? ` (${code})` : ""}.`, { cause: error });
  }
  return error;
}

async function execute(target: Queryable, step: SqlStep): Promise<unknown> {
  const result = await target.query(pgSql(step.sql), [...step.params]);
  return step.kind === "all" ? result.rows : (result.rowCount ?? 0);
}

function postgresDialect(options: PostgresStoreOptions): SqlDialect {
  let pool = options.pool;
  const owned = pool === undefined;

  function open(): PgPoolLike {
    if (pool) return pool;
    const pg = loadPeerDependency<PgModule>("pg", "The PostgreSQL store", import.meta.url);
    const created = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 10 });
    // An idle connection dropped by the server must not crash the process; the
    // next query on the pool fails (or reconnects) instead.
    created.on("error", () => {});
    pool = created;
    return created;
  }

  async function transaction<T>(program: () => SqlProgram<T>, first?: [string, unknown[]]): Promise<T> {
    const client = await open()
      .connect()
      .catch((error: unknown) => {
        throw unavailable(error);
      });
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      if (first) await client.query(first[0], first[1]);
      const value = await driveAsync(program(), (step) => execute(client, step));
      await client.query("COMMIT");
      return value;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        broken = rollbackError as Error; // the connection is unusable: drop it from the pool
      }
      if (error instanceof Rollback) return error.value as T;
      throw unavailable(error);
    } finally {
      client.release(broken);
    }
  }

  return {
    engine: "postgres",
    // json, not jsonb: jsonb refuses \u0000 inside strings, which chat content can hold,
    // and the store never queries inside a payload.
    jsonType: "json",
    jsonText: (column) => `${column}::text`,
    nowMs: "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint",
    maxParams: 65_535,
    execute: <T>(step: SqlStep) =>
      execute(open(), step).then(
        (result) => result as T,
        (error: unknown) => {
          throw unavailable(error);
        },
      ),
    transaction: (program) => transaction(program),
    // One advisory lock for every memoria migration in the database: processes
    // starting at once on an empty database create the schema exactly once.
    exclusive: (program) => transaction(program, ["SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", ["memoria:migrate"]]),
    async close() {
      if (owned && pool) {
        const closing = pool;
        pool = undefined;
        await closing.end();
      }
    },
  };
}

/**
 * A history store in PostgreSQL: the same model as SQLite (one row per message,
 * keyed by session and sequence number), with pooled connections, so many app
 * servers can share sessions.
 */
export function createPostgresStore(options: PostgresStoreOptions): SqlHistoryStore {
  return createSqlStore("postgres", postgresDialect(options), options);
}
