import type { SessionKey } from "./session-key.js";

/** The fixed set of codes a {@link MemoriaError} can carry. Stable across releases. */
export const ERROR_CODES = [
  "INVALID_SESSION_KEY",
  "INVALID_MESSAGE",
  "INVALID_INPUT",
  "INVALID_OUTPUT",
  "INVALID_ARGUMENT",
  "SESSION_BUSY",
  "SAVE_FAILED",
  "STORE_UNAVAILABLE",
  "STORE_CLOSED",
  "LOCK_TIMEOUT",
  "LOCK_LOST",
  "CORRUPT_DATA",
  "MISSING_DEPENDENCY",
  "FORBIDDEN",
  "INTEGRITY",
  "EDIT_CONFLICT",
  "BUDGET_SPENT",
  "UNSUPPORTED",
] as const;

export type MemoriaErrorCode = (typeof ERROR_CODES)[number];

const MARKER = Symbol.for("memoria.error");

// The class bodies below never name their own class: one that refers to itself
// comes out of the bundler as `class _MemoriaError`, and errors would print under that
// name (the build does not keep names: that costs a property definition per closure).
function isMemoriaError(error: unknown): error is MemoriaError {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
}

/**
 * The base of every error memoria throws. Tell errors apart by `code` (or the
 * subclasses' `isInstance`), never by message text. `isInstance` works across two
 * installed copies of the package, where `instanceof` does not.
 */
export class MemoriaError extends Error {
  readonly [MARKER] = true;
  readonly code: MemoriaErrorCode;

  constructor(code: MemoriaErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }

  static isInstance(error: unknown): error is MemoriaError {
    return isMemoriaError(error);
  }

  /** True when `error` is a memoria error with this code. */
  static hasCode<C extends MemoriaErrorCode>(error: unknown, code: C): error is MemoriaError & { code: C } {
    return isMemoriaError(error) && error.code === code;
  }
}

/** A session key (or a filter on key fields) is missing, malformed or unsafe. */
export class InvalidSessionKeyError extends MemoriaError {
  /** The config field that was wrong, e.g. `sessionId`. */
  readonly field: string;
  readonly reason: string;

  constructor(field: string, reason: string, hint?: string) {
    super("INVALID_SESSION_KEY", `Invalid session key field "${field}": ${reason}.${hint ? `\n${hint}` : ""}`);
    this.field = field;
    this.reason = reason;
  }

  static override isInstance(error: unknown): error is InvalidSessionKeyError {
    return MemoriaError.hasCode(error, "INVALID_SESSION_KEY");
  }
}

/** A message cannot be stored without losing something (or is not a message at all). */
export class InvalidMessageError extends MemoriaError {
  /** Position of the message in the list that was being stored or read. */
  readonly index: number;
  /** Where inside the message the problem is, e.g. `additional_kwargs.when`. */
  readonly path: string;

  constructor(index: number, path: string, reason: string) {
    super(
      "INVALID_MESSAGE",
      `Cannot store message ${index}${path ? ` at "${path}"` : ""}: ${reason}. ` +
        "Messages must hold JSON values (strings, finite numbers, booleans, null, arrays, plain objects).",
    );
    this.index = index;
    this.path = path;
  }

  static override isInstance(error: unknown): error is InvalidMessageError {
    return MemoriaError.hasCode(error, "INVALID_MESSAGE");
  }
}

/** A second turn arrived on a session already running one, with `busySession: "reject"`. */
export class SessionBusyError extends MemoriaError {
  readonly sessionKey: SessionKey;

  constructor(sessionKey: SessionKey) {
    super(
      "SESSION_BUSY",
      `Session ${JSON.stringify(sessionKey)} is running another turn. ` + 'Retry later, or use busySession: "wait" to queue turns of one session.',
    );
    this.sessionKey = sessionKey;
  }

  static override isInstance(error: unknown): error is SessionBusyError {
    return MemoriaError.hasCode(error, "SESSION_BUSY");
  }
}

/**
 * What a failed write left behind: `"not-stored"` when nothing was written;
 * `"unknown"` when the request may have reached the server before the connection
 * was lost or timed out, so it may have been applied. Either way, retrying with the
 * same turn id stores the turn exactly once.
 */
export type WriteOutcome = "not-stored" | "unknown";

/** A server could not be reached, timed out, or refused the write (a full disk). */
export class StoreUnavailableError extends MemoriaError {
  /** For a write: whether it may have been applied. */
  readonly outcome: WriteOutcome;

  constructor(message: string, options: { cause?: unknown; outcome?: WriteOutcome } = {}) {
    super("STORE_UNAVAILABLE", message, { cause: options.cause });
    this.outcome = options.outcome ?? "unknown";
  }

  static override isInstance(error: unknown): error is StoreUnavailableError {
    return MemoriaError.hasCode(error, "STORE_UNAVAILABLE");
  }
}

/**
 * What a failed write left behind, judged from the error it failed with: the
 * error's own `outcome` where it has one (`SaveError`, `StoreUnavailableError`),
 * else unknown for an unreachable store and not-stored for anything else.
 */
export function writeOutcomeOf(error: unknown): WriteOutcome {
  const outcome = (error as { outcome?: unknown } | undefined)?.outcome;
  if (MemoriaError.isInstance(error) && (outcome === "not-stored" || outcome === "unknown")) return outcome;
  return MemoriaError.hasCode(error, "STORE_UNAVAILABLE") ? "unknown" : "not-stored";
}

/**
 * The turn ran, but its messages could not be saved. `outcome` says whether
 * anything may have been stored; a retry with the same `turnId`
 * (`configurable.turnId`) stores the turn exactly once either way.
 */
export class SaveError extends MemoriaError {
  readonly sessionKey: SessionKey;
  readonly turnId: string;
  readonly outcome: WriteOutcome;

  constructor(sessionKey: SessionKey, turnId: string, cause: unknown) {
    const outcome = writeOutcomeOf(cause);
    super(
      "SAVE_FAILED",
      `Saving turn ${turnId} of session ${JSON.stringify(sessionKey)} failed: ${describe(cause)}. ` +
        (outcome === "not-stored"
          ? "Nothing of this turn was stored; the call can be retried."
          : `The store may have applied it before failing; retry with configurable.turnId = ${JSON.stringify(turnId)} to store it exactly once.`),
      { cause },
    );
    this.sessionKey = sessionKey;
    this.turnId = turnId;
    this.outcome = outcome;
  }

  static override isInstance(error: unknown): error is SaveError {
    return MemoriaError.hasCode(error, "SAVE_FAILED");
  }
}

/** A turn lock could not be taken in time. */
export class LockTimeoutError extends MemoriaError {
  readonly sessionKey: SessionKey;

  constructor(sessionKey: SessionKey, waitedMs: number) {
    super("LOCK_TIMEOUT", `Could not lock session ${JSON.stringify(sessionKey)} within ${waitedMs} ms: another process holds its turn lock.`);
    this.sessionKey = sessionKey;
  }
}

/**
 * A write was refused because the turn lock it was made under is no longer held:
 * it expired and another turn took the session, or the session was erased. Nothing
 * was written; the turn that lost its lock must not be stored after the one that
 * replaced it.
 */
export class LockLostError extends MemoriaError {
  readonly sessionKey: SessionKey;

  constructor(sessionKey: SessionKey) {
    super(
      "LOCK_LOST",
      `The turn lock of session ${JSON.stringify(sessionKey)} was lost (it expired and another turn took it, or the session was erased); nothing was written. ` +
        "Run the turn again: it will see what happened since.",
    );
    this.sessionKey = sessionKey;
  }

  static override isInstance(error: unknown): error is LockLostError {
    return MemoriaError.hasCode(error, "LOCK_LOST");
  }
}

/** Rejects with `onTimeout()` when `promise` has not settled after `ms` (undefined or 0: never). */
export function withTimeout<T>(promise: Promise<T>, ms: number | undefined, onTimeout: () => Error): Promise<T> {
  if (!ms) return promise;
  // One promise and one timer per call, not a race and a finally: every store call pays this.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
