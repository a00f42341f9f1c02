import type { BaseMessage } from "@langchain/core/messages";
import type { StoreCapabilities } from "../history-store.js";
import type { PolledLock } from "../lock-polling.js";
import type { RecallIndex } from "../recall-index.js";
import type { CheckedPatch } from "../session-info.js";
import type { SessionKey, SessionKeyFilter } from "../session-key.js";

/**
 * What an engine returns from a fenced write whose turn lock is no longer held
 * (it expired and another turn took it, or the session was erased). The kit turns
 * it into a `LockLostError`; the engine must have written nothing. An engine whose
 * lock machinery throws `LockLostError` itself may let it through instead.
 */
export const LOCK_LOST: unique symbol = Symbol.for("memoria.lock-lost");
export type LockLost = typeof LOCK_LOST;

/**
 * One session as an engine sees it: its checked key and `id`, the key's canonical
 * text (`encodeSessionKey`), which is what an engine stores the session under.
 * Equal keys have equal ids; an id sorts the same on every engine.
 */
export interface EngineSession {
  readonly key: SessionKey;
  readonly id: string;
}

/** The messages of a turn, and how to store them. */
export interface TurnWrite {
  /** Stored with the messages, in the same atomic step; a turn id seen before means "store nothing". */
  readonly turnId: string;
  /**
   * False when the kit made the turn id up for this one call: an engine whose write
   * cannot half-succeed may skip remembering it.
   */
  readonly keepTurnId: boolean;
  /** The turn lock's token when the write is fenced: refuse it (return `LOCK_LOST`) unless the lock holds this token. */
  readonly fence: string | undefined;
  /**
   * Nothing else is written under the lock after this: an engine that can give the
   * lock back in the same step does, and says so (`released: true`). Only set with a fence.
   */
  readonly release: boolean;
}

/** An engine's turn lock: the polled calls, and a try that reads with it where the backend can. */
export interface EngineLock extends Omit<PolledLock, "owner"> {
  /**
   * One try, as `take`, that also reads the session's payloads (all, or the last
   * `last`) in the same atomic step once the lock is held: `undefined` when it was
   * not taken. Left out, a turn takes the lock and then reads.
   */
  takeAndRead?(last: number | undefined): Promise<readonly string[] | undefined>;
}

/** What a store keeps of one conversation besides its messages, as an engine returns it. */
export interface EngineInfo {
  id: string;
  /** The key as it was written (parsed from what the engine stored; the kit checks it), its fields in their order; left out, the kit decodes `id`, whose fields are sorted by name. */
  key?: SessionKey;
  createdAt: number;
  lastActiveAt: number;
  messageCount: number;
  title?: string | null;
  /** JSON text, as `setInfo` was given it. */
  metadata?: string | null;
}

/**
 * The few things a backend does, on strings. A message arrives as its JSON text
 * (the codec's payload) and is given back exactly as stored; state values arrive
 * as JSON text; keys are already checked. Everything else a store promises
 * (validation, encoding, scope records, typed errors, closed-store checks,
 * `history()`, turn locks as leases) is `defineStore`'s.
 *
 * Atomicity is the engine's part: an `append` stores all of its messages and its
 * turn id, or nothing. Any error an engine throws that is not a memoria error
 * reaches the caller as `StoreUnavailableError` (outcome unknown for a write).
 */
export interface EngineCalls {
  /** Shown in errors, e.g. `"my-kv"`. */
  readonly name: string;
  /** What the backend does; `trim` and `prune` the kit declares by whether the engine has those calls. */
  readonly capabilities: EngineCapabilities;

  count(session: EngineSession): Promise<number>;
  /**
   * Appends `payloads` and the turn id atomically, creating the session when it is
   * new and marking it active. `appended: false` (nothing written) when the turn id
   * was stored before.
   */
  append(session: EngineSession, payloads: readonly string[], turn: TurnWrite): Promise<{ appended: boolean; released?: boolean } | LockLost>;
  /** Removes the session: messages, turn ids, state, info and lock. */
  clear(session: EngineSession): Promise<void>;

  /** A state value's JSON text. */
  getState(session: EngineSession, name: string): Promise<string | undefined>;
  // biome-ignore lint/suspicious/noConfusingVoidType: a write resolves with nothing, or with LockLost; `undefined` would make every engine return it
  setState(session: EngineSession, name: string, json: string, fence: string | undefined): Promise<void | LockLost>;
  /** Several state values (name and JSON text, at least one) written together: all or none. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a write resolves with nothing, or with LockLost; `undefined` would make every engine return it
  setStates?(session: EngineSession, values: readonly (readonly [string, string])[], fence: string | undefined): Promise<void | LockLost>;
  /** Every state value, as name and JSON text; the kit sorts them. */
  getAllState(session: EngineSession): Promise<Iterable<readonly [string, string]>>;

  /**
   * Session ids in ascending order, strictly after `after`, at most `limit`. An
   * engine may narrow them by `match` (an index on a key field) or return every
   * session: the kit keeps only those `match` lists. An engine that keeps each key
   * as it was written may give sessions (`{ key, id }`) instead, so keys come back
   * with their fields in the caller's order rather than sorted by name.
   */
  list(match: SessionKeyFilter, page: { after: string | undefined; limit: number }): Promise<readonly (string | EngineSession)[]>;
  /**
   * Erases every session whose key holds `match`'s fields (one at least): the kit
   * lists and clears them when it is left out. Returns how many held anything.
   */
  delete?(match: SessionKeyFilter): Promise<number>;

  info(session: EngineSession): Promise<EngineInfo | undefined>;
  /** Applies a checked patch (`undefined`: keep, `null`: remove), creating the session when it is new. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a write resolves with nothing, or with LockLost; `undefined` would make every engine return it
  setInfo(session: EngineSession, patch: CheckedPatch, fence: string | undefined): Promise<void | LockLost>;
  /**
   * A newest-first page of sessions' info: strictly after `after` in (lastActiveAt
   * desc, id asc) order, at most `limit`, narrowed by `match` or not. Left out, the
   * kit scans `list` and `info` (fine for thousands of sessions, not millions).
   */
  recent?(match: SessionKeyFilter, page: { after: { lastActiveAt: number; id: string } | undefined; limit: number }): Promise<readonly EngineInfo[]>;

  /**
   * Replaces the messages from index `from` on with `payloads`, only if the session
   * holds `count` messages; returns the count found (nothing written when it differs).
   */
  replaceTail(
    session: EngineSession,
    tail: { from: number; count: number; payloads: readonly string[] },
    fence: string | undefined,
  ): Promise<number | LockLost>;
  /** Removes the `oldest` first messages; returns how many went. Left out, the store cannot compact. */
  trim?(session: EngineSession, oldest: number): Promise<number>;
  /**
   * Deletes expired sessions (`batchSize` at a time where given); returns how many
   * went. Left out where the backend deletes them by itself, or nothing expires.
   */
  prune?(batchSize: number | undefined): Promise<number>;
  /** Opens the backend now (connects, migrates) rather than at the first call. */
  ready?(): Promise<void>;

  /**
   * A cross-process turn lock, one owner at a time: `take` by a conditional write,
   * `renew` and `release` only for that owner, and fenced writes compare the owner.
   * Left out, the kit keeps the locks in this process's memory and checks fences
   * itself before calling the engine (right for a backend only this process writes).
   */
  lock?(session: EngineSession, owner: string, ttlMs: number): EngineLock;

  /** The engine's own recall index, when it has one. */
  recallIndex?(): RecallIndex;
  close(): Promise<void>;
}

/** What an engine declares of its backend; the store's other capabilities follow from its calls. */
export type EngineCapabilities = Omit<StoreCapabilities, "trim" | "prune">;

/** An engine reads messages as stored texts, which the kit decodes. */
export interface TextReads {
  /** The payloads in order, or the last `last` of them. */
  read(session: EngineSession, last: number | undefined): Promise<readonly string[]>;
  readMessages?: undefined;
}

/**
 * Or an engine keeps decoded messages (a cache of frozen messages that every read
 * shares, as the file store's is) and hands them over, so a read of a cached session
 * decodes nothing: the messages in order, or the last `last`, in a new array.
 */
export interface DecodedReads {
  read?: undefined;
  readMessages(session: EngineSession, last: number | undefined): Promise<BaseMessage[]>;
}

/** What a backend gives `defineStore`: the calls above, and its reads one way or the other. */
export type StoreEngine = EngineCalls & (TextReads | DecodedReads);
