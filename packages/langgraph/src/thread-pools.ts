import type { BaseMessage } from "@langchain/core/messages";
import { type HistoryStore, InvalidMessageError, type SessionKey, type TurnLock, encodeSessionKey } from "@memoria/core";
import { MessagePool, type Ranges } from "./message-pool.js";

/** How many threads' pools one saver keeps in memory. */
const POOLS_KEPT = 64;

interface Cached {
  pool: MessagePool;
  /** The lock under which the pool was last known to match the store: while it is held, nobody else appends. */
  verifiedUnder?: TurnLock;
}

/**
 * The message pools of the threads this saver worked on last. A pool only grows
 * and its positions never change, so a cached pool stays right for every range it
 * covers; it is read again when a record needs more, or before appending when
 * another process may have appended meanwhile.
 */
export class ThreadPools {
  readonly #cache = new Map<string, Cached>();

  constructor(private readonly store: HistoryStore) {}

  /** The thread's pool, holding at least `length` messages if the store does. */
  async get(key: SessionKey, length: number): Promise<MessagePool> {
    const id = encodeSessionKey(key);
    const cached = this.#cache.get(id);
    if (cached && cached.pool.length >= length) {
      this.#cache.delete(id);
      this.#cache.set(id, cached);
      return cached.pool;
    }
    return this.#load(id, key, undefined);
  }

  forget(filter: (key: string) => boolean): void {
    for (const id of [...this.#cache.keys()]) if (filter(id)) this.#cache.delete(id);
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
    const current = lock !== undefined && this.#cache.get(id)?.verifiedUnder === lock;
    if (!current) {
      if ((await this.store.count(key)) === pool.length) this.#trust(id, lock);
      else {
        pool = await this.#load(id, key, lock);
        located = pool.locate(value);
        if (located.fresh.length === 0) return located.ranges;
      }
    }
    let appended: boolean;
    try {
      ({ appended } = await this.store.append(key, located.fresh, { lock, turnId }));
    } catch (error) {
      // A message memoria's format cannot hold is refused before anything is written.
      if (InvalidMessageError.isInstance(error)) return undefined;
      this.#cache.delete(id);
      throw error;
    }
    if (appended) {
      pool.adopt(located.fresh);
      return located.ranges;
    }
    // An earlier attempt of this put stored them: find them where it did.
    pool = await this.#load(id, key, lock);
    located = pool.locate(value);
    return located.fresh.length === 0 ? located.ranges : undefined;
  }

  #trust(id: string, lock: TurnLock | undefined): void {
    const cached = this.#cache.get(id);
    if (cached) cached.verifiedUnder = lock;
  }

  async #load(id: string, key: SessionKey, lock: TurnLock | undefined): Promise<MessagePool> {
    const pool = new MessagePool(await this.store.read(key));
    this.#cache.delete(id);
    this.#cache.set(id, { pool, verifiedUnder: lock });
    while (this.#cache.size > POOLS_KEPT) this.#cache.delete(this.#cache.keys().next().value as string);
    return pool;
  }
}
