import type { BaseMessage } from "@langchain/core/messages";
import { listedBy } from "./scope-key.js";
import {
  type AppendOptions,
  type AppendResult,
  type FencedWriteOptions,
  type HistoryStore,
  type ListOptions,
  type LockOptions,
  type ReadOptions,
  type SessionPage,
  StoreClosedError,
  type TurnLock,
  listLimit,
  readWindow,
  refuseSealed,
  requireFilterField,
  namedValues,
  stateName,
  stateValue,
  pruneBatch,
  trimCount,
  turnIdOf,
} from "./history-store.js";
import { type JsonValue, cloneJson } from "./json-value.js";
import { LocalLeases } from "./local-leases.js";
import { type EncodedMessage, encodeMessages } from "./message-codec.js";
import { decodeMessage, freezeEncodedMessage } from "./message-decoding.js";
import {
  type SessionKey,
  type SessionKeyFilter,
  createKeyFilter,
  createSessionKey,
  decodeSessionKey,
  encodeSessionKey,
  keyMatches,
  sessionKeyId,
} from "./session-key.js";
import { StoreChatMessageHistory } from "./store-chat-history.js";
import { type TailReplacement, changedUnderEdit, checkTail } from "./message-edits.js";
import { type Kept, type Session, addTurn, alive, hasTurn, noteSealed } from "./in-memory-session.js";
import { type InMemoryStoreOptions, positiveInteger } from "./in-memory-options.js";
import { type OpenTurn, type TurnOptions, turnWith } from "./open-turn.js";
import { stateEntries } from "./state-writes.js";
import { type InfoPage, type InfoPatch, type SessionInfo, checkInfoPatch, recentPage, sessionInfo } from "./session-info.js";

/**
 * A store in this process's memory: for tests, demos and single-process apps
 * that may lose history on restart. Bounded by `maxSessions` (LRU) and optionally
 * by `ttlSeconds`. A `Map` keeps least-recently-used order for free: touching a
 * session moves it to the end.
 */
export type { InMemoryStoreOptions } from "./in-memory-options.js";

export function createInMemoryStore(options: InMemoryStoreOptions = {}): HistoryStore {
  const maxSessions = positiveInteger("maxSessions", options.maxSessions, 10_000) as number;
  const ttlSeconds = positiveInteger("ttlSeconds", options.ttlSeconds, undefined);
  const sessions = new Map<string, Session>();
  const leases = new LocalLeases();
  let closed = false;
  // Expired sessions are freed as they expire, not only when something lists them.
  const sweeper = ttlSeconds === undefined ? undefined : setInterval(() => live(), Math.min(ttlSeconds * 1000, 60_000));
  sweeper?.unref?.();
  const frozen = options.frozen ?? true;
  const keep: (message: EncodedMessage) => Kept = frozen ? freezeEncodedMessage : (message) => message;
  /**
   * A new array of the messages from index `from` on: the frozen objects themselves,
   * or decoded copies. Never the session's own array, frozen: V8 walks, slices and
   * concatenates a frozen array 6 to 10 times slower, and every caller would pay that.
   */
  const give: (kept: Kept[], from: number) => BaseMessage[] = frozen
    ? (kept, from) => kept.slice(from) as BaseMessage[]
    : (kept, from) => decodeFrom(kept, from);

  function decodeFrom(kept: Kept[], from: number): BaseMessage[] {
    const copies: BaseMessage[] = [];
    for (let i = from; i < kept.length; i++) copies.push(decodeMessage(kept[i] as EncodedMessage));
    return copies;
  }

  /**
   * Appends to a checked session, unless it holds the turn id. `keepTurnId` false: the
   * id was made up for this one call, and is repeated only after an unknown outcome,
   * which this store never has, so it is not kept.
   */
  function appendTo(
    sessionKey: SessionKey,
    id: string,
    messages: readonly BaseMessage[],
    turnId: string,
    keepTurnId: boolean,
    fence: FencedWriteOptions | undefined,
  ): AppendResult {
    const encoded = encodeMessages(messages);
    leases.check(id, sessionKey, fence);
    const existing = touch(id);
    if (existing && hasTurn(existing, turnId)) return { appended: false };
    const session = existing ?? open(id);
    session.messages.push(...encoded.map(keep));
    noteSealed(session, encoded);
    if (keepTurnId) addTurn(session, turnId);
    session.activeAt = Date.now();
    renew(session);
    return { appended: true };
  }

  /** Checked state values written together (synchronously: nothing runs between them). */
  function setStates(key: SessionKey, entries: [string, JsonValue][], writeOptions: FencedWriteOptions | undefined): void {
    ensureOpen();
    const sessionKey = createSessionKey(key);
    const id = encodeSessionKey(sessionKey);
    leases.check(id, sessionKey, writeOptions);
    if (entries.length === 0) return; // nothing to write: no session made for it
    const session = touch(id) ?? open(id);
    session.state ??= new Map();
    for (const [name, value] of entries) session.state.set(name, value);
    renew(session);
  }

  function ensureOpen(): void {
    if (closed) throw new StoreClosedError("in-memory");
  }

  /** A new, empty session, evicting the least recently used one past `maxSessions`. */
  function open(id: string): Session {
    const now = Date.now();
    const session: Session = { messages: [], turnIds: [], state: undefined, expiresAt: 0, createdAt: now, activeAt: now };
    sessions.set(id, session);
    newest = id;
    evictOverflow();
    return session;
  }

  function renew(session: Session): void {
    if (ttlSeconds !== undefined) session.expiresAt = Date.now() + ttlSeconds * 1000;
  }

  /** The id touched last: already the most recently used, so touching it again moves nothing. */
  let newest: string | undefined;

  /** The live session for a key, moved to most recently used; expired ones vanish. */
  function touch(id: string): Session | undefined {
    const session = sessions.get(id);
    if (!session) return undefined;
    if (!alive(session)) {
      sessions.delete(id);
      return undefined;
    }
    if (id !== newest) {
      sessions.delete(id);
      sessions.set(id, session);
      newest = id;
    }
    return session;
  }

  /** The ids of live sessions; expired ones vanish. */
  function live(): string[] {
    const now = Date.now();
    const result: string[] = [];
    for (const [id, session] of sessions) {
      if (!alive(session, now)) sessions.delete(id);
      else result.push(id);
    }
    return result;
  }

  const store: HistoryStore = {
    name: "in-memory",
    capabilities: { ttl: true, crossProcessLock: false, sharedBackend: false, trim: true, prune: false },

    async read(key: SessionKey, readOptions?: ReadOptions): Promise<BaseMessage[]> {
      ensureOpen();
      const id = sessionKeyId(key);
      const last = readWindow(readOptions);
      const session = touch(id);
      const messages = session?.messages ?? [];
      const read = give(messages, last === undefined ? 0 : Math.max(0, messages.length - last));
      return session?.sealed ? refuseSealed(key, read, readOptions) : read;
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      return appendTo(sessionKey, encodeSessionKey(sessionKey), messages, turnIdOf(appendOptions), true, appendOptions);
    },

    async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
      ensureOpen();
      const value = touch(sessionKeyId(key))?.state?.get(stateName(name));
      return value === undefined ? undefined : cloneJson(value);
    },

    async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
      ensureOpen();
      const state = touch(sessionKeyId(key))?.state;
      return state ? namedValues([...state].map(([name, value]) => [name, cloneJson(value)])) : {};
    },

    async setState(key: SessionKey, name: string, value: JsonValue, writeOptions?: FencedWriteOptions): Promise<void> {
      setStates(key, [[stateName(name), stateValue(value)]], writeOptions);
    },

    async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, writeOptions?: FencedWriteOptions): Promise<void> {
      setStates(key, stateEntries(values), writeOptions);
    },

    async info(key: SessionKey): Promise<SessionInfo | undefined> {
      ensureOpen();
      const id = sessionKeyId(key);
      const session = touch(id);
      return session && infoOf(id, session);
    },

    async setInfo(key: SessionKey, patch: InfoPatch, writeOptions?: FencedWriteOptions): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const checked = checkInfoPatch(patch);
      const id = encodeSessionKey(sessionKey);
      leases.check(id, sessionKey, writeOptions);
      const session = touch(id) ?? open(id);
      if (checked.title !== undefined) session.title = checked.title ?? undefined;
      if (checked.metadata !== undefined) session.metadata = checked.metadata ?? undefined;
      if (checked.createdAt !== undefined) session.createdAt = checked.createdAt;
      if (checked.lastActiveAt !== undefined) session.activeAt = checked.lastActiveAt;
      renew(session);
    },

    // A scan and a sort: the sessions are in this process's memory already.
    async recent(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<InfoPage> {
      ensureOpen();
      const entries = live().map((id) => ({ id, lastActiveAt: (sessions.get(id) as Session).activeAt }));
      const { page, cursor } = recentPage(entries, (entry) => decodeSessionKey(entry.id), filter, listOptions);
      const result: InfoPage = { sessions: page.map((entry) => infoOf(entry.id, sessions.get(entry.id) as Session)) };
      if (cursor) result.cursor = cursor;
      return result;
    },

    async replaceTail(key: SessionKey, tail: TailReplacement, writeOptions?: FencedWriteOptions): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      checkTail(tail);
      const encoded = encodeMessages(tail.messages);
      const id = encodeSessionKey(sessionKey);
      leases.check(id, sessionKey, writeOptions);
      const session = touch(id);
      const found = session?.messages.length ?? 0;
      if (found !== tail.count) throw changedUnderEdit(found, tail.count);
      if (!session) return;
      session.messages.splice(tail.from, session.messages.length - tail.from, ...encoded.map(keep));
      noteSealed(session, encoded);
    },

    async trim(key: SessionKey, trimOptions: { oldest: number }): Promise<number> {
      ensureOpen();
      const oldest = trimCount(trimOptions);
      const session = touch(encodeSessionKey(createSessionKey(key)));
      return session ? session.messages.splice(0, oldest).length : 0;
    },

    async clear(key: SessionKey): Promise<void> {
      ensureOpen();
      const id = encodeSessionKey(createSessionKey(key));
      sessions.delete(id);
      leases.drop(id);
    },

    async count(key: SessionKey): Promise<number> {
      ensureOpen();
      const session = sessions.get(sessionKeyId(key));
      return session && alive(session) ? session.messages.length : 0;
    },

    async list(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<SessionPage> {
      ensureOpen();
      const match = createKeyFilter(filter);
      const limit = listLimit(listOptions);
      const cursor = listOptions?.cursor;
      const ids = live()
        .filter((id) => (cursor === undefined || id > cursor) && listedBy(decodeSessionKey(id), match))
        .sort();
      const page = ids.slice(0, limit);
      const sessionsOut = page.map((id) => decodeSessionKey(id));
      return ids.length > limit ? { sessions: sessionsOut, cursor: page[page.length - 1] } : { sessions: sessionsOut };
    },

    async delete(filter: SessionKeyFilter): Promise<number> {
      ensureOpen();
      const match = createKeyFilter(filter);
      requireFilterField(match);
      let deleted = 0;
      for (const id of live()) {
        if (keyMatches(decodeSessionKey(id), match)) {
          sessions.delete(id);
          leases.drop(id);
          deleted++;
        }
      }
      return deleted;
    },

    async lock(key: SessionKey, lockOptions: LockOptions = {}): Promise<TurnLock> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      return leases.lock(encodeSessionKey(sessionKey), sessionKey, lockOptions);
    },

    async openTurn(key: SessionKey, turnOptions: TurnOptions = {}): Promise<OpenTurn> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const id = encodeSessionKey(sessionKey);
      const { read, ...lockOptions } = turnOptions;
      const last = read ? readWindow(read) : undefined;
      const lock = await leases.lock(id, sessionKey, lockOptions);
      const save: OpenTurn["save"] = async (messages, saveOptions) => {
        ensureOpen();
        return appendTo(sessionKey, id, messages, turnIdOf(saveOptions), saveOptions?.keepTurnId !== false, { lock });
      };
      if (!read) return turnWith(lock, undefined, save);
      // Read when first asked, under the lock (nothing runs between the lock and a read
      // here but the caller's own code), so the default turn can take its history
      // joined to its input instead (historyWith): the one copy that turn makes.
      const joined = (after: readonly BaseMessage[] | undefined): BaseMessage[] => {
        ensureOpen();
        const session = touch(id);
        if (!session) return after ? [...after] : [];
        const messages = session.messages;
        const from = last === undefined ? 0 : Math.max(0, messages.length - last);
        // Sealed records are refused as a read refuses them: never ciphertext to a model.
        if (after && frozen && from === 0) {
          if (session.sealed) refuseSealed(sessionKey, messages as BaseMessage[], read);
          return (messages as BaseMessage[]).concat(after);
        }
        const copies = give(messages, from);
        if (session.sealed) refuseSealed(sessionKey, copies, read);
        if (after) copies.push(...after);
        return copies;
      };
      let history: BaseMessage[] | undefined;
      return {
        lock,
        get history() {
          history ??= joined(undefined);
          return history;
        },
        historyWith: joined,
        save,
        release: () => lock.release(),
      };
    },

    history(key: SessionKey) {
      return new StoreChatMessageHistory(store, createSessionKey(key));
    },

    /** The sweep that runs by itself, run now: what it freed. */
    async prune(pruneOptions?: { batchSize?: number }): Promise<number> {
      pruneBatch(pruneOptions);
      ensureOpen();
      const before = sessions.size;
      live();
      return before - sessions.size;
    },

    async ready(): Promise<void> {
      ensureOpen();
    },

    recallIndex: () => undefined,

    async close(): Promise<void> {
      closed = true;
      clearInterval(sweeper);
      sessions.clear();
      leases.clear();
    },
  };

  function infoOf(id: string, session: Session): SessionInfo {
    const { createdAt, activeAt, title, metadata, messages } = session;
    return sessionInfo(decodeSessionKey(id), { createdAt, lastActiveAt: activeAt, messageCount: messages.length, title, metadata });
  }

  function evictOverflow(): void {
    while (sessions.size > maxSessions) {
      const oldestId = sessions.keys().next().value as string;
      sessions.delete(oldestId);
      options.onEvict?.(decodeSessionKey(oldestId));
    }
  }

  return store;
}
