import { LockTimeoutError } from "./errors.js";
import type { LockOptions, TurnLock } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A lock that one owner takes by a conditional write (a row upsert, `SET NX`, a file created exclusively). */
export interface PolledLock {
  /**
   * One try: true when this owner now holds the lock. Where the backend can answer
   * that a try failed although it applied it, the try must also match the owner's
   * own token, so the next one succeeds.
   */
  take(): Promise<boolean>;
  /** Gives the lock back if this owner holds it, and does nothing otherwise. */
  release(): Promise<void>;
}

/**
 * Takes `lock`, calling `take` until it succeeds and waiting a growing, jittered
 * delay (2 ms to 50 ms) between tries. Throws `LockTimeoutError` after
 * `options.waitMs`, the signal's reason when it aborts, or what `take` threw; in
 * each case it first calls `release`, in case a try was applied although it
 * failed or its reply was lost, so an abandoned try never holds the session until
 * the lock expires. Returns a `TurnLock` whose `release` is safe to call twice.
 */
export async function pollForLock(sessionKey: SessionKey, options: LockOptions, lock: PolledLock): Promise<TurnLock> {
  const waitMs = options.waitMs ?? 30_000;
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
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await lock.release();
    },
  };
}
