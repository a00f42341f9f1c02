import { type HistoryStore, type LockOptions, type SessionKey, type TurnLock, encodeSessionKey } from "@memoria/core";
import { SessionLocks } from "@memoria/core/store-kit";

/**
 * How long a thread's turn lock is kept after a write, for the next one. LangGraph
 * saves a step as a burst (a checkpoint, its tasks' writes, the next checkpoint)
 * with nothing but graph code between; a model call or a tool takes longer, and the
 * lock is given back meanwhile.
 */
const KEEP_MS = 25;

interface Held {
  lock: TurnLock;
  timer?: NodeJS.Timeout;
}

/**
 * Runs one write of a thread at a time: in this process by a queue per thread
 * (LangGraph saves a step's parallel tasks at once), across processes by the
 * store's turn lock, whose token fences every write made under it. The lock is kept
 * for a burst of writes and given back once the thread goes quiet, so a step costs
 * one lock, not one per write. A process that dies holding one leaves it to expire
 * (its lease, `lock.ttlMs`), as a turn that dies does.
 */
export class ThreadLocks {
  readonly #local = new SessionLocks();
  readonly #held = new Map<string, Held>();
  /** A script that ends right after a run gives its kept locks back instead of leaving them to expire. */
  readonly #onExit = () => void this.releaseAll();

  constructor(
    private readonly store: HistoryStore,
    private readonly options: Pick<LockOptions, "ttlMs" | "waitMs">,
  ) {}

  async run<T>(key: SessionKey, work: (lock: TurnLock | undefined) => Promise<T>): Promise<T> {
    const id = encodeSessionKey(key);
    const releaseLocal = await this.#local.acquire(id);
    try {
      const held = await this.#take(id, key);
      try {
        return await work(held?.lock);
      } catch (error) {
        // After a failure nothing is assumed about the lock: give it back now.
        if (held) await this.#giveBack(id, held);
        throw error;
      }
    } finally {
      releaseLocal();
      // Kept for a next write unless one is already queued (it takes the lock as it is).
      if (!this.#local.isBusy(id)) this.#keepForAWhile(id);
    }
  }

  /** Gives back every lock kept for a next write (for a process about to exit). */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.#held.entries()].map(([id, held]) => this.#giveBack(id, held)));
  }

  async #take(id: string, key: SessionKey): Promise<Held | undefined> {
    const kept = this.#held.get(id);
    if (kept) {
      clearTimeout(kept.timer);
      if (!kept.lock.lost) return kept;
      await this.#giveBack(id, kept);
    }
    if (!this.store.lock) return undefined;
    const held: Held = { lock: await this.store.lock(key, this.options) };
    this.#held.set(id, held);
    if (this.#held.size === 1) process.on("beforeExit", this.#onExit);
    return held;
  }

  #keepForAWhile(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    clearTimeout(held.timer);
    held.timer = setTimeout(() => void this.#giveBack(id, held), KEEP_MS);
    held.timer.unref();
  }

  async #giveBack(id: string, held: Held): Promise<void> {
    clearTimeout(held.timer);
    if (this.#held.get(id) === held) this.#held.delete(id);
    if (this.#held.size === 0) process.off("beforeExit", this.#onExit);
    await held.lock.release();
  }
}
