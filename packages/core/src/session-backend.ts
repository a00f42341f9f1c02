import type { BaseChatMessageHistory, BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type HistoryStore, type LockOptions, type ReadOptions, type TurnLock, stateName, stateValue } from "./history-store.js";
import { type JsonValue, cloneJson } from "./json-value.js";
import type { MemoryLoadContext, SessionState } from "./memory-strategy.js";
import { type SessionKey, createSessionKey, encodeSessionKey } from "./session-key.js";
import { isStoreChatMessageHistory } from "./store-chat-history.js";
import { joinedReadOf } from "./joined-read.js";
import type { ReleasableLock, TurnAppendOptions, TurnAppendResult } from "./turn-hints.js";

/** The session a turn talks to: reads, an atomic save, state, and an optional cross-process lock. */
export interface Backend {
  identity: object;
  store?: HistoryStore;
  read(options?: ReadOptions): Promise<BaseMessage[]>;
  /** The whole history followed by `after`, as one new array, where the store can make it in one copy. */
  readJoined?(after: readonly BaseMessage[]): BaseMessage[];
  count(): Promise<number>;
  state: SessionState;
  /**
   * Stores the turn atomically; false when its turn id was stored before (nothing
   * written). `last`: nothing else is written under the turn's lock after this, so
   * a store may give the lock back in the same step. `keepTurnId`: false when the
   * turn id was made up for this call (see `AppendOptions.keepTurnId`).
   */
  save(messages: BaseMessage[], turnId: string, options?: { last?: boolean; keepTurnId?: boolean }): Promise<boolean>;
  lock?(options: LockOptions): Promise<TurnLock>;
  trim?(oldest: number): Promise<number>;
  /**
   * The same session, with every write fenced by `lock`: refused once the lock is
   * lost. The lock's `messages`, read with it as `read` says, answer this backend's
   * first read if it asks for just them and nothing was written or trimmed before.
   */
  fenced?(lock: TurnLock, read?: ReadOptions): Backend;
  /** The session as a LangChain chat history (`configurable.messageHistory` of the wrapped runnable). */
  chatHistory(): BaseChatMessageHistory | BaseListChatMessageHistory;
}

export function storeBackend(store: HistoryStore, key: SessionKey, lock?: TurnLock, lockRead?: ReadOptions): Backend {
  return new StoreBackend(store, key, lock, lockRead);
}

/** A session of a memoria store; a class, so that a turn's two backends (unfenced, then fenced) cost two objects, not two dozen closures. */
class StoreBackend implements Backend {
  readonly identity: HistoryStore;
  readonly readJoined?: (after: readonly BaseMessage[]) => BaseMessage[];
  readonly trim?: (oldest: number) => Promise<number>;
  #readWithLock: { options: ReadOptions; messages: BaseMessage[] } | undefined;
  /**
   * The count, from a whole history read with the lock, until this turn writes: the
   * history its prompt is built from (what recall's `skipRecent` counts back from).
   */
  #counted: number | undefined;
  #state: SessionState | undefined;

  constructor(
    readonly store: HistoryStore,
    private readonly key: SessionKey,
    private readonly held?: TurnLock,
    lockRead?: ReadOptions,
  ) {
    this.identity = store;
    this.#readWithLock = held?.messages && lockRead ? { options: lockRead, messages: held.messages } : undefined;
    if (held) held.messages = undefined; // handed to this backend's first read; not kept for the turn
    const first = this.#readWithLock;
    this.#counted = first && first.options.last === undefined && !first.options.sealed ? first.messages.length : undefined;
    const joinedRead = joinedReadOf(store);
    if (joinedRead) this.readJoined = (after) => joinedRead(key, after);
    const trim = store.trim;
    if (trim) {
      this.trim = (oldest) => {
        this.#forgetRead();
        return trim.call(store, key, { oldest });
      };
    }
  }

  #forgetRead(): void {
    this.#readWithLock = undefined;
    this.#counted = undefined;
  }

  read(options?: ReadOptions): Promise<BaseMessage[]> {
    const found = this.#readWithLock;
    this.#readWithLock = undefined;
    if (found && options?.last === found.options.last && options?.sealed === found.options.sealed) return Promise.resolve(found.messages);
    return this.store.read(this.key, options);
  }

  count(): Promise<number> {
    return this.#counted === undefined ? this.store.count(this.key) : Promise.resolve(this.#counted);
  }

  get state(): SessionState {
    if (this.#state === undefined) {
      const { store, key } = this;
      const fence = this.held ? { lock: this.held } : undefined;
      this.#state = { get: (name) => store.getState(key, name), set: (name, value) => store.setState(key, name, value, fence) };
    }
    return this.#state;
  }

  async save(messages: BaseMessage[], turnId: string, options?: { last?: boolean; keepTurnId?: boolean }): Promise<boolean> {
    this.#forgetRead();
    const lock = this.held;
    const release = options?.last === true && lock !== undefined;
    const hinted: TurnAppendOptions = { turnId, lock, release, keepTurnId: options?.keepTurnId };
    const result: TurnAppendResult = await this.store.append(this.key, messages, hinted);
    if (result.released) (lock as ReleasableLock | undefined)?.markReleased?.();
    return result.appended;
  }

  lock(options: LockOptions): Promise<TurnLock> {
    return this.store.lock(this.key, options);
  }

  fenced(held: TurnLock, read?: ReadOptions): Backend {
    return new StoreBackend(this.store, this.key, held, read);
  }

  chatHistory(): BaseChatMessageHistory | BaseListChatMessageHistory {
    return this.store.history(this.key);
  }
}

/** State for LangChain histories, which have nowhere to keep it: per factory, per session, in memory. */
const historyStates = new WeakMap<object, Map<string, Map<string, JsonValue>>>();

export function historyBackend(history: BaseChatMessageHistory | BaseListChatMessageHistory, identity: object, sessionKey: SessionKey): Backend {
  let sessions = historyStates.get(identity);
  if (!sessions) {
    sessions = new Map();
    historyStates.set(identity, sessions);
  }
  const id = encodeSessionKey(sessionKey);
  const values = sessions.get(id) ?? new Map<string, JsonValue>();
  sessions.set(id, values);
  return {
    identity,
    read: async (options) => {
      const messages = await history.getMessages();
      return options?.last === undefined ? messages : options.last === 0 ? [] : messages.slice(-options.last);
    },
    count: async () => (await history.getMessages()).length,
    state: {
      get: async (name) => {
        const value = values.get(stateName(name));
        return value === undefined ? undefined : cloneJson(value);
      },
      set: async (name, value) => {
        values.set(stateName(name), stateValue(value));
      },
    },
    save: async (messages) => {
      await history.addMessages(messages);
      return true;
    },
    chatHistory: () => history,
  };
}

export function loadContext(backend: Backend, sessionKey: SessionKey, input: BaseMessage[], config: RunnableConfig): MemoryLoadContext {
  return {
    sessionKey,
    read: (options) => backend.read(options),
    count: () => backend.count(),
    state: backend.state,
    trim: backend.trim,
    input,
    store: backend.store,
    config,
  };
}

/**
 * What a memory strategy sees of one session, built from a store or from any
 * LangChain chat history (a `store.history(key)` is recognized and read through
 * its store). For calling strategies outside the wrapper: tests, classic memory
 * classes, tools.
 */
export function memoryContext(
  source: HistoryStore | BaseChatMessageHistory | BaseListChatMessageHistory,
  sessionKey: SessionKey,
  options: { input?: BaseMessage[]; config?: RunnableConfig } = {},
): MemoryLoadContext {
  // A memoria store's history names its own session: long-term memory scopes by its fields.
  if (isStoreChatMessageHistory(source))
    return loadContext(storeBackend(source.store, source.sessionKey), source.sessionKey, options.input ?? [], options.config ?? {});
  const key = createSessionKey(sessionKey);
  const backend: Backend = "getMessages" in source ? historyBackend(source, source, key) : storeBackend(source, key);
  return loadContext(backend, key, options.input ?? [], options.config ?? {});
}
