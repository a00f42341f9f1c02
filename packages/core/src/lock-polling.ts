import { LockTimeoutError, MemoriaError } from "./errors.js";
import { DEFAULT_LOCK_TTL_MS, DEFAULT_LOCK_WAIT_MS, type LockOptions, type TurnLock } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A lock that one owner takes by a conditional write (a row upsert, `SET NX`, a file created exclusively). */
export interface PolledLock {
  /** The owner's token, written by `take` and compared by `renew`, `release` and fenced writes. */
  readonly owner: string;
  /**
   * One try: true when this owner now holds the lock. Where the backend can answer
   * that a try failed although it applied it, the try must also match the owner's
   * own token, so the next one succeeds.
   */
  take(): Promise<boolean>;
  /** Gives the lock back if this owner holds it, and does nothing otherwise. */
  release(): Promise<void>;
  /**
   * Extends the lease by the TTL if this owner still holds the lock; false when it
   * does not (another owner took it after it expired, or it was erased). Leave it
   * out where a holder cannot stall apart from the lock (a lock in the holder's own
   * memory): the lease is then not renewed.
   */
  renew?(): Promise<boolean>;
}

/** Checks lock options, returning the TTL and the wait with defaults filled in. */
export function lockTimes(options: LockOptions): { ttlMs: number; waitMs: number } {
  const ttlMs = options.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  if (!Number.isFinite(ttlMs) || ttlMs < 1)
    throw new MemoriaError("INVALID_ARGUMENT", `Lock option "ttlMs" must be a number of milliseconds >= 1, got ${ttlMs}.`);
  if (!Number.isFinite(waitMs) || waitMs < 0)
    throw new MemoriaError("INVALID_ARGUMENT", `Lock option "waitMs" must be a number of milliseconds >= 0, got ${waitMs}.`);
  return { ttlMs: Math.round(ttlMs), waitMs };
}

/** A held lease, as the kit holds it: a turn lock that a write can give back with itself. */
export interface HeldLease extends TurnLock {
  /** The store gave the lock back with a write (a turn's `last` save): stop renewing, and make `release()` a no-op. */
  markReleased(): void;
}

/**
 * A held lock as a lease: renewed every third of its TTL while held, so a turn of
 * any length keeps it. A renewal that finds another owner, or that cannot reach the
 * backend before the lease ends, marks it `lost` and stops; the store's fenced
 * write then refuses the turn, so losing a lock is never silent.
 */
class Lease implements HeldLease {
  #lost = false;
  #released = false;
  #renewing = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #confirmedAt = Date.now();

  constructor(
    private readonly lock: PolledLock,
    private readonly ttlMs: number,
  ) {
    if (lock.renew) {
      this.#timer = setInterval(() => void this.#renew(), Math.max(1, Math.floor(ttlMs / 3)));
      this.#timer.unref?.();
    }
  }

  get token(): string {
    return this.lock.owner;
  }

  get lost(): boolean {
    return this.#lost;
  }

  async #renew(): Promise<void> {
    if (this.#released || this.#lost || this.#renewing) return; // one renewal at a time
    this.#renewing = true;
    const asked = Date.now();
    try {
      if (await this.lock.renew?.()) this.#confirmedAt = asked;
      else if (!this.#released) this.#lose();
    } catch {
      if (Date.now() - this.#confirmedAt >= this.ttlMs) this.#lose(); // unreachable for a whole lease
    } finally {
      this.#renewing = false;
    }
  }

  #lose(): void {
    this.#lost = true;
    clearInterval(this.#timer);
  }

  markReleased(): void {
    this.#released = true;
    clearInterval(this.#timer);
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.markReleased();
    await this.lock.release().catch(() => undefined); // a lock that cannot be released expires with its lease
  }
}

/** `lock` as a held, renewed lease: for a caller that took it in one try of its own. */
export function leaseOf(lock: PolledLock, ttlMs: number): HeldLease {
  return new Lease(lock, ttlMs);
}

/**
 * Takes `lock`, calling `take` until it succeeds and waiting a growing, jittered
 * delay (2 ms to 50 ms) between tries. Throws `LockTimeoutError` after
 * `options.waitMs`, the signal's reason when it aborts, or what `take` threw; in
 * each case it first calls `release`, in case a try was applied although it
 * failed or its reply was lost, so an abandoned try never holds the session until
 * the lock expires. Returns the held lock as a renewed lease.
 */
export async function pollForLock(sessionKey: SessionKey, options: LockOptions, lock: PolledLock): Promise<HeldLease> {
  const { ttlMs, waitMs } = lockTimes(options);
  const deadline = Date.now() + waitMs;
  let delay = 2;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      if (await lock.take()) break;
      const left = deadline - Date.now();
      if (left <= 0) throw new LockTimeoutError(sessionKey, waitMs);
      await sleep(Math.min(delay * (0.5 + Math.random()), left));
      delay = Math.min(delay * 2, 50);
    }
  } catch (error) {
    await lock.release().catch(() => undefined);
    throw error;
  }
  return new Lease(lock, ttlMs);
}
