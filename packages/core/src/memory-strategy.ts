import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { HistoryStore, ReadOptions } from "./history-store.js";
import type { JsonValue } from "./json-value.js";
import type { SessionKey } from "./session-key.js";

/** A session's derived state, as a strategy sees it. */
export interface SessionState {
  get(name: string): Promise<JsonValue | undefined>;
  set(name: string, value: JsonValue): Promise<void>;
}

export interface MemoryLoadContext {
  readonly sessionKey: SessionKey;
  /** Reads the session's stored messages; pass `last` to read only the tail. */
  read(options?: ReadOptions): Promise<BaseMessage[]>;
  /** How many messages the session holds. */
  count(): Promise<number>;
  /**
   * Derived state kept with the session: in the store when there is one (it
   * persists, expires and is erased with the session); in this process's memory
   * for LangChain histories from `getMessageHistory`.
   */
  readonly state: SessionState;
  /** Removes the session's oldest messages, where the store can (`HistoryStore.trim`). */
  readonly trim?: (oldest: number) => Promise<number>;
  /** The messages this turn brings in (already part of the prompt; not yet stored). */
  readonly input: readonly BaseMessage[];
  /** The store, when the wrapper was given one (strategies keep derived state there). */
  readonly store?: HistoryStore;
  readonly config: RunnableConfig;
}

export interface MemorySaveContext extends MemoryLoadContext {
  /** Exactly the messages this turn stored: its input, then its output. */
  readonly added: readonly BaseMessage[];
}

/**
 * Decides what of a session's history reaches the prompt, and what extra state a
 * turn writes. `load` should read only what it needs (`read({ last })`); the
 * wrapper calls it once per turn, under the session's turn lock.
 */
export interface MemoryStrategy {
  readonly name: string;
  /** A read-only view: the wrapper stores nothing of its turns. */
  readonly readonly?: boolean;
  /** The messages to put in the prompt's history slot, oldest first. */
  load(context: MemoryLoadContext): Promise<BaseMessage[]>;
  /** Runs after the turn's messages were stored, still under the turn lock (unless `afterSaveUnlocked`). */
  afterSave?(context: MemorySaveContext): Promise<void>;
  /**
   * True when `afterSave` writes nothing under the turn's lock (it only hands work
   * to the background): the store may then give the lock back with the append,
   * as it does for a strategy without `afterSave`.
   */
  readonly afterSaveUnlocked?: boolean;
  /**
   * The read `load` always starts with, before it reads, trims or writes anything
   * else (`{}`: the whole history; `{ last: n }`: a window). The wrapper may then
   * take it with the turn lock, in one step where the store can (one round trip
   * fewer a turn on Redis and PostgreSQL), and hand it to that first `read`; a whole
   * history taken so also answers `count()` until the turn writes. Declaring it is
   * never wrong, only wasted when the first read asks for something else: the lock's
   * read is handed only to a read asking for the same, before any write or trim.
   */
  readonly firstRead?: ReadOptions;
}

const wholeHistories = new WeakSet<MemoryStrategy>();

/** The default strategy: the whole stored history. */
export function wholeHistory(): MemoryStrategy {
  const strategy: MemoryStrategy = {
    name: "whole-history",
    load: ({ read }) => read(),
    firstRead: {},
  };
  wholeHistories.add(strategy);
  return strategy;
}

/** True for a strategy made by `wholeHistory()`: the wrapper may then read the history and the input as one array. */
export function isWholeHistory(strategy: MemoryStrategy): boolean {
  return wholeHistories.has(strategy);
}
