import type { BaseMessage } from "@langchain/core/messages";
import {
  type AppendOptions,
  type AppendResult,
  type HistoryStore,
  type InfoPage,
  type InfoPatch,
  type JsonValue,
  type ListOptions,
  type LockOptions,
  MemoriaError,
  type ReadOptions,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  type SessionPage,
  type TailReplacement,
  StoreChatMessageHistory,
  type FencedWriteOptions,
  LockLostError,
  StoreUnavailableError,
  type TurnLock,
  changedUnderEdit,
  checkInfoPatch,
  checkTail,
  createKeyFilter,
  createSessionKey,
  decodeMessages,
  decodeSessionKey,
  encodePayloads,
  encodeSessionKey,
  keyMatches,
  listedBy,
  listLimit,
  namedValues,
  lockTimes,
  pollForLock,
  readWindow,
  sessionKeyId,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
  refuseSealed,
} from "@memoria/core";
import { rewriteAppendOnlyFiles } from "./aof-rewrite.js";
import { type KeyLayout, keyLayout } from "./key-layout.js";
import { infoOf, recentSessions } from "./conversations.js";
import { redisConnection } from "./redis-connection.js";
import type { RedisStoreOptions } from "./redis-store-options.js";
import { APPEND, INDEX, RELEASE, RENEW, REPLACE_TAIL, type RedisClient, SET_INFO, SET_STATE, TRIM } from "./scripts.js";

export type { RedisStoreOptions } from "./redis-store-options.js";

const PAGE = 500;

const isCluster = (client: RedisClient): boolean => (client as { isCluster?: boolean }).isCluster === true;

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
  const timeoutMs = options.operationTimeoutMs ?? 10_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new MemoriaError("INVALID_ARGUMENT", `operationTimeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}.`);
  const connection = redisConnection(options.client, options.url, timeoutMs);
  const { guarded } = connection;
  const redis = () => connection.client();

  /** The session's keys as the append and state scripts take them, and the write's fencing token. */
  function scriptKeys(id: string, fence: FencedWriteOptions | undefined): { keys: string[]; token: string } {
    const k = layout.session(id);
    return { keys: [k.messages, k.turns, k.key, k.state, k.lock, k.info], token: fence?.lock?.token ?? "" };
  }

  /** The session's index writes: its name in each index set and, for an append (`active`), its new activity time. */
  function indexWrites(r: RedisClient, key: SessionKey, id: string, now: number, active: boolean): Promise<unknown[]> {
    return Promise.all(layout.indexes(key).map((index) => INDEX.run(r, [index, layout.recentOf(index)], [id, ttlArg, now, active ? "1" : ""])));
  }

  /** Runs a state or info script after the session's index writes; rejects with LockLostError if its fence failed. */
  async function sessionWrite(key: SessionKey, fence: FencedWriteOptions | undefined, script: typeof SET_STATE, args: string[]): Promise<void> {
    const id = encodeSessionKey(key);
    const { keys, token } = scriptKeys(id, fence);
    const now = Date.now();
    const done = await guarded(async (r) => {
      await indexWrites(r, key, id, now, false);
      return Number(await script.run(r, keys, [ttlArg, JSON.stringify(key), now, token, ...args]));
    });
    if (done === -1) throw new LockLostError(key);
  }

  /** Every session in an index set, a page at a time (one `call` per page), from just after `cursor`. */
  async function* members(call: <T>(body: (r: RedisClient) => Promise<T>) => Promise<T>, index: string, cursor?: string): AsyncGenerator<string> {
    let from = cursor === undefined ? "-" : `(${cursor}`;
    for (;;) {
      const page = await call((r) => r.zrangebylex(index, from, "+", "LIMIT", 0, PAGE));
      yield* page;
      if (page.length < PAGE) return;
      from = `(${page[page.length - 1]}`;
    }
  }

  /** Deletes a session's keys and index entries; true if it held anything. */
  async function erase(r: RedisClient, key: SessionKey): Promise<boolean> {
    const id = encodeSessionKey(key);
    const keys = layout.session(id);
    const removed = await r.del(keys.messages, keys.turns, keys.key, keys.state, keys.lock, keys.info);
    await Promise.all(layout.indexes(key).flatMap((index) => [r.zrem(index, id), r.zrem(layout.recentOf(index), id)]));
    return removed > 0;
  }

  const store: HistoryStore = {
    name: "redis",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    async read(key: SessionKey, readOptions?: ReadOptions): Promise<BaseMessage[]> {
      const { messages } = layout.session(sessionKeyId(key));
      const last = readWindow(readOptions);
      if (last === 0) return [];
      const items = await guarded((r) => (last === undefined ? r.lrange(messages, 0, -1) : r.lrange(messages, -last, -1)));
      return refuseSealed(key, decodeMessages(items), readOptions);
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      const sessionKey = createSessionKey(key);
      const turnId = turnIdOf(appendOptions);
      const payloads = encodePayloads(messages);
      if (payloads.length === 0) return { appended: true };
      const id = encodeSessionKey(sessionKey);
      const { keys, token } = scriptKeys(id, appendOptions);
      const release = appendOptions?.release === true && token !== "" ? "1" : "";
      const done = await guarded(async (r) => {
        // Indexed first: a crash in between leaves an index entry with no session
        // (skipped and cleaned by list), never a session that erasure cannot find.
        // One connection runs commands in the order sent, so the index writes and the
        // append go out together (one round trip); a Cluster may route them to
        // different nodes, so there the append waits for the index.
        const now = Date.now();
        const indexed = indexWrites(r, sessionKey, id, now, true);
        if (isCluster(r)) await indexed;
        const appended = APPEND.run(r, keys, [turnId, ttlArg, JSON.stringify(sessionKey), token, release, now, ...payloads]);
        await Promise.all([indexed, appended.catch(() => undefined)]);
        return Number(await appended);
      });
      if (done === -1) throw new LockLostError(sessionKey);
      // A repeat of an applied append (0) may find its lock released already: it is given back either way.
      return release ? { appended: done === 1, released: true } : { appended: done === 1 };
    },

    async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
      const { state } = layout.session(encodeSessionKey(createSessionKey(key)));
      const value = await guarded((r) => r.hget(state, stateName(name)));
      return value === null ? undefined : (JSON.parse(value) as JsonValue);
    },

    async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
      const { state } = layout.session(encodeSessionKey(createSessionKey(key)));
      const values = await guarded((r) => r.hgetall(state));
      return namedValues(Object.keys(values).sort().map((name) => [name, JSON.parse(values[name] as string) as JsonValue]));
    },

    async setState(key: SessionKey, name: string, value: JsonValue, writeOptions?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      const checkedName = stateName(name);
      const text = JSON.stringify(stateValue(value));
      await sessionWrite(sessionKey, writeOptions, SET_STATE, [checkedName, text]);
    },

    async info(key: SessionKey): Promise<SessionInfo | undefined> {
      const id = encodeSessionKey(createSessionKey(key));
      return guarded((r) => infoOf(r, layout, id));
    },

    async setInfo(key: SessionKey, patch: InfoPatch, writeOptions?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      const checked = checkInfoPatch(patch);
      const pairs: string[] = [];
      if (checked.title !== undefined) pairs.push("ti", checked.title ?? "");
      if (checked.metadata !== undefined) pairs.push("md", checked.metadata ?? "");
      await sessionWrite(sessionKey, writeOptions, SET_INFO, pairs);
    },

    recent(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<InfoPage> {
      return guarded((r) => recentSessions(r, layout, filter, listOptions));
    },

    async replaceTail(key: SessionKey, tail: TailReplacement, writeOptions?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      checkTail(tail);
      const payloads = encodePayloads(tail.messages);
      const { keys, token } = scriptKeys(encodeSessionKey(sessionKey), writeOptions);
      const done = Number(await guarded((r) => REPLACE_TAIL.run(r, keys.slice(0, 5), [token, tail.count, tail.from, ...payloads])));
      if (done === -1) throw new LockLostError(sessionKey);
      if (done <= -2) throw changedUnderEdit(-2 - done, tail.count);
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
        for await (const id of members((body) => body(r), index, listOptions?.cursor)) {
          const key = decodeSessionKey(id);
          if (!listedBy(key, match)) continue;
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
      // Each call is bounded by operationTimeoutMs, not the whole erasure: a user may have many sessions.
      const doomed: SessionKey[] = [];
      for await (const id of members(guarded, layout.fieldIndex(field, value))) {
        const key = decodeSessionKey(id);
        if (keyMatches(key, match)) doomed.push(key);
      }
      let deleted = 0;
      for (const key of doomed) if (await guarded((r) => erase(r, key))) deleted++;
      if (options.rewriteAofOnDelete) {
        // A rewrite of the whole dataset: it has its own limit, not operationTimeoutMs.
        await rewriteAppendOnlyFiles(redis()).catch((error: unknown) => {
          throw new StoreUnavailableError(
            `The ${deleted} sessions were erased, but rewriting the append-only file failed, so they may remain on disk until the next rewrite: ${(error as Error)?.message ?? error}.`,
            { cause: error },
          );
        });
      }
      return deleted;
    },

    history(key: SessionKey) {
      return new StoreChatMessageHistory(store, createSessionKey(key));
    },

    async lock(key: SessionKey, lockOptions: LockOptions = {}): Promise<TurnLock> {
      const sessionKey = createSessionKey(key);
      const lockKey = layout.session(encodeSessionKey(sessionKey)).lock;
      const owner = crypto.randomUUID();
      const { ttlMs } = lockTimes(lockOptions);
      return pollForLock(sessionKey, lockOptions, {
        owner,
        take: () => guarded(async (r) => (await r.set(lockKey, owner, "PX", ttlMs, "NX")) === "OK" || (await r.get(lockKey)) === owner),
        renew: () => guarded(async (r) => Number(await RENEW.run(r, [lockKey], [owner, ttlMs])) === 1),
        release: () => guarded((r) => RELEASE.run(r, [lockKey], [owner])).then(() => undefined),
      });
    },

    close: () => connection.close(),
  };
  return store;
}
