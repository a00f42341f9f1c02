/**
 * In-process turn locks, one queue per session id. A turn holds its session's
 * lock from reading history to saving its messages, so the next turn of that
 * session reads what the previous one wrote. Sessions never wait on each other.
 *
 * Each session's queue is a promise chain: a new holder's turn starts when the
 * tail settles, and becomes the new tail. The map entry is removed when the last
 * holder releases, so idle sessions cost nothing.
 */
export class SessionLocks {
  readonly #tails = new Map<string, Promise<void>>();

  /** True while a turn of `id` holds or waits for the lock. */
  isBusy(id: string): boolean {
    return this.#tails.has(id);
  }

  /**
   * Waits for the session's turn and resolves with a release function. If
   * `signal` aborts while waiting, rejects with its reason and gives up the place
   * in the queue once it comes round, so later turns are not stuck.
   */
  async acquire(id: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const previous = this.#tails.get(id);
    let releaseMine!: () => void;
    const mine = new Promise<void>((resolve) => {
      releaseMine = resolve;
    });
    const tail = previous ? previous.then(() => mine) : mine;
    this.#tails.set(id, tail);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      releaseMine();
      if (this.#tails.get(id) === tail) this.#tails.delete(id);
    };
    if (!previous) return release;
    if (!signal) {
      await previous;
      return release;
    }
    return new Promise<() => void>((resolve, reject) => {
      const onAbort = () => {
        previous.then(release);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      previous.then(() => {
        signal.removeEventListener("abort", onAbort);
        if (!signal.aborted) resolve(release);
      });
    });
  }
}
