import { type HistoryStore, type LockOptions, type SessionKey, type TurnLock, encodeSessionKey } from "@memoria/core";

/**
 * Runs one write of a thread at a time: in this process by a queue per thread
 * (LangGraph saves a step's parallel tasks at once), across processes by the
 * store's turn lock, whose token fences every write made under it.
 */
export class ThreadLocks {
  readonly #queues = new Map<string, Promise<void>>();

  constructor(
    private readonly store: HistoryStore,
    private readonly options: Pick<LockOptions, "ttlMs" | "waitMs">,
  ) {}

  async run<T>(key: SessionKey, work: (lock: TurnLock | undefined) => Promise<T>): Promise<T> {
    const id = encodeSessionKey(key);
    const before = this.#queues.get(id) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const queued = before.then(() => mine);
    this.#queues.set(id, queued);
    await before;
    try {
      const lock = this.store.lock ? await this.store.lock(key, this.options) : undefined;
      try {
        return await work(lock);
      } finally {
        await lock?.release();
      }
    } finally {
      done();
      if (this.#queues.get(id) === queued) this.#queues.delete(id);
    }
  }
}
