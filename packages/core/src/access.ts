import type { RunnableConfig } from "@langchain/core/runnables";
import { MemoriaError } from "./errors.js";
import type { SessionKey, SessionKeyFilter } from "./session-key.js";

/**
 * What a caller is about to do to stored conversations:
 * - `read`: messages, counts and state of one session;
 * - `append`: add messages, set state, take the session's turn lock;
 * - `list`: list sessions matching a filter;
 * - `delete`: clear or trim one session, or erase every session matching a filter.
 */
export type AccessAction = "read" | "append" | "list" | "delete";

export interface AccessRequest {
  /** The session, or for `list` and `delete` by filter the filter (a partial key). */
  key: SessionKey | SessionKeyFilter;
  action: AccessAction;
  /** The call's config where there is one (a turn's, or the one given to `guardStore(...).as(config)`). */
  config?: RunnableConfig;
}

/**
 * Decides whether a request may go ahead: return (or resolve) true to allow it,
 * false to deny it, or throw a `ForbiddenError` of your own with a better reason.
 * Called before anything is read or written.
 */
export type Authorize = (request: AccessRequest) => boolean | Promise<boolean>;

/** An `authorize` hook denied a request; nothing was read or written. */
export class ForbiddenError extends MemoriaError {
  readonly action: AccessAction;
  readonly key: SessionKey | SessionKeyFilter;

  constructor(action: AccessAction, key: SessionKey | SessionKeyFilter, reason?: string) {
    super("FORBIDDEN", `Not allowed to ${action} ${JSON.stringify(key)}${reason ? `: ${reason}` : ""}. Nothing was read or written.`);
    this.action = action;
    this.key = key;
  }

  static override isInstance(error: unknown): error is ForbiddenError {
    return MemoriaError.hasCode(error, "FORBIDDEN");
  }
}

/** Asks `authorize` and throws `ForbiddenError` unless it allows the request. */
export async function checkAccess(authorize: Authorize | undefined, request: AccessRequest): Promise<void> {
  if (!authorize) return;
  let allowed: boolean;
  try {
    allowed = await authorize(request);
  } catch (error) {
    if (ForbiddenError.isInstance(error)) throw error;
    throw new ForbiddenError(request.action, request.key, `the authorize hook failed (${error instanceof Error ? error.message : String(error)})`);
  }
  if (allowed !== true) throw new ForbiddenError(request.action, request.key);
}

/**
 * A stored record failed its integrity check: it was changed (`tampered`), moved from
 * another session or position (`misplaced`), not sealed although the store is
 * encrypted (`not-sealed`), or its key is not in the key ring (`unknown-key`); or the
 * session as read is not the one last written: its newest records are gone
 * (`truncated`), records or a state value from before a later write or edit were put
 * back (`rolled-back`), or records of two points in time stand side by side
 * (`mixed`); or a store opened without `encryptStore` found sealed records
 * (`sealed`); or its per-scope key was destroyed by an erasure (`shredded`).
 * Nothing of it is returned.
 */
export class IntegrityError extends MemoriaError {
  readonly reason: "tampered" | "misplaced" | "not-sealed" | "unknown-key" | "truncated" | "rolled-back" | "mixed" | "sealed" | "shredded";
  readonly sessionKey: SessionKey;

  constructor(sessionKey: SessionKey, reason: IntegrityError["reason"], detail: string) {
    super("INTEGRITY", `A stored record of session ${JSON.stringify(sessionKey)} cannot be trusted (${reason}): ${detail}.`);
    this.reason = reason;
    this.sessionKey = sessionKey;
  }

  static override isInstance(error: unknown): error is IntegrityError {
    return MemoriaError.hasCode(error, "INTEGRITY");
  }
}
