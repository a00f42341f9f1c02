import { MemoriaError, StoreClosedError, StoreUnavailableError, type WriteOutcome, loadPeerDependency } from "@memoria/core/store-kit";
import type { Db, MongoClient } from "mongodb";
import type { Collections, MarkerDoc, MessageDoc, SessionDoc, StateDoc } from "./documents.js";

export interface MongoStoreOptions {
  /** A connected or unconnected MongoClient; the store does not close it. */
  client?: MongoClient;
  /** e.g. `mongodb://127.0.0.1:27017`; used when no `client` is given. */
  url?: string;
  /** @default "memoria" */
  dbName?: string;
  /** Prefix of the store's collections (`<name>_sessions`, `<name>_messages`, …). @default "memoria" */
  collectionName?: string;
  /** Seconds a session lives after its last write; unset, sessions never expire. `prune()` deletes expired ones. */
  ttlSeconds?: number;
  /**
   * How long the driver waits to find the server, and for any answer on a socket,
   * before the call fails with `STORE_UNAVAILABLE` (a hung or unreachable server).
   * Used when the store creates the client (from `url`).
   * @default 10_000
   */
  operationTimeoutMs?: number;
  /**
   * The lease of the short per-session append lock that orders writes without
   * transactions; renewed while held, so only a dead writer's lock waits it out.
   * @default 10_000
   */
  appendLockTtlMs?: number;
}

type MongoModule = { MongoClient: new (url: string, options?: object) => MongoClient };

/** Driver errors that mean the server could not be reached or answered too late. */
const UNREACHABLE = /^(MongoServerSelectionError|MongoNetworkError|MongoNetworkTimeoutError|MongoTopologyClosedError|MongoOperationTimeoutError)$/;
/** Errors raised before anything was sent: no server was chosen, or the request could not be built. */
const NOT_SENT = /^(MongoServerSelectionError|MongoInvalidArgumentError|BSONError|BSONVersionError|BSONOffsetError)$/;

/**
 * Every error of the driver (unreachable, hung or closed server, a bulk write cut
 * short, a timeout, a server refusing the call) as `StoreUnavailableError`, with what
 * a write may have left behind: `outcome` as the caller judged it, "not-stored" when
 * the request was never sent. memoria's own errors, and anything else (a bug), as they are.
 */
export function unavailable(error: unknown, outcome: WriteOutcome = "unknown"): unknown {
  const name = (error as Error)?.name ?? "";
  if (MemoriaError.isInstance(error) || !/^(Mongo|BSON)/.test(name)) return error;
  const what = UNREACHABLE.test(name) ? "MongoDB is unreachable" : `MongoDB failed the call (${name})`;
  return new StoreUnavailableError(`${what}: ${(error as Error).message}.`, { cause: error, outcome: NOT_SENT.test(name) ? "not-stored" : outcome });
}

export interface MongoConnection {
  /** Connects and creates the indexes, once; a failed start is retried by the next call. */
  start(): Promise<Db>;
  collections(): Promise<Collections>;
  /** Runs `body` on the collections; an unreachable, hung or closed server becomes `STORE_UNAVAILABLE`. */
  guarded<T>(body: (c: Collections) => Promise<T>): Promise<T>;
  /** Closes the client if the store made it. Safe twice. */
  close(): Promise<void>;
}

/**
 * The store's connection: the client (made from `url` unless one is given, and then
 * closed with the store), its indexes created once, and every call's failure typed.
 */
export function mongoConnection(options: MongoStoreOptions, base: string, timeoutMs: number): MongoConnection {
  const owned = !options.client;
  let client = options.client;
  let started: Promise<Db> | undefined;
  let closed = false;

  function start(): Promise<Db> {
    if (closed) return Promise.reject(new StoreClosedError("mongodb"));
    started ??= (async () => {
      if (!client) {
        const mongodb = loadPeerDependency<MongoModule>("mongodb", "The MongoDB store", import.meta.url);
        client = new mongodb.MongoClient(options.url as string, {
          serverSelectionTimeoutMS: timeoutMs,
          connectTimeoutMS: timeoutMs,
          socketTimeoutMS: timeoutMs,
        });
      }
      await client.connect();
      const db = client.db(options.dbName ?? "memoria");
      await Promise.all([
        db.collection(`${base}_messages`).createIndex({ s: 1, q: 1 }, { unique: true }),
        db.collection(`${base}_sessions`).createIndex({ kf: 1, _id: 1 }),
        db.collection(`${base}_sessions`).createIndex({ e: 1 }),
        db.collection(`${base}_sessions`).createIndex({ a: -1, _id: 1 }),
        db.collection(`${base}_sessions`).createIndex({ kf: 1, a: -1, _id: 1 }),
        db.collection(`${base}_turns`).createIndex({ s: 1 }),
        db.collection(`${base}_state`).createIndex({ s: 1 }),
      ]);
      return db;
    })().catch((error: unknown) => {
      started = undefined; // a failed start is retried by the next call
      throw unavailable(error);
    });
    return started;
  }

  async function collections(): Promise<Collections> {
    const db = await start();
    return {
      sessions: db.collection<SessionDoc>(`${base}_sessions`),
      messages: db.collection<MessageDoc>(`${base}_messages`),
      turns: db.collection<MarkerDoc>(`${base}_turns`),
      state: db.collection<StateDoc>(`${base}_state`),
    };
  }

  async function guarded<T>(body: (c: Collections) => Promise<T>): Promise<T> {
    try {
      return await body(await collections());
    } catch (error) {
      throw unavailable(error);
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    if (owned && client) await client.close();
  }

  return { start, collections, guarded, close };
}
