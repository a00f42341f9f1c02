import type { BaseMessage } from "@langchain/core/messages";
import {
  type AppendOptions,
  type AppendResult,
  type HistoryStore,
  type JsonValue,
  type ListOptions,
  type LockOptions,
  MemoriaError,
  type ReadOptions,
  type SessionKey,
  type SessionKeyFilter,
  type SessionPage,
  StoreChatMessageHistory,
  StoreClosedError,
  type TurnLock,
  createKeyFilter,
  createSessionKey,
  decodeMessage,
  decodeSessionKey,
  encodeMessages,
  encodeSessionKey,
  keyMatches,
  listLimit,
  loadPeerDependency,
  pollForLock,
  readWindow,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
} from "@memoria/core";
import { type KeyLayout, keyLayout } from "./key-layout.js";
import { APPEND, INDEX, RELEASE, type RedisClient, SET_STATE, TRIM } from "./scripts.js";

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
}

type IORedisModule = { default?: new (url: string, options: object) => RedisClient } & (new (url: string, options: object) => RedisClient);

const CONNECTION_ERRORS = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection is closed|MaxRetriesPerRequest|Reached the max retries|All sentinels are unreachable|Failed to refresh slots cache|Stream isn't writeable/i;

/** A lost connection as STORE_UNAVAILABLE; any other error as it is. */
function unavailable(error: unknown): unknown {
  const message = (error as Error)?.message ?? String(error);
  if (MemoriaError.isInstance(error) || !CONNECTION_ERRORS.test(`${(error as Error)?.name} ${message}`)) return error;
  return new MemoriaError("STORE_UNAVAILABLE", `Redis is unreachable: ${message}.`, { cause: error });
}

const PAGE = 500;

/**
 * A history store in Redis: a list per session, appended by one Lua script
 * (turn id, messages, key and TTL together), read with `LRANGE -n -1`.
 */
export function createRedisStore(options: RedisStoreOptions = {}): HistoryStore {
  const layout: KeyLayout = keyLayout(options.keyPrefix ?? "memoria:");
  const ttl = options.ttlSeconds;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl <= 0)) {
    throw new MemoriaError("INVALID_ARGUMENT", `ttlSeconds must be a whole number of seconds > 0 for Redis, got ${ttl}.`);
  }
  const ttlArg = ttl ?? 0;
  const owned = options.client === undefined;
  let client = options.client;
  let closed = false;

  function redis(): RedisClient {
    if (closed) throw new StoreClosedError("redis");
    if (client) return client;
    const IORedis = loadPeerDependency<IORedisModule>("ioredis", "The Redis store", import.meta.url);
    const Redis = IORedis.default ?? IORedis;
    const created = new Redis(options.url ?? "redis://127.0.0.1:6379", {
      // Fail a command after two reconnect attempts instead of queueing it
      // forever: a turn fails with a clear error while the server is down.
      maxRetriesPerRequest: 2,
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
    });
    // Connection errors reach callers through the failed commands; without a
    // listener ioredis would also log each one as an unhandled error event.
    created.on("error", () => {});
    client = created;
    return created;
  }

  /** Runs `body` against the client, turning lost connections into STORE_UNAVAILABLE. */
  async function guarded<T>(body: (r: RedisClient) => Promise<T>): Promise<T> {
    try {
      return await body(redis());
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** Every session in an index set, a page at a time, from just after `cursor`. */
  async function* members(r: RedisClient, index: string, cursor?: string): AsyncGenerator<string> {
    let from = cursor === undefined ? "-" : `(${cursor}`;
    for (;;) {
      const page = await r.zrangebylex(index, from, "+", "LIMIT", 0, PAGE);
      yield* page;
      if (page.length < PAGE) return;
      from = `(${page[page.length - 1]}`;
    }
  }

  /** Deletes a session's keys and index entries; true if it held anything. */
  async function erase(r: RedisClient, key: SessionKey): Promise<boolean> {
    const id = encodeSessionKey(key);
    const keys = layout.session(id);
    const removed = await r.del(keys.messages, keys.turns, keys.key, keys.state);
    await Promise.all(layout.indexes(key).map((index) => r.zrem(index, id)));
    return removed > 0;
  }

  const store: HistoryStore = {
    name: "redis",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    async read(key: SessionKey, readOptions?: ReadOptions): Promise<BaseMessage[]> {
      const { messages } = layout.session(encodeSessionKey(createSessionKey(key)));
      const last = readWindow(readOptions);
      if (last === 0) return [];
      const items = await guarded((r) => (last === undefined ? r.lrange(messages, 0, -1) : r.lrange(messages, -last, -1)));
      return items.map((item) => decodeMessage(item));
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      const sessionKey = createSessionKey(key);
      const turnId = turnIdOf(appendOptions);
      const payloads = encodeMessages(messages).map((message) => JSON.stringify(message));
      if (payloads.length === 0) return { appended: true };
      const id = encodeSessionKey(sessionKey);
      const keys = layout.session(id);
      return guarded(async (r) => {
        // Indexed first: a crash in between leaves an index entry with no session
        // (skipped and cleaned by list), never a session that erasure cannot find.
        await Promise.all(layout.indexes(sessionKey).map((index) => INDEX.run(r, [index], [id, ttlArg])));
        const done = await APPEND.run(r, [keys.messages, keys.turns, keys.key, keys.state], [turnId, ttlArg, JSON.stringify(sessionKey), ...payloads]);
        return { appended: Number(done) === 1 };
      });
    },

    async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
      const { state } = layout.session(encodeSessionKey(createSessionKey(key)));
      const value = await guarded((r) => r.hget(state, stateName(name)));
      return value === null ? undefined : (JSON.parse(value) as JsonValue);
    },

    async setState(key: SessionKey, name: string, value: JsonValue): Promise<void> {
      const sessionKey = createSessionKey(key);
      const text = JSON.stringify(stateValue(value));
      const id = encodeSessionKey(sessionKey);
      const keys = layout.session(id);
      await guarded(async (r) => {
        await Promise.all(layout.indexes(sessionKey).map((index) => INDEX.run(r, [index], [id, ttlArg])));
        await SET_STATE.run(r, [keys.messages, keys.turns, keys.key, keys.state], [stateName(name), text, ttlArg, JSON.stringify(sessionKey)]);
      });
    },

    async trim(key: SessionKey, trimOptions: { oldest: number }): Promise<number> {
      const { messages } = layout.session(encodeSessionKey(createSessionKey(key)));
      const oldest = trimCount(trimOptions);
      if (oldest === 0) return 0;
      return guarded(async (r) => Number(await TRIM.run(r, [messages], [oldest])));
    },

    async clear(key: SessionKey): Promise<void> {
      const sessionKey = createSessionKey(key);
      await guarded((r) => erase(r, sessionKey));
    },

    async count(key: SessionKey): Promise<number> {
      const { messages } = layout.session(encodeSessionKey(createSessionKey(key)));
      return guarded((r) => r.llen(messages));
    },

    async list(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<SessionPage> {
      const match = createKeyFilter(filter);
      const limit = listLimit(listOptions);
      const [first] = Object.entries(match);
      const index = first ? layout.fieldIndex(first[0], first[1]) : layout.allSessions;
      return guarded(async (r) => {
        const sessions: SessionKey[] = [];
        let last: string | undefined;
        for await (const id of members(r, index, listOptions?.cursor)) {
          const key = decodeSessionKey(id);
          if (!keyMatches(key, match)) continue;
          if ((await r.exists(layout.session(id).key)) === 0) {
            await r.zrem(index, id); // expired or half-written: drop the stale entry
            continue;
          }
          if (sessions.length === limit) return { sessions, cursor: last };
          sessions.push(key);
          last = id;
        }
        return { sessions };
      });
    },

    async delete(filter: SessionKeyFilter): Promise<number> {
      const match = createKeyFilter(filter);
      requireFilterField(match);
      const [field, value] = Object.entries(match)[0] as [string, string];
      return guarded(async (r) => {
        const doomed: SessionKey[] = [];
        for await (const id of members(r, layout.fieldIndex(field, value))) {
          const key = decodeSessionKey(id);
          if (keyMatches(key, match)) doomed.push(key);
        }
        let deleted = 0;
        for (const key of doomed) if (await erase(r, key)) deleted++;
        return deleted;
      });
    },

    history(key: SessionKey) {
      return new StoreChatMessageHistory(store, createSessionKey(key));
    },

    async lock(key: SessionKey, lockOptions: LockOptions = {}): Promise<TurnLock> {
      const sessionKey = createSessionKey(key);
      const lockKey = layout.session(encodeSessionKey(sessionKey)).lock;
      const owner = crypto.randomUUID();
      const ttlMs = Math.max(1, Math.round(lockOptions.ttlMs ?? 60_000));
      return pollForLock(sessionKey, lockOptions, {
        take: () => guarded(async (r) => (await r.set(lockKey, owner, "PX", ttlMs, "NX")) === "OK"),
        release: () => guarded((r) => RELEASE.run(r, [lockKey], [owner])).then(() => undefined),
      });
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (owned && client) await client.quit().catch(() => client?.disconnect());
    },
  };
  return store;
}
