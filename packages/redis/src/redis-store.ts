import type { HistoryStore } from "@memoria/core";
import {
  type EngineSession,
  LOCK_LOST,
  MemoriaError,
  type SessionKey,
  type SessionKeyFilter,
  type StoreEngine,
  StoreUnavailableError,
  decodeSessionKey,
  defineStore,
  keyMatches,
} from "@memoria/core/store-kit";
import { rewriteAppendOnlyFiles } from "./aof-rewrite.js";
import { type KeyLayout, keyLayout } from "./key-layout.js";
import { infoOf, recentSessions } from "./conversations.js";
import { redisConnection } from "./redis-connection.js";
import type { RedisStoreOptions } from "./redis-store-options.js";
import {
  APPEND,
  ERASE,
  INDEX,
  RELEASE,
  RENEW,
  REPLACE_TAIL,
  type RedisClient,
  SET_INFO,
  SET_STATE,
  TAKE_AND_READ,
  TRIM,
  dropStaleEntry,
  isCluster,
} from "./scripts.js";

export type { RedisStoreOptions } from "./redis-store-options.js";

const PAGE = 500;

/**
 * A history store in Redis: a list per session, appended by one Lua script
 * (turn id, messages, key and TTL together), read with `LRANGE -n -1`. The
 * engine below moves strings; `defineStore` does the rest.
 */
export function createRedisStore(options: RedisStoreOptions = {}): HistoryStore {
  const layout: KeyLayout = keyLayout(options.keyPrefix ?? "memoria:");
  const ttl = options.ttlSeconds;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl <= 0)) {
    throw new MemoriaError("INVALID_ARGUMENT", `ttlSeconds must be a whole number of seconds > 0 for Redis, got ${ttl}.`);
  }
  const ttlArg = ttl ?? 0;
  const timeoutMs = options.operationTimeoutMs ?? 10_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw new MemoriaError("INVALID_ARGUMENT", `operationTimeoutMs must be a number of milliseconds >= 0, got ${timeoutMs}.`);
  const connection = redisConnection(options.client, options.url, timeoutMs);
  const { guarded } = connection;
  const redis = () => connection.client();

  /** The session's keys as the append and state scripts take them. */
  const scriptKeys = (id: string): string[] => {
    const k = layout.session(id);
    return [k.messages, k.turns, k.key, k.state, k.lock, k.info];
  };

  /**
   * Prepares a write's index entries (the session's name in each index set and, for
   * an append (`active`), its new activity time) and returns the keys its script
   * takes. On a standalone server the index sets go to the script, which writes
   * them in the same atomic step; a Cluster keeps them in other slots, so there they
   * are written first, each by its own script (a crash in between leaves an index
   * entry with no session, skipped and cleaned by list, never a session that
   * erasure cannot find).
   */
  async function indexedKeys(r: RedisClient, key: SessionKey, id: string, now: number, active: boolean): Promise<string[]> {
    const keys = scriptKeys(id);
    const indexes = layout.indexes(key);
    if (isCluster(r)) {
      await Promise.all(indexes.map((index) => INDEX.run(r, [index, layout.recentOf(index)], [id, ttlArg, now, active ? "1" : ""])));
      return keys;
    }
    for (const index of indexes) keys.push(index, layout.recentOf(index));
    return keys;
  }

  /**
   * Runs a state or info script, which also writes the session's index entries; `LOCK_LOST` if its fence failed.
   * `activeAt`: a last-activity time the write sets (an info write's), which the activity sets take as the session's score.
   */
  async function sessionWrite({ key, id }: EngineSession, fence: string | undefined, script: typeof SET_STATE, args: string[], activeAt?: number) {
    const now = activeAt ?? Date.now();
    const done = await guarded(async (r) =>
      Number(await script.run(r, await indexedKeys(r, key, id, now, activeAt !== undefined), [ttlArg, JSON.stringify(key), now, fence ?? "", id, ...args])),
    );
    return done === -1 ? LOCK_LOST : undefined;
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

  /**
   * Deletes a session's keys and index entries; true if it held anything. One script
   * on a standalone server (see ERASE). A Cluster keeps the index sets in other slots,
   * so there the keys go first and the entries after; a session an append creates in
   * between gets its entries back from its next append, which on a Cluster writes them
   * every time.
   */
  async function erase(r: RedisClient, { key, id }: EngineSession): Promise<boolean> {
    const sessionKeys = scriptKeys(id);
    const entries = layout.indexes(key).flatMap((index) => [index, layout.recentOf(index)]);
    if (!isCluster(r)) return Number(await ERASE.run(r, [...sessionKeys, ...entries], [id])) > 0;
    const removed = await r.del(...sessionKeys);
    await Promise.all(entries.map((set) => r.zrem(set, id)));
    return removed > 0;
  }

  const engine: StoreEngine = {
    name: "redis",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    read: ({ id }, last) => {
      const { messages } = layout.session(id);
      return guarded((r) => (last === undefined ? r.lrange(messages, 0, -1) : r.lrange(messages, -last, -1)));
    },

    async append({ key, id }, payloads, turn) {
      const release = turn.release ? "1" : "";
      const now = Date.now();
      const done = await guarded(async (r) =>
        Number(
          await APPEND.run(r, await indexedKeys(r, key, id, now, true), [
            turn.turnId,
            ttlArg,
            JSON.stringify(key),
            turn.fence ?? "",
            release,
            now,
            id,
            ...payloads,
          ]),
        ),
      );
      if (done === -1) return LOCK_LOST;
      // A repeat of an applied append (0) may find its lock released already: it is given back either way.
      return { appended: done === 1, released: turn.release };
    },

    getState: async ({ id }, name) => (await guarded((r) => r.hget(layout.session(id).state, name))) ?? undefined,
    getAllState: async ({ id }) => Object.entries(await guarded((r) => r.hgetall(layout.session(id).state))),
    setState: (session, name, json, fence) => sessionWrite(session, fence, SET_STATE, [name, json]),
    setStates: (session, values, fence) => sessionWrite(session, fence, SET_STATE, values.flat()),

    info: ({ id }) => guarded((r) => infoOf(r, layout, id)),
    setInfo(session, patch, fence) {
      const pairs: string[] = [];
      if (patch.title !== undefined) pairs.push("ti", patch.title ?? "");
      if (patch.metadata !== undefined) pairs.push("md", patch.metadata ?? "");
      if (patch.createdAt !== undefined) pairs.push("c", String(patch.createdAt));
      if (patch.lastActiveAt !== undefined) pairs.push("a", String(patch.lastActiveAt));
      return sessionWrite(session, fence, SET_INFO, pairs, patch.lastActiveAt);
    },
    recent: (match, page) => guarded((r) => recentSessions(r, layout, match, page)),

    async replaceTail({ id }, tail, fence) {
      const done = Number(await guarded((r) => REPLACE_TAIL.run(r, scriptKeys(id).slice(0, 5), [fence ?? "", tail.count, tail.from, ...tail.payloads])));
      if (done === -1) return LOCK_LOST;
      return done <= -2 ? -2 - done : tail.count;
    },

    trim: ({ id }, oldest) => guarded(async (r) => Number(await TRIM.run(r, [layout.session(id).messages], [oldest]))),
    clear: async (session) => void (await guarded((r) => erase(r, session))),
    count: ({ id }) => guarded((r) => r.llen(layout.session(id).messages)),

    list(match, { after, limit }) {
      const [first] = Object.entries(match);
      const index = first ? layout.fieldIndex(first[0], first[1]) : layout.allSessions;
      return guarded(async (r) => {
        const sessions: EngineSession[] = [];
        for await (const id of members((body) => body(r), index, after)) {
          const keyRecord = layout.session(id).key;
          const written = await r.get(keyRecord); // the key as written, while the session lives
          if (written === null) {
            await dropStaleEntry(r, index, keyRecord, id); // expired or half-written: drop the stale entry
            continue;
          }
          sessions.push({ id, key: JSON.parse(written) });
          if (sessions.length === limit) break;
        }
        return sessions;
      });
    },

    async delete(match: SessionKeyFilter) {
      const [field, value] = Object.entries(match)[0] as [string, string];
      // Each call is bounded by operationTimeoutMs, not the whole erasure: a user may have many sessions.
      const doomed: EngineSession[] = [];
      for await (const id of members(guarded, layout.fieldIndex(field, value))) {
        const key = decodeSessionKey(id);
        if (keyMatches(key, match)) doomed.push({ key, id });
      }
      let deleted = 0;
      for (const session of doomed) if (await guarded((r) => erase(r, session))) deleted++;
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

    lock({ id }, owner, ttlMs) {
      const { lock: lockKey, messages } = layout.session(id);
      return {
        take: () => guarded(async (r) => (await r.set(lockKey, owner, "PX", ttlMs, "NX")) === "OK" || (await r.get(lockKey)) === owner),
        takeAndRead: (last) =>
          guarded(async (r) => ((await TAKE_AND_READ.run(r, [lockKey, messages], [owner, ttlMs, last ?? ""])) as string[] | null) ?? undefined),
        renew: () => guarded(async (r) => Number(await RENEW.run(r, [lockKey], [owner, ttlMs])) === 1),
        release: () => guarded((r) => RELEASE.run(r, [lockKey], [owner])).then(() => undefined),
      };
    },

    close: () => connection.close(),
  };
  return defineStore(engine);
}
