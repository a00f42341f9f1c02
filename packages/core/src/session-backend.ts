import type { BaseChatMessageHistory, BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type HistoryStore, type ReadOptions, stateName, stateValue } from "./history-store.js";
import type { OpenTurn, TurnOptions } from "./open-turn.js";
import { type JsonValue, cloneJson } from "./json-value.js";
import type { MemoryLoadContext, SessionState } from "./memory-strategy.js";
import { type SessionKey, createSessionKey, encodeSessionKey } from "./session-key.js";
import { isStoreChatMessageHistory } from "./store-chat-history.js";

/** The session a turn talks to: reads, an atomic save, state, and, for a store, its turn. */
export interface Backend {
  identity: object;
  store?: HistoryStore;
  read(options?: ReadOptions): Promise<BaseMessage[]>;
  count(): Promise<number>;
  state: SessionState;
  /**
   * Stores the turn atomically; false when its turn id was stored before (nothing
   * written). `last` and `keepTurnId` as `TurnSaveOptions` says.
   */
  save(messages: BaseMessage[], turnId: string, options?: { last?: boolean; keepTurnId?: boolean }): Promise<boolean>;
  /** Opens a turn of the session in its store (`HistoryStore.openTurn`). */
  openTurn?(options: TurnOptions): Promise<OpenTurn>;
  trim?(oldest: number): Promise<number>;
  /**
   * The same session inside `turn`: every write fenced by its lock (refused once the
   * lock is lost), the save the turn's. The turn's `history`, read as `read` says,
   * answers this backend's first read if it asks for just that and nothing was
   * written or trimmed before.
   */
  inTurn?(turn: OpenTurn, read?: ReadOptions): Backend;
  /** The session as a LangChain chat history (`configurable.messageHistory` of the wrapped runnable). */
  chatHistory(): BaseChatMessageHistory | BaseListChatMessageHistory;
}

export function storeBackend(store: HistoryStore, key: SessionKey): Backend {
  return new StoreBackend(store, key);
}

/** A session of a memoria store; a class, so that a turn's two backends (before its turn opens, then inside it) cost two objects, not two dozen closures. */
class StoreBackend implements Backend {
  readonly identity: HistoryStore;
  readonly trim?: (oldest: number) => Promise<number>;
  /** The turn's read, until this backend's first read takes it or the turn writes. */
  #turnRead: ReadOptions | undefined;
  /**
   * The count, from a whole history read with the turn, until this turn writes: the
   * history its prompt is built from (what recall's `skipRecent` counts back from).
   */
  #counted: number | undefined;
  #state: SessionState | undefined;

  constructor(
    readonly store: HistoryStore,
    private readonly key: SessionKey,
    private readonly turn?: OpenTurn,
    turnRead?: ReadOptions,
  ) {
    this.identity = store;
    this.#turnRead = turn && turnRead;
    if (store.capabilities.trim) {
      this.trim = (oldest) => {
        this.#forgetRead();
        return store.trim(key, { oldest });
      };
    }
  }

  /** The turn's history, if it answers a read of `options`: taken when first asked (the in-memory store reads it then). */
  #fromTurn(options: ReadOptions | undefined): BaseMessage[] | undefined {
    const read = this.#turnRead;
    if (!read || options?.last !== read.last || options?.sealed !== read.sealed) return undefined;
    this.#countFromTurn();
    return this.turn?.history;
  }

  /** A whole history read with the turn is also the session's count, until the turn writes. */
  #countFromTurn(): void {
    const read = this.#turnRead;
    if (this.#counted === undefined && read && read.last === undefined && !read.sealed) this.#counted = this.turn?.history?.length;
  }

  #forgetRead(): void {
    this.#turnRead = undefined;
    this.#counted = undefined;
  }

  read(options?: ReadOptions): Promise<BaseMessage[]> {
    const found = this.#fromTurn(options);
    this.#turnRead = undefined;
    return found ? Promise.resolve(found) : this.store.read(this.key, options);
  }

  count(): Promise<number> {
    this.#countFromTurn();
    return this.#counted === undefined ? this.store.count(this.key) : Promise.resolve(this.#counted);
  }

  get state(): SessionState {
    if (this.#state === undefined) {
      const { store, key } = this;
      const fence = this.turn ? { lock: this.turn.lock } : undefined;
      this.#state = { get: (name) => store.getState(key, name), set: (name, value) => store.setState(key, name, value, fence) };
    }
    return this.#state;
  }

  async save(messages: BaseMessage[], turnId: string, options?: { last?: boolean; keepTurnId?: boolean }): Promise<boolean> {
    this.#forgetRead();
    const { turn } = this;
    const result = turn ? await turn.save(messages, { turnId, ...options }) : await this.store.append(this.key, messages, { turnId });
    return result.appended;
  }

  openTurn(options: TurnOptions): Promise<OpenTurn> {
    return this.store.openTurn(this.key, options);
  }

  inTurn(turn: OpenTurn, read?: ReadOptions): Backend {
    return new StoreBackend(this.store, this.key, turn, read);
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
