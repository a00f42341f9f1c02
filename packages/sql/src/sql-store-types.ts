import type { HistoryStore, RecallIndex } from "@memoria/core";

/** Options every SQL store takes. */
export interface SqlStoreOptions {
  /**
   * Prefix of the store's table names, so several stores (or apps) can share a
   * database. Lower-case letters, digits and underscores.
   * @default "memoria_"
   */
  tablePrefix?: string;
  /**
   * Seconds a session lives after its last append, by the database's clock;
   * unset, sessions never expire. Expired sessions read as empty at once and are
   * deleted by `prune()`.
   * @default undefined
   */
  ttlSeconds?: number;
}

/** A SQL history store: the `HistoryStore` contract, with its own recall index. */
export interface SqlHistoryStore extends HistoryStore {
  /** Deletes expired sessions and locks, in batches (`batchSize`, default 500); resolves with the number of sessions deleted. */
  prune(options?: { batchSize?: number }): Promise<number>;
  /** Runs the schema migrations now, instead of on first use. */
  ready(): Promise<void>;
  /**
   * Recall memory's index in this database (sqlite-vec on SQLite; an in-process
   * ranking on PostgreSQL): its rows are erased with their sessions. `recallMemory`
   * uses it by default.
   */
  recallIndex(): RecallIndex;
}
