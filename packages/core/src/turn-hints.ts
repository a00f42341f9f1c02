import type { AppendOptions, AppendResult, TurnLock } from "./history-store.js";

/*
 * What the wrapper tells a store's append beyond the contract, to save work at the end
 * of a turn. Hints only: a store that ignores them is correct (the wrapper then gives
 * the lock back itself, and a made-up turn id is kept like any other), so they are not
 * in `HistoryStore`'s types. Stores that act on them, every first-party one, take these
 * types from `@memoria/core/store-kit`; the kit's `defineStore` passes them to an engine
 * as `TurnWrite`.
 */

export interface TurnAppendOptions extends AppendOptions {
  /**
   * False when `turnId` was made up for this one call rather than given by the
   * application (the wrapper does so when the call's config has none): it is only
   * repeated to retry a write whose outcome was unknown, so a store that never
   * leaves an outcome unknown (the in-memory one) need not keep it.
   * @default true
   */
  keepTurnId?: boolean;
  /**
   * With `lock`: give the lock back in the same atomic step as the write, saving a
   * round trip at the end of a turn. A store that does says so with `released: true`
   * in its result (the caller then calls `markReleased()` on the lock); a store that
   * cannot ignores it, and the caller's `lock.release()` does the work.
   * @default false
   */
  release?: boolean;
}

export interface TurnAppendResult extends AppendResult {
  /** True when the store gave the write's lock back with it (`release: true`). */
  released?: boolean;
}

export interface ReleasableLock extends TurnLock {
  /**
   * The store gave the lock back with a write (`append(…, { lock, release: true })`
   * resolved with `released: true`): stop renewing, and make `release()` a no-op.
   */
  markReleased?(): void;
}
