import { MemoriaError, StoreUnavailableError, type WriteOutcome } from "@memoria/core";
import { MYSQL_MAX_ID_LENGTH } from "./mysql-forms.js";

/* How the MySQL store reads the driver's errors: typed, and which ones run a transaction again. */

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
export const RETRIED = new Set(["ER_LOCK_DEADLOCK", "ER_LOCK_WAIT_TIMEOUT"]);
export const RETRIES = 5;
/** The server is out of disk: "disk full", "table full", or an engine's errno 28 (ENOSPC). */
const DISK_FULL = /^ER_(DISK_FULL|RECORD_FILE_FULL)$|errno: 28|No space left/;

/** A statement that did not answer in time; its connection is dropped. */
export class TimedOut extends Error {}

/** A transaction the server rolled back to break a deadlock or a long lock wait: run again. */
export class LostToAnother extends Error {
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
export function typedError(error: unknown, outcome: WriteOutcome = "unknown"): unknown {
  if (MemoriaError.isInstance(error)) return error;
  const { code, fatal } = (error ?? {}) as { code?: string; fatal?: boolean };
  const message = (error as Error)?.message ?? String(error);
  const named = `${message}${code ? ` (${code})` : ""}`;
  if (code === "ER_DATA_TOO_LONG") {
    return new MemoriaError(
      "INVALID_ARGUMENT",
      `A value is longer than the MySQL store's column holds (an encoded session key holds at most ${MYSQL_MAX_ID_LENGTH} characters): ${message}.`,
      { cause: error },
    );
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
export function counted(header: { affectedRows?: number; info?: string }): number {
  const matched = /Rows matched: (\d+)/.exec(header.info ?? "");
  return matched ? Number(matched[1]) : (header.affectedRows ?? 0);
}
