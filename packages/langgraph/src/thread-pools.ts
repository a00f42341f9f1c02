import type { BaseMessage } from "@langchain/core/messages";
import { type HistoryStore, InvalidMessageError, type SessionKey, type TurnLock, encodeMessages, encodeSessionKey } from "@memoria/core";
import { MessagePool, type Ranges } from "./message-pool.js";

/** How many threads' pools one saver keeps in memory. */
const POOLS_KEPT = 64;

/**
 * The message pools of the threads this saver worked on last. A pool only grows
 * and its positions never change, so a cached pool stays right for every range it
 * covers; it is read again when a record needs more, or before appending when
 * another process appended meanwhile.
 */
export class ThreadPools {
  readonly #pools = new Map<string, MessagePool>();

  constructor(private readonly store: HistoryStore) {}

  /** The thread's pool, holding at least `length` messages if the store does. */
  async get(key: SessionKey, length: number): Promise<MessagePool> {
    const id = encodeSessionKey(key);
    const cached = this.#pools.get(id);
    if (cached && cached.length >= length) {
      this.#pools.delete(id);
      this.#pools.set(id, cached);
      return cached;
    }
    return this.#load(id, key);
  }

  forget(filter: (key: string) => boolean): void {
    for (const id of [...this.#pools.keys()]) if (filter(id)) this.#pools.delete(id);
  }

  /**
   * Stores a channel value as ranges of the pool, appending the messages it does
   * not hold yet, under `lock`, tagged `turnId` so a retried put appends them once.
   * Undefined when memoria's message format cannot hold one of them: the caller
   * keeps that value through LangGraph's serializer instead.
   */
  async keep(key: SessionKey, value: readonly BaseMessage[], lock: TurnLock | undefined, turnId: string): Promise<Ranges | undefined> {
    const id = encodeSessionKey(key);
    let pool = await this.get(key, 0);
    let located = pool.locate(value);
    if (located.fresh.length === 0) return located.ranges;
    try {
      encodeMessages(located.fresh);
    } catch (error) {
      if (InvalidMessageError.isInstance(error)) return undefined;
      throw error;
    }
    if ((await this.store.count(key)) !== pool.length) {
      pool = await this.#load(id, key);
      located = pool.locate(value);
      if (located.fresh.length === 0) return located.ranges;
    }
    let appended: boolean;
    try {
      ({ appended } = await this.store.append(key, located.fresh, { lock, turnId }));
    } catch (error) {
      if (InvalidMessageError.isInstance(error)) return undefined;
      this.#pools.delete(id);
      throw error;
    }
    if (appended) {
      pool.adopt(located.fresh);
      return located.ranges;
    }
    // An earlier attempt of this put stored them: find them where it did.
    pool = await this.#load(id, key);
    located = pool.locate(value);
    return located.fresh.length === 0 ? located.ranges : undefined;
  }

  async #load(id: string, key: SessionKey): Promise<MessagePool> {
    const pool = new MessagePool(await this.store.read(key));
    this.#pools.delete(id);
    this.#pools.set(id, pool);
    while (this.#pools.size > POOLS_KEPT) this.#pools.delete(this.#pools.keys().next().value as string);
    return pool;
  }
}
