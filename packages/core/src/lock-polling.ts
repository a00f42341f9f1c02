import { LockTimeoutError } from "./errors.js";
import type { LockOptions } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `tryAcquire` until it succeeds, waiting a growing, jittered delay (2 ms
 * to 50 ms) between tries, for stores whose lock is taken by a conditional write
 * (a row upsert, `SET NX`). Throws `LockTimeoutError` after `options.waitMs`, or the
 * signal's reason when it aborts.
 */
export async function pollForLock(sessionKey: SessionKey, options: LockOptions, tryAcquire: () => Promise<boolean>): Promise<void> {
  const waitMs = options.waitMs ?? 30_000;
  const deadline = Date.now() + waitMs;
  let delay = 2;
  for (;;) {
    options.signal?.throwIfAborted();
    if (await tryAcquire()) return;
    const left = deadline - Date.now();
    if (left <= 0) throw new LockTimeoutError(sessionKey, waitMs);
    await sleep(Math.min(delay * (0.5 + Math.random()), left));
    delay = Math.min(delay * 2, 50);
  }
}
