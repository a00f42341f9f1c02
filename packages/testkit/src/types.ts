import type { HistoryStore } from "@memoria/core";

/** How the conformance suite gets stores of one kind. */
export interface StoreSuiteSetup {
  /** Shown in test titles, e.g. `"sqlite (file)"`. */
  name: string;
  /** A fresh store. Tests use random session keys, so stores may share a backend. */
  createStore(): Promise<HistoryStore>;
  /** Closes a store made by `createStore` (default: `store.close()`). */
  destroyStore?(store: HistoryStore): Promise<void>;
  /**
   * A second, independent store instance over the same data as `store` (another
   * connection, another file handle), to race two instances. Leave it out when the
   * store has no shared backend (`capabilities.sharedBackend` is false).
   */
  createPeer?(store: HistoryStore): Promise<HistoryStore>;
  /** A store whose sessions expire after `ttlSeconds`; needed when `capabilities.ttl` is true. */
  createStoreWithTtl?(ttlSeconds: number): Promise<HistoryStore>;
  /**
   * Reads hand out deeply frozen messages instead of copies (the in-memory store's
   * `frozen` option): changing one must throw and change nothing stored.
   */
  frozenReads?: boolean;
  /** How many messages the large-session checks write. @default 2_000 */
  largeSessionSize?: number;
}
