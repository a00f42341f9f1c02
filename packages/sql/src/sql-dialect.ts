import type { SqlForms } from "./sql-forms.js";

/** One statement of a transaction; `?` marks parameters in every dialect. */
export interface SqlStep {
  /** `all`: rows as objects; `column`: each row's first column; `run`: the number of rows changed. */
  kind: "all" | "column" | "run";
  sql: string;
  params: readonly unknown[];
}

/**
 * A transaction body as a generator of statements: it yields each statement and
 * receives its result. The engine decides how to drive it: SQLite runs it
 * synchronously from BEGIN to COMMIT, so no other work on the event loop can slip
 * into the transaction; PostgreSQL awaits each statement on a pooled client.
 */
export type SqlProgram<T> = Generator<SqlStep, T, unknown>;

/** Rows of a query, inside a program: `const rows = yield* all<Row>(sql, params)`. */
export function* all<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Generator<SqlStep, T[], unknown> {
  return (yield { kind: "all", sql, params }) as T[];
}

/** Runs a statement inside a program; gives the number of rows it changed. */
export function* run(sql: string, params: readonly unknown[] = []): Generator<SqlStep, number, unknown> {
  return (yield { kind: "run", sql, params }) as number;
}

/**
 * What the store body needs of an engine. Each engine (SQLite, PostgreSQL, MySQL) has a
 * small file implementing it, and the SQL that differs as its forms (sql-forms.ts);
 * the store's logic and statements live once, in sql-store.ts and the files it uses.
 */
export interface SqlDialect extends SqlForms {
  readonly engine: "sqlite" | "postgres" | "mysql";
  /** Column type for a message's JSON text. */
  readonly jsonType: string;
  /** Column type for raw bytes (recall vectors). */
  readonly blobType: string;
  /**
   * An SQL expression for the cosine distance between a vector column and a vector
   * parameter, where the engine can compute it (SQLite with sqlite-vec, loaded on
   * first call); undefined where vectors are ranked in the process.
   */
  vectorDistance?(column: string): string;
  /** An SQL expression reading a JSON column as its text (drivers that parse JSON would otherwise do it for us). */
  jsonText(column: string): string;
  /** An SQL expression for the database's clock, in epoch milliseconds. */
  readonly nowMs: string;
  /** The most parameters one statement may carry. */
  readonly maxParams: number;
  /** A schema for the lock table when locks live apart from the history (SQLite: an attached, unsynced file). */
  readonly lockSchema?: string;
  /**
   * A window of the last n messages is read as a range from the n-th newest sequence
   * number, in order, rather than newest first with a LIMIT and sorted back. SQLite
   * runs the range in half the time; PostgreSQL's subplan costs it three times its sort.
   */
  readonly windowsByRange?: boolean;
  /** A turn's append, and a state write, is one statement (`one-statement-append.ts`, `one-statement-states.ts`) rather than a transaction of several. */
  readonly writesInOneStatement?: boolean;
  /** Table kind of the lock table: `"UNLOGGED"` where the engine can skip the WAL (and its flush) for lock rows. */
  readonly lockTableKind?: string;
  /** A statement giving a lock table made by an older version the `lockTableKind`, if it lacks it. */
  convertLockTable?(table: string): string;
  /** Appended to a fencing `SELECT` to lock the row until commit (`" FOR UPDATE"`), or empty where transactions already exclude each other. */
  readonly forUpdate: string;
  /**
   * Appended to a `SELECT` of sessions rows a write refers to (recall rows), so none is
   * deleted before the write commits (`" FOR KEY SHARE"`: updates of other columns still
   * pass); unset where transactions already exclude each other.
   */
  readonly forKeyShare?: string;
  /** A statement that stops other transactions from locking or writing `table`'s rows until commit, where transactions do not already exclude each other. */
  freezeTable?(table: string): string;
  /**
   * Where the engine keeps recall scopes' versions (SQLite, PostgreSQL:
   * recall-versions.ts), the bytes of recall scopes a process may hold to rank them in
   * memory; 0 or unset: none.
   */
  readonly recallCacheBytes?: number;
  /** Called after an erasure (`delete`): makes the erased rows unrecoverable from the files where the engine allows it. */
  afterErase(): Promise<void>;
  /** Runs one statement outside a transaction. */
  execute<T>(step: SqlStep): Promise<T>;
  /**
   * Runs statements in one round trip and one transaction, each seeing the changes of
   * those before it and everything committed before it started, and gives each one's
   * result as `execute` would. Left out where the engine cannot (the store then sends
   * them one by one).
   */
  inOneTrip?(steps: readonly SqlStep[]): Promise<unknown[]>;
  /**
   * Runs a script (statements joined by `;`, which begins and commits its own
   * transaction) in one round trip and gives each statement's result; undefined when
   * the server refused a duplicate key (a row another transaction inserted first):
   * nothing was written. One that lost to another transaction runs again, as
   * `transaction`'s do. Left out where the engine cannot (MySQL's one-trip append).
   */
  script?(sql: string, params: readonly unknown[]): Promise<unknown[] | undefined>;
  /** Runs a program in one transaction that takes the write lock at its start. */
  transaction<T>(program: () => SqlProgram<T>): Promise<T>;
  /** Like `transaction`, also excluding every other process's `exclusive` (schema migration). */
  exclusive<T>(program: () => SqlProgram<T>): Promise<T>;
  /** Closes the connection or pool if the dialect opened it. Safe twice. */
  close(): Promise<void>;
}

/** Thrown inside a program to roll the transaction back and return `value`. */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/** Drives a program to its end, running each step with `execute` (sync or async). */
export function driveSync<T>(program: SqlProgram<T>, execute: (step: SqlStep) => unknown): T {
  let next = program.next();
  while (!next.done) next = program.next(execute(next.value));
  return next.value;
}

export async function driveAsync<T>(program: SqlProgram<T>, execute: (step: SqlStep) => Promise<unknown>): Promise<T> {
  let next = program.next();
  while (!next.done) next = program.next(await execute(next.value));
  return next.value;
}
