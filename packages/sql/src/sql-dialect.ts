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
 * What the store body needs of an engine, by role, as kysely splits its dialect:
 * the `driver` runs statements, the `features` say what the engine can do (the store
 * picks its statements by them), and the `forms` are the SQL that differs. Each
 * engine (SQLite, PostgreSQL, MySQL) has a small file building one; the store's
 * logic and statements live once, in sql-store.ts and the files it uses.
 */
export interface SqlDialect {
  readonly engine: "sqlite" | "postgres" | "mysql";
  readonly driver: SqlDriver;
  readonly features: SqlFeatures;
  readonly forms: SqlForms;
}

/** Connecting and running statements. */
export interface SqlDriver {
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
  /** Called after an erasure (`delete`): makes the erased rows unrecoverable from the files where the engine allows it. */
  afterErase(): Promise<void>;
  /** Closes the connection or pool if the dialect opened it. Safe twice. */
  close(): Promise<void>;
}

/** What the engine can do and its limits: the store chooses its statements by these. */
export interface SqlFeatures {
  /** The most parameters one statement may carry. */
  readonly maxParams: number;
  /** The longest recall term the engine keys (longer ones are cut to it); unlimited where undefined. */
  readonly maxTermLength?: number;
  /**
   * `INSERT … ON CONFLICT … DO UPDATE … WHERE` and `… RETURNING`: the engine can take a
   * turn lock or renew a live session in one conditional upsert, and say what it did.
   * False on MySQL, which has neither; the store then uses the forms of mysql-forms.ts.
   */
  readonly returning: boolean;
  /**
   * A window of the last n messages is read as a range from the n-th newest sequence
   * number, in order, rather than newest first with a LIMIT and sorted back. SQLite
   * runs the range in half the time; PostgreSQL's subplan costs it three times its sort.
   */
  readonly windowsByRange?: boolean;
  /** A turn's append, and a state write, is one statement (`one-statement-append.ts`, `one-statement-states.ts`) rather than a transaction of several. */
  readonly writesInOneStatement?: boolean;
  /**
   * Where the engine keeps recall scopes' versions (SQLite, PostgreSQL:
   * recall-versions.ts), the bytes of recall scopes a process may hold to rank them in
   * memory; 0 or unset: none.
   */
  readonly recallCacheBytes?: number;
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
