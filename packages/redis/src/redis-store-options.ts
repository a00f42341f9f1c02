import type { RedisClient } from "./scripts.js";

export interface RedisStoreOptions {
  /**
   * An ioredis client of any kind: `Redis` (standalone or Sentinel) or `Cluster`.
   * The store does not close it.
   */
  client?: RedisClient;
  /** e.g. `redis://127.0.0.1:6379/0`; used when no `client` is given. */
  url?: string;
  /**
   * Prefix of every key the store writes or deletes; keys outside it are never
   * touched. Without braces (they would break Cluster hash tags).
   * @default "memoria:"
   */
  keyPrefix?: string;
  /**
   * Seconds a session lives after its last append (Redis expiry, renewed on every
   * append); unset, sessions never expire.
   * @default undefined
   */
  ttlSeconds?: number;
  /**
   * How long one call to Redis may take before it fails with `STORE_UNAVAILABLE`
   * (a hung or unreachable server). A write that timed out may still be applied
   * later; its error says `outcome: "unknown"`, and a retry with the same turn id
   * stores it once.
   * @default 10_000
   */
  operationTimeoutMs?: number;
  /**
   * After `delete()`, rewrite the append-only file of every master
   * (`BGREWRITEAOF`) and wait for it, so the erased data is gone from disk too. It
   * rewrites the whole dataset: turn it on where erasure must reach the disk, and
   * mind its cost on a large server.
   * @default false
   */
  rewriteAofOnDelete?: boolean;
}
