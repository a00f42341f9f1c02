import type { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import { IntegrityError } from "./access.js";
import { MemoriaError } from "./errors.js";
import { randomId } from "./random-id.js";
import { type JsonValue, NotJsonError, toJsonValue } from "./json-value.js";
import type { SessionKey, SessionKeyFilter } from "./session-key.js";
import type { InfoPage, InfoPatch, SessionInfo } from "./session-info.js";
import type { TailReplacement } from "./message-edits.js";
import type { RecallIndex } from "./recall-index.js";
import type { OpenTurn, TurnOptions } from "./open-turn.js";

export interface ReadOptions {
  /**
   * Read only the last `last` messages (in order). Stores push this down
   * (`LRANGE -n -1`, `ORDER BY seq DESC LIMIT n`, a file tail) so the cost of a
   * windowed read does not grow with the session.
   * @default all messages
   */
  last?: number;
  /**
   * Hand back records sealed by `encryptStore` as they are stored: what its own reads
   * ask for. Without it, a session that holds sealed records is an `IntegrityError`
   * (`reason: "sealed"`) saying to open the store through `encryptStore`, never
   * ciphertext read as messages.
   */
  sealed?: boolean;
}

export interface AppendOptions extends FencedWriteOptions {
  /**
   * Tags the appended messages as one turn. A second append with a turn id the
   * session already holds stores nothing and resolves with `appended: false`.
   * @default a fresh random id (no deduplication)
   */
  turnId?: string;
}

export interface FencedWriteOptions {
  /**
   * The turn lock this write is made under (fencing): the store checks, in the
   * same atomic step as the write, that this lock still holds the session, and
   * otherwise refuses with `LockLostError` and writes nothing. So a turn whose lock
   * expired, or whose session was erased meanwhile, can never write after another
   * turn (or the erasure) began.
   * @default no check
   */
  lock?: TurnLock;
}

export interface AppendResult {
  /** False when the turn id was already stored, so nothing was written. */
  appended: boolean;
}

export interface ListOptions {
  /** @default 100 */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string;
}

export interface SessionPage {
  sessions: SessionKey[];
  /** Present when there may be more sessions; pass it to the next `list` call. */
  cursor?: string;
}

/**
 * What a store can do beyond what every store does: declared, not left to be
 * guessed from missing calls. Every call of the contract is there on every store;
 * where a capability is false, its call says so (`trim` rejects with
 * `UNSUPPORTED`; `prune` has nothing or little to delete). Wrappers hand the inner
 * store's object on as it is. Tests skip by these, saying why.
 */
export interface StoreCapabilities {
  /** Sessions expire after `ttlSeconds` without an append. */
  ttl: boolean;
  /** `lock()` serializes turns across processes, not only inside one. */
  crossProcessLock: boolean;
  /** Two store instances can open the same data (a server, a file). */
  sharedBackend: boolean;
  /** `trim` removes a session's oldest messages (compaction); false: it rejects with `UNSUPPORTED`. */
  trim: boolean;
  /**
   * `prune` is how expired sessions get deleted; false where the store deletes them
   * by itself (Redis, the in-memory store's sweep), so `prune` finds little or
   * nothing (Redis's resolves 0).
   */
  prune: boolean;
}

export interface LockOptions {
  /**
   * The lease: how long the lock outlives its holder if the holder dies. A live
   * holder renews it every third of this, however long its turn runs.
   * @default 10_000
   */
  ttlMs?: number;
  /**
   * How long to wait for a busy lock before `LockTimeoutError`. Longer than the
   * lease by default, so a lock left by a crashed process delays the next turn
   * instead of failing it.
   * @default 30_000
   */
  waitMs?: number;
  signal?: AbortSignal;
}

/** The lease of a turn lock when none is given. */
export const DEFAULT_LOCK_TTL_MS = 10_000;
/** How long a turn waits for a busy lock when not told. */
export const DEFAULT_LOCK_WAIT_MS = 30_000;

/**
 * A held turn lock: a lease, renewed while held, with a fencing token. Pass it to
 * `append` / `setState` (`{ lock }`) so a write after the lock was lost is refused.
 */
export interface TurnLock {
  /** This holder's token: what the store compares at a fenced write. */
  readonly token: string;
  /** True once a renewal found the lock taken by another holder, or could not renew it before the lease ran out. */
  readonly lost: boolean;
  /** Stops renewing and gives the lock back. Safe to call twice; never rejects (a lock that cannot be released expires). */
  release(): Promise<void>;
}

/**
 * Where sessions' messages live. Every store passes `@memoria/testkit`; the
 * guarantees below are the contract, not options:
 * ordered reads (by a per-session sequence number, never a clock), windowed reads
 * pushed down, atomic appends deduplicated by turn id, listing and erasure by any
 * key field, and messages that round-trip with every field.
 */
export interface HistoryStore {
  /** A short name for messages and benchmarks, e.g. `"sqlite"`. */
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /** The session's messages in order, or its last `last` ones. New objects each call. */
  read(key: SessionKey, options?: ReadOptions): Promise<BaseMessage[]>;
  /** Appends all of `messages` or none of them. */
  append(key: SessionKey, messages: readonly BaseMessage[], options?: AppendOptions): Promise<AppendResult>;
  /** Removes the session's messages and state, and its turn lock: a turn in flight can no longer save into it. */
  clear(key: SessionKey): Promise<void>;
  /** How many messages the session holds. */
  count(key: SessionKey): Promise<number>;
  /** Sessions whose key matches every field of `filter`, a page at a time. */
  list(filter?: SessionKeyFilter, options?: ListOptions): Promise<SessionPage>;
  /**
   * Erases every session matching `filter` (at least one field); returns how many.
   * Their turn locks go too, so a turn in flight on an erased session is refused
   * when it saves (`LockLostError`) and nothing derived from the erased data is
   * written back.
   */
  delete(filter: SessionKeyFilter): Promise<number>;
  /**
   * Derived state a memory strategy keeps for the session (a running summary, the
   * entities it knows, …): a JSON value under a name, or undefined if none was set.
   * It lives and expires with the session and is erased by `clear` and `delete`.
   */
  getState(key: SessionKey, name: string): Promise<JsonValue | undefined>;
  /** Stores (replaces) a state value; a session with state but no messages exists, with a count of 0. */
  setState(key: SessionKey, name: string, value: JsonValue, options?: FencedWriteOptions): Promise<void>;
  /**
   * Stores several state values of one session at once, every name and value checked
   * before anything is written: all of them or none (one transaction, where
   * `setState` is one too), except on a store whose engine writes one value at a
   * time (MongoDB's), which writes them in order, so a failure part-way leaves the
   * earlier ones written.
   */
  setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void>;
  /** Every state value of the session by name (empty when none): what export and migration copy. */
  getAllState(key: SessionKey): Promise<Record<string, JsonValue>>;
  /** The session as a LangChain `BaseListChatMessageHistory`. */
  history(key: SessionKey): BaseListChatMessageHistory;
  /**
   * Removes the session's `oldest` first messages (compaction, e.g. once a summary
   * holds them); resolves with how many were removed. Turn ids stay known, so a
   * retried old turn is still not stored twice. A store that cannot compact
   * (`capabilities.trim` false) rejects with `UNSUPPORTED`.
   */
  trim(key: SessionKey, options: { oldest: number }): Promise<number>;
  /**
   * The session's creation and last-activity times, message count, title and
   * metadata; undefined when there is no such session.
   */
  info(key: SessionKey): Promise<SessionInfo | undefined>;
  /**
   * Sets or removes the session's title and metadata (see {@link InfoPatch}),
   * creating the session, with no messages, if it does not exist. It does not
   * count as activity.
   */
  setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void>;
  /**
   * Sessions whose key matches every field of `filter`, newest activity first, with
   * their info, a page at a time. Server stores answer from an index on activity,
   * without reading every session.
   */
  recent(filter?: SessionKeyFilter, options?: ListOptions): Promise<InfoPage>;
  /**
   * Atomically replaces the session's messages from position `from` on with
   * `messages`, if it still holds `count` messages (else `EDIT_CONFLICT`, nothing
   * written): the one step every edit (`editSession`) comes down to.
   */
  replaceTail(key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions): Promise<void>;
  /**
   * A durable recall index of the store's own (the SQL store's table, sqlite-vec on
   * SQLite; an encrypted store's sealed index): what recall memory uses by default.
   * Wrappers pass it through. Undefined where the store has none: recall memory then
   * keeps its vectors in this process unless given an index.
   */
  recallIndex(): RecallIndex | undefined;
  /**
   * Takes the session's turn lock: across processes where the store's backend is
   * shared (`capabilities.crossProcessLock`), else within this process.
   */
  lock(key: SessionKey, options?: LockOptions): Promise<TurnLock>;
  /**
   * Opens a turn of the session: takes its turn lock (as `lock` does) and reads the
   * history `options.read` asks for under it. A store on the store kit has it.
   */
  openTurn(key: SessionKey, options?: TurnOptions): Promise<OpenTurn>;
  /**
   * Deletes the sessions that expired (`ttlSeconds`) now, rather than leaving them to
   * the next write that meets them; resolves with how many went. Reads never return
   * an expired session, pruned or not. A store that deletes them by itself
   * (`capabilities.prune` false: Redis, which resolves 0) needs no pruning, and
   * `memoria prune` says so.
   */
  prune(options?: { batchSize?: number }): Promise<number>;
  /**
   * Opens the store now (connects, creates or migrates its tables) instead of at the
   * first call, rejecting with the error that call would get; resolves at once where
   * there is nothing to open.
   */
  ready(): Promise<void>;
  /** Releases connections. Safe to call twice. */
  close(): Promise<void>;
}

/** The default and largest page size of `list`. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 10_000;

/** Checks `read` options; returns the window size or undefined for all. */
export function readWindow(options: ReadOptions | undefined): number | undefined {
  const last = options?.last;
  if (last === undefined) return undefined;
  if (!Number.isSafeInteger(last) || last < 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `read() option "last" must be a whole number >= 0, got ${String(last)}.`);
  }
  return last;
}

/** The role of a message sealed by `encryptStore`, as stores keep it. */
export const SEALED_ROLE = "memoria.sealed";

/**
 * What every store's `read` returns through: the messages, unless one of them is a
 * record sealed by `encryptStore` and the caller did not ask for sealed records
 * (`{ sealed: true }`).
 */
export function refuseSealed(key: SessionKey, messages: BaseMessage[], options: ReadOptions | undefined): BaseMessage[] {
  if (options?.sealed === true) return messages;
  for (const message of messages) {
    if ((message as { role?: unknown }).role === SEALED_ROLE) {
      throw new IntegrityError(
        key,
        "sealed",
        "the session was written through encryptStore and holds sealed records; open the store as encryptStore(store, { keys, activeKeyId }) to read it",
      );
    }
  }
  return messages;
}

/** Checks `list` options; returns the page size. */
export function listLimit(options: ListOptions | undefined): number {
  const limit = options?.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new MemoriaError("INVALID_ARGUMENT", `list() option "limit" must be a whole number from 1 to ${MAX_LIST_LIMIT}.`);
  }
  return limit;
}

// eslint-disable-next-line no-control-regex
const TURN_ID = /^[^\u0000-\u001f\u007f]{1,128}$/;

/** Checks a caller's turn id, or makes a fresh one. */
export function turnIdOf(options: AppendOptions | undefined): string {
  const turnId = options?.turnId;
  if (turnId === undefined) return randomId();
  if (typeof turnId !== "string" || !TURN_ID.test(turnId)) {
    throw new MemoriaError("INVALID_ARGUMENT", "A turn id must be a string of 1 to 128 characters without control characters.");
  }
  return turnId;
}

/** Refuses an erasure with no field: `delete({})` would erase every session. */
export function requireFilterField(filter: SessionKeyFilter): void {
  if (Object.keys(filter).length === 0) {
    throw new MemoriaError(
      "INVALID_ARGUMENT",
      'delete() needs at least one key field, e.g. delete({ userId: "u1" }); an empty filter would erase every session.',
    );
  }
}

export class StoreClosedError extends MemoriaError {
  constructor(storeName: string) {
    super("STORE_CLOSED", `The ${storeName} store is closed; create a new store to keep working.`);
  }
}

const STATE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Checks a state name. */
export function stateName(name: string): string {
  if (typeof name !== "string" || !STATE_NAME.test(name)) {
    throw new MemoriaError(
      "INVALID_ARGUMENT",
      `A state name must start with a letter and hold at most 64 letters, digits, "_", "." or "-"; got ${JSON.stringify(name)}.`,
    );
  }
  return name;
}

/** Checks a state value and returns a private JSON copy of it. */
export function stateValue(value: unknown): JsonValue {
  try {
    return toJsonValue(value);
  } catch (error) {
    if (error instanceof NotJsonError) throw new MemoriaError("INVALID_ARGUMENT", `A state value must be JSON: ${error.message}.`);
    throw error;
  }
}

/** An object of values by name (state values, channel values), built so that a name like `__proto__` stays an ordinary entry. */
export function namedValues<T = JsonValue>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, value] of entries) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Checks `prune` options; returns the batch size, or undefined for the store's own. */
export function pruneBatch(options: { batchSize?: number } | undefined): number | undefined {
  const batchSize = options?.batchSize;
  if (batchSize === undefined) return undefined;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
    throw new MemoriaError("INVALID_ARGUMENT", `prune() option "batchSize" must be a whole number >= 1, got ${String(batchSize)}.`);
  }
  return batchSize;
}

/** Checks `trim` options; returns how many to remove. */
export function trimCount(options: { oldest: number } | undefined): number {
  const oldest = options?.oldest;
  if (!Number.isSafeInteger(oldest) || (oldest as number) < 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `trim() option "oldest" must be a whole number >= 0, got ${String(oldest)}.`);
  }
  return oldest as number;
}
