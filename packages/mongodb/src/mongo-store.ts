import {
  type EngineSession,
  type HistoryStore,
  MemoriaError,
  type StoreEngine,
  StoreUnavailableError,
  type WriteOutcome,
  defineStore,
} from "@memoria/core/store-kit";
import type { Filter } from "mongodb";
import { infoOf, liveMatching, recentSessions } from "./conversations.js";
import { sessionDocuments } from "./session-documents.js";
import { NO_INFO, type SessionDoc } from "./documents.js";
import { lockCalls } from "./session-locks.js";
import { type MongoStoreOptions, mongoConnection, unavailable } from "./mongo-connection.js";

export type { MongoStoreOptions } from "./mongo-connection.js";

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,40}$/;

export interface MongoHistoryStore extends HistoryStore {
  /** Deletes expired sessions with their messages; resolves with how many sessions. */
  prune(): Promise<number>;
  /** Creates the indexes now, instead of on first use. */
  ready(): Promise<void>;
}

/**
 * A history store in MongoDB: one document per message keyed by (session, seq),
 * appended without multi-document transactions (so a standalone server works):
 * appends of a session take a lock field on its session document, and a turn
 * becomes visible only when the session's committed count `n` moves past it.
 * The engine below moves strings; `defineStore` does the rest.
 */
export function createMongoStore(options: MongoStoreOptions): MongoHistoryStore {
  const base = options.collectionName ?? "memoria";
  if (!NAME.test(base)) throw new MemoriaError("INVALID_ARGUMENT", `collectionName must match ${NAME}, got ${JSON.stringify(base)}.`);
  const ttlMs = options.ttlSeconds === undefined ? undefined : options.ttlSeconds * 1000;
  if (ttlMs !== undefined && !(ttlMs > 0)) throw new MemoriaError("INVALID_ARGUMENT", `ttlSeconds must be > 0, got ${options.ttlSeconds}.`);
  if (!options.client && !options.url) throw new MemoriaError("INVALID_ARGUMENT", "createMongoStore needs a `client` or a `url`.");
  const timeoutMs = options.operationTimeoutMs ?? 10_000;
  const appendLockTtlMs = options.appendLockTtlMs ?? 10_000;
  const { collections, guarded, start, close } = mongoConnection(options, base, timeoutMs);

  const { created, alive, expiry, withAppendLock, erase, wipe, settle, session, visibleCount } = sessionDocuments(collections, ttlMs, appendLockTtlMs);

  const engine: StoreEngine = {
    name: "mongodb",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    read: ({ id }, last) =>
      guarded(async (c) => {
        const doc = await session(c, id);
        if (!doc) return [];
        const n = await visibleCount(c, doc);
        if (n === 0) return [];
        const base = doc.b ?? 0;
        const from = last === undefined ? base : Math.max(base, n - last);
        const rows = await c.messages
          .find({ s: doc._id, q: { $gte: from, $lt: n } }, { projection: { p: 1, _id: 0 } })
          .sort({ q: 1 })
          .toArray();
        return rows.map((row) => row.p);
      }),

    async append({ key }, payloads, turn) {
      // Until its marker is written, a failed turn is rolled back by the next writer; after, it is completed.
      let outcome: WriteOutcome = "not-stored";
      try {
        return await withAppendLock(key, turn.fence, async (doc, owner) => {
          const c = await collections();
          const n = await settle(c, doc);
          const marker = `${doc._id}\u0000${turn.turnId}`;
          if (await c.turns.findOne({ _id: marker })) return { appended: false };
          const to = n + payloads.length;
          await c.sessions.updateOne({ _id: doc._id }, { $set: { pending: { t: turn.turnId, from: n, to } } });
          await c.messages.insertMany(
            payloads.map((p, i) => ({ s: doc._id, q: n + i, p })),
            { ordered: true },
          );
          outcome = "unknown";
          await c.turns.insertOne({ _id: marker, s: doc._id });
          // The commit, only while this owner still holds the append lock: the turn becomes visible.
          const now = Date.now();
          await c.sessions.updateOne({ _id: doc._id, "lock.o": owner } as Filter<SessionDoc>, {
            $set: { n: to, pending: null, e: expiry(), c: doc.c ?? now, a: now },
          });
          return { appended: true };
        });
      } catch (error) {
        throw unavailable(error, outcome);
      }
    },

    getState: ({ id }, name) =>
      guarded(async (c) => {
        const doc = await session(c, id);
        return doc ? (await c.state.findOne({ _id: `${doc._id}\u0000${name}` }))?.v : undefined;
      }),

    getAllState: ({ id }) =>
      guarded(async (c) => {
        const doc = await session(c, id);
        const rows = doc ? await c.state.find({ s: doc._id }).toArray() : [];
        return rows.map((row) => [row._id.slice(row.s.length + 1), row.v] as const);
      }),

    setState: ({ key }, name, v, fence) =>
      guarded((c) =>
        withAppendLock(key, fence, async (doc) => {
          await settle(c, doc);
          await c.state.updateOne({ _id: `${doc._id}\u0000${name}` }, { $set: { s: doc._id, v } }, { upsert: true });
          await c.sessions.updateOne({ _id: doc._id }, { $set: { e: expiry(), ...created(doc) } });
        }),
      ),

    info: ({ id }) =>
      guarded(async (c) => {
        const doc = await session(c, id);
        // Counted as a read counts: with a pending turn whose marker is stored.
        return doc ? infoOf({ ...doc, n: await visibleCount(c, doc) }) : undefined;
      }),

    setInfo({ key }, patch, fence) {
      const changes: Partial<SessionDoc> = {};
      if (patch.title !== undefined) changes.ti = patch.title;
      if (patch.metadata !== undefined) changes.md = patch.metadata;
      if (patch.createdAt !== undefined) changes.c = patch.createdAt;
      if (patch.lastActiveAt !== undefined) changes.a = patch.lastActiveAt;
      return guarded((c) =>
        withAppendLock(key, fence, async (doc) => {
          await settle(c, doc);
          await c.sessions.updateOne({ _id: doc._id }, { $set: { e: expiry(), ...created(doc), ...changes } });
        }),
      );
    },

    recent: (match, page) => guarded((c) => recentSessions(c.sessions, match, page)),

    /**
     * Without multi-document transactions, the kept prefix is copied after the
     * committed messages together with the new ones (as a pending turn a crash
     * rolls back), then one update of the session document moves the window onto
     * the copy, and the old documents are deleted. O(kept prefix) copies: an edit
     * near the end of a long session costs that much.
     */
    replaceTail: ({ key }, tail, fence) =>
      guarded((c) =>
        withAppendLock(key, fence, async (doc, owner) => {
          const n = await settle(c, doc);
          const base = doc.e === 0 ? n : (doc.b ?? 0);
          if (n - base !== tail.count) return n - base;
          if (tail.from === n - base && tail.payloads.length === 0) return tail.count; // nothing to change
          const kept = await c.messages
            .find({ s: doc._id, q: { $gte: base, $lt: base + tail.from } }, { projection: { p: 1, _id: 0 } })
            .sort({ q: 1 })
            .toArray();
          const rows = [...kept.map((row) => row.p), ...tail.payloads].map((p, i) => ({ s: doc._id, q: n + i, p }));
          await c.sessions.updateOne({ _id: doc._id }, { $set: { pending: { t: "\u0000edit", from: n, to: n + rows.length } } });
          if (rows.length > 0) await c.messages.insertMany(rows, { ordered: true });
          const moved = await c.sessions.updateOne({ _id: doc._id, "lock.o": owner } as Filter<SessionDoc>, {
            $set: { b: n, n: n + rows.length, pending: null, e: doc.e === 0 ? expiry() : doc.e },
          });
          if (moved.matchedCount === 0)
            throw new StoreUnavailableError(`The append lock of session ${doc._id} was lost while held; the edit was rolled back.`, { outcome: "not-stored" });
          await c.messages.deleteMany({ s: doc._id, q: { $lt: n } });
          return tail.count;
        }),
      ),

    trim: ({ key }, oldest) =>
      guarded((c) =>
        withAppendLock(key, undefined, async (doc) => {
          const n = await settle(c, doc);
          const base = doc.b ?? 0;
          const to = Math.min(n, base + oldest);
          // The base moves first: a crash leaves unreachable documents, never a gap readers would see.
          await c.sessions.updateOne({ _id: doc._id }, { $set: { b: to } });
          await c.messages.deleteMany({ s: doc._id, q: { $lt: to } });
          return to - base;
        }),
      ),

    clear: ({ key }) =>
      guarded((c) =>
        withAppendLock(key, undefined, async (doc) => {
          await wipe(c, doc._id);
          // The turn lock goes too: a turn in flight can no longer save into the cleared session.
          // e: 0 marks the session gone (not listed); its document is removed by prune or reused by the next append.
          await c.sessions.updateOne({ _id: doc._id }, { $set: { n: 0, b: 0, pending: null, e: 0, turn: null, ...NO_INFO } });
        }),
      ),

    count: ({ id }) =>
      guarded(async (c) => {
        const doc = await session(c, id);
        return doc ? (await visibleCount(c, doc)) - (doc.b ?? 0) : 0;
      }),

    list(match, { after, limit }) {
      const conditions = liveMatching(match);
      if (after !== undefined) conditions.push({ _id: { $gt: after } });
      return guarded(async (c) => {
        // With the key as written (`k`), so it keeps its fields' order.
        const rows = (await c.sessions
          .find({ $and: conditions }, { projection: { _id: 1, k: 1 } })
          .sort({ _id: 1 })
          .limit(limit)
          .toArray()) as SessionDoc[];
        return rows.map((row) => ({ id: row._id, key: row.k }));
      });
    },

    delete(match) {
      const fields = Object.keys(match).map((f) => `${f}=${match[f]}`);
      return guarded(async (c) => {
        const doomed = (await c.sessions.find({ kf: { $all: fields } }, { projection: { k: 1, e: 1 } }).toArray()) as SessionDoc[];
        let deleted = 0;
        for (const doc of doomed) {
          await erase(c, doc, () => true);
          if (alive(doc)) deleted++;
        }
        return deleted;
      });
    },

    lock({ key }: EngineSession, owner, ttlMs) {
      const calls = (c: { sessions: Parameters<typeof lockCalls>[0] }) => lockCalls(c.sessions, key, "turn", owner, ttlMs);
      return {
        take: () => guarded((c) => calls(c).take()),
        renew: () => guarded((c) => calls(c).renew()),
        release: () => guarded((c) => calls(c).release()),
      };
    },

    async ready() {
      await start();
    },

    async prune() {
      return guarded(async (c) => {
        const expired = (await c.sessions.find({ e: { $ne: null, $lte: Date.now() } }, { projection: { k: 1 } }).toArray()) as SessionDoc[];
        let pruned = 0;
        for (const doc of expired) {
          // An append may have renewed it since the query: only a session still expired under the lock goes.
          if (await erase(c, doc, (current) => !alive(current))) pruned++;
        }
        return pruned;
      });
    },

    close,
  };

  return defineStore(engine);
}
