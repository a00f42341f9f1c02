import { LockLostError } from "./errors.js";
import type { FencedWriteOptions, LockOptions } from "./history-store.js";
import { type HeldLease, type PolledLock, leaseOf, lockTimes, pollForLock } from "./lock-polling.js";
import type { SessionKey } from "./session-key.js";

interface Held {
  owner: string;
  expiresAt: number;
}

/**
 * Turn locks held in this process's memory, for a store whose data lives there
 * too: the same fencing as a server store's locks, so erasure and a lost lock
 * behave alike on every store. A holder lives in the same process as the lock, so
 * it cannot stall apart from it: leases are taken for their TTL and not renewed
 * (no timer per turn).
 */
export class LocalLeases {
  readonly #held = new Map<string, Held>();

  lock(id: string, sessionKey: SessionKey, options: LockOptions): Promise<HeldLease> {
    const { ttlMs } = lockTimes(options);
    const owner = crypto.randomUUID();
    const take = () => {
      const held = this.#held.get(id);
      if (held && held.owner !== owner && held.expiresAt > Date.now()) return false;
      this.#held.set(id, { owner, expiresAt: Date.now() + ttlMs });
      return true;
    };
    const lock: PolledLock = {
      owner,
      take: async () => take(),
      release: async () => {
        if (this.#held.get(id)?.owner === owner) this.#held.delete(id);
      },
    };
    // A free session is held at once, without the polling loop: the common case.
    if (!options.signal?.aborted && take()) return Promise.resolve(leaseOf(lock, ttlMs));
    return pollForLock(sessionKey, options, lock);
  }

  /** Throws `LockLostError` unless the write's lock (if any) still holds the session. */
  check(id: string, sessionKey: SessionKey, options: FencedWriteOptions | undefined): void {
    const token = options?.lock?.token;
    if (token !== undefined && this.#held.get(id)?.owner !== token) throw new LockLostError(sessionKey);
  }

  /** Drops the session's lock (erasure): its holder's next fenced write is refused. */
  drop(id: string): void {
    this.#held.delete(id);
  }

  clear(): void {
    this.#held.clear();
  }
}
