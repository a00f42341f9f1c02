import type { BaseMessage } from "@langchain/core/messages";
import { SEALED_ROLE } from "./history-store.js";
import type { JsonValue } from "./json-value.js";
import type { EncodedMessage } from "./message-codec.js";

/** A stored message: a frozen message shared by reads, or (`frozen: false`) codec form that a read decodes into a copy. */
export type Kept = EncodedMessage | BaseMessage;

/**
 * One session, kept small (a server may hold many): its key is not kept (the map's
 * encoded id decodes back to it), its state map is made on the first `setState`,
 * its turn ids sit in an exact-size array until there are enough to need a set,
 * and `expiresAt` is 0 when it never expires (a small integer, not a boxed number).
 */
export interface Session {
  /** Private to the store: reads get the frozen objects themselves or, with `frozen: false`, copies. */
  messages: Kept[];
  turnIds: readonly string[] | Set<string>;
  state?: Map<string, JsonValue>;
  expiresAt: number;
  createdAt: number;
  /** When a message was last appended (or the session made). */
  activeAt: number;
  title?: string;
  /** As JSON text, parsed for each `info` (so no caller can change what is kept). */
  metadata?: string;
  /** Set once a record sealed by `encryptStore` is stored here, and kept: only then does a read look for sealed records to refuse. */
  sealed?: true;
}

/** Notes on the session whether `encoded` holds a record sealed by `encryptStore`. */
export function noteSealed(session: Session, encoded: readonly EncodedMessage[]): void {
  if (session.sealed) return;
  for (const message of encoded) {
    if (message.type === "generic" && message.data.role === SEALED_ROLE) {
      session.sealed = true;
      return;
    }
  }
}

/** Past this many turn ids a session keeps them in a set (an array scan would grow with the session). */
const TURN_ID_ARRAY_LIMIT = 16;

export function hasTurn(session: Session, id: string): boolean {
  return Array.isArray(session.turnIds) ? session.turnIds.includes(id) : (session.turnIds as Set<string>).has(id);
}

export function addTurn(session: Session, id: string): void {
  const ids = session.turnIds;
  if (!Array.isArray(ids)) (ids as Set<string>).add(id);
  else session.turnIds = ids.length < TURN_ID_ARRAY_LIMIT ? [...ids, id] : new Set([...ids, id]);
}

export const alive = (session: Session, now?: number) => session.expiresAt === 0 || session.expiresAt > (now ?? Date.now());
