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

/** A server a fault scenario may break; each method present is a fault it can inject. */
export interface FaultyServer {
  /** What `createStore` connects to: a URL, or a path for embedded stores. */
  url: string;
  /** Stops the server cleanly and starts it again on the same port and data. */
  restart?(): Promise<void>;
  /** Kills the server with SIGKILL, as a crash would, and starts it again on the same port and data. */
  crash?(): Promise<void>;
  /** Freezes the server (SIGSTOP), as a hung host would. */
  pause?(): void;
  /** Thaws it (SIGCONT). */
  resume?(): void;
  /** Ends every client connection from the server's side (PostgreSQL's `pg_terminate_backend`). */
  terminateConnections?(): Promise<void>;
  stop(): Promise<void>;
}

/** How the fault suite gets a server it may break, and stores on it. */
export interface FaultSuiteSetup {
  name: string;
  /** A dedicated server (or folder) for the suite: the scenarios break it. */
  start(): Promise<FaultyServer>;
  /** A store on `target` whose server calls time out after `operationTimeoutMs`. */
  createStore(target: string, options: { operationTimeoutMs: number }): Promise<HistoryStore> | HistoryStore;
  /**
   * A module exporting `createStore(target)`, loaded by the child processes of the
   * writer scenarios (a writer killed mid-turn, a frozen writer); run with tsx.
   */
  storeModule?: string;
  /** Why a fault the server cannot take is skipped, by the FaultyServer method it needs. */
  skip?: Partial<Record<keyof FaultyServer, string>>;
}

/** How the privacy suite gets stores of one kind, and reads their raw data. */
export interface PrivacySuiteSetup extends StoreSuiteSetup {
  /**
   * Where `needle` appears in the raw data behind `store` (files and their WAL,
   * table rows, keys and values, documents, append-only logs), as a list of places;
   * empty when nowhere. Leave it out where there is no raw data to scan.
   */
  scan?(store: HistoryStore, needle: string): Promise<string[]>;
}
