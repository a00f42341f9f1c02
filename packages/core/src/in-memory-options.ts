import { MemoriaError } from "./errors.js";
import type { SessionKey } from "./session-key.js";

export interface InMemoryStoreOptions {
  /**
   * The most sessions kept at once. Past it, the least recently used session is
   * dropped, so a long-running server cannot grow without bound.
   * @default 10_000
   */
  maxSessions?: number;
  /**
   * Seconds a session lives after its last append; unset, sessions never expire.
   * @default undefined
   */
  ttlSeconds?: number;
  /** Called with the key of each session dropped to stay within `maxSessions`. */
  onEvict?: (key: SessionKey) => void;
  /**
   * Keep each message as one deeply frozen object and give every read those same
   * objects (in a new array), so a read costs an array copy, never a rebuild of
   * every message (which was most of a whole-history turn's cost). Nothing stored
   * can change: changing a message a read returned throws a `TypeError`. Set it to
   * `false` for code that edits the messages it reads (LangChain's own in-memory
   * history hands out its stored objects; LangGraph's `messagesStateReducer` gives
   * an id to each message that has none, in place): every read then decodes fresh
   * copies, and a change goes to the copy.
   * @default true
   */
  frozen?: boolean;
}

export function positiveInteger(name: string, value: number | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `createInMemoryStore: "${name}" must be a positive number, got ${value}.`);
  }
  return value;
}
