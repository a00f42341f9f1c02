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
  StoreUnavailableError,
  type TurnLock,
  type WriteOutcome,
  changedUnderEdit,
  checkInfoPatch,
  checkTail,
  createKeyFilter,
  createSessionKey,
  decodeMessages,
  encodePayloads,
  listLimit,
  namedValues,
  readWindow,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
  withoutScopes,
  refuseSealed,
} from "@memoria/core";
import type { Filter } from "mongodb";
import { infoOf, recentSessions } from "./conversations.js";
import { sessionDocuments } from "./session-documents.js";
import { NO_INFO, type SessionDoc } from "./documents.js";
import { sessionLock } from "./session-locks.js";
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

  const store: MongoHistoryStore = {
    name: "mongodb",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    async ready() {
      await start();
    },

    async read(key: SessionKey, readOptions?: ReadOptions): Promise<BaseMessage[]> {
      const sessionKey = createSessionKey(key);
      const last = readWindow(readOptions);
      if (last === 0) return [];
      return guarded(async (c) => {
        const doc = await session(c, sessionKey);
        if (!doc) return [];
        const n = await visibleCount(c, doc);
        if (n === 0) return [];
        const base = doc.b ?? 0;
        const from = last === undefined ? base : Math.max(base, n - last);
        const rows = await c.messages.find({ s: doc._id, q: { $gte: from, $lt: n } }, { projection: { p: 1, _id: 0 } }).sort({ q: 1 }).toArray();
        return refuseSealed(sessionKey, decodeMessages(rows.map((row) => row.p)), readOptions);
      });
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      const sessionKey = createSessionKey(key);
      const turnId = turnIdOf(appendOptions);
      const payloads = encodePayloads(messages);
      if (payloads.length === 0) return { appended: true };
      // Until its marker is written, a failed turn is rolled back by the next writer; after, it is completed.
      let outcome: WriteOutcome = "not-stored";
      try {
        return await withAppendLock(sessionKey, appendOptions, async (doc, owner) => {
          const c = await collections();
          const n = await settle(c, doc);
          const marker = `${doc._id}\u0000${turnId}`;
          if (await c.turns.findOne({ _id: marker })) return { appended: false };
          const to = n + payloads.length;
          await c.sessions.updateOne({ _id: doc._id }, { $set: { pending: { t: turnId, from: n, to } } });
          await c.messages.insertMany(
            payloads.map((p, i) => ({ s: doc._id, q: n + i, p })),
            { ordered: true },
          );
          outcome = "unknown";
          await c.turns.insertOne({ _id: marker, s: doc._id });
          // The commit, only while this owner still holds the append lock: the turn becomes visible.
          const now = Date.now();
          await c.sessions.updateOne({ _id: doc._id, "lock.o": owner } as Filter<SessionDoc>, { $set: { n: to, pending: null, e: expiry(), c: doc.c ?? now, a: now } });
          return { appended: true };
        });
      } catch (error) {
        throw unavailable(error, outcome);
      }
    },

    async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
      const sessionKey = createSessionKey(key);
      stateName(name);
      return guarded(async (c) => {
        const doc = await session(c, sessionKey);
        if (!doc) return undefined;
        const row = await c.state.findOne({ _id: `${doc._id}\u0000${name}` });
        return row ? (JSON.parse(row.v) as JsonValue) : undefined;
      });
    },

    async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
      const sessionKey = createSessionKey(key);
      return guarded(async (c) => {
        const doc = await session(c, sessionKey);
        if (!doc) return {};
        const rows = await c.state.find({ s: doc._id }).sort({ _id: 1 }).toArray();
        return namedValues(rows.map((row) => [row._id.slice(doc._id.length + 1), JSON.parse(row.v) as JsonValue]));
      });
    },

    async setState(key: SessionKey, name: string, value: JsonValue, writeOptions?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      stateName(name);
      const v = JSON.stringify(stateValue(value));
      await guarded((c) =>
        withAppendLock(sessionKey, writeOptions, async (doc) => {
          await settle(c, doc);
          await c.state.updateOne({ _id: `${doc._id}\u0000${name}` }, { $set: { s: doc._id, v } }, { upsert: true });
          await c.sessions.updateOne({ _id: doc._id }, { $set: { e: expiry(), ...created(doc) } });
        }),
      );
    },

    async info(key: SessionKey): Promise<SessionInfo | undefined> {
      const sessionKey = createSessionKey(key);
      return guarded(async (c) => {
        const doc = await session(c, sessionKey);
        // Counted as a read counts: with a pending turn whose marker is stored.
        return doc ? infoOf({ ...doc, n: await visibleCount(c, doc) }) : undefined;
      });
    },

    async setInfo(key: SessionKey, patch: InfoPatch, writeOptions?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      const checked = checkInfoPatch(patch);
      const changes: Partial<SessionDoc> = {};
      if (checked.title !== undefined) changes.ti = checked.title;
      if (checked.metadata !== undefined) changes.md = checked.metadata;
      await guarded((c) =>
        withAppendLock(sessionKey, writeOptions, async (doc) => {
          await settle(c, doc);
          await c.sessions.updateOne({ _id: doc._id }, { $set: { ...changes, e: expiry(), ...created(doc) } });
        }),
      );
    },

    async recent(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<InfoPage> {
      return guarded((c) => recentSessions(c.sessions, filter, listOptions));
    },

    /**
     * Without multi-document transactions, the kept prefix is copied after the
     * committed messages together with the new ones (as a pending turn a crash
     * rolls back), then one update of the session document moves the window onto
     * the copy, and the old documents are deleted. O(kept prefix) copies: an edit
     * near the end of a long session costs that much.
     */
    async replaceTail(key: SessionKey, tail: TailReplacement, writeOptions?: FencedWriteOptions): Promise<void> {
      const sessionKey = createSessionKey(key);
      checkTail(tail);
      const payloads = encodePayloads(tail.messages);
      await guarded((c) =>
        withAppendLock(sessionKey, writeOptions, async (doc, owner) => {
          const n = await settle(c, doc);
          const base = doc.e === 0 ? n : (doc.b ?? 0);
          if (n - base !== tail.count) throw changedUnderEdit(n - base, tail.count);
          if (tail.from === n - base && payloads.length === 0) return; // nothing to change
          const kept = await c.messages.find({ s: doc._id, q: { $gte: base, $lt: base + tail.from } }, { projection: { p: 1, _id: 0 } }).sort({ q: 1 }).toArray();
          const rows = [...kept.map((row) => row.p), ...payloads].map((p, i) => ({ s: doc._id, q: n + i, p }));
          await c.sessions.updateOne({ _id: doc._id }, { $set: { pending: { t: "\u0000edit", from: n, to: n + rows.length } } });
          if (rows.length > 0) await c.messages.insertMany(rows, { ordered: true });
          const moved = await c.sessions.updateOne({ _id: doc._id, "lock.o": owner } as Filter<SessionDoc>, { $set: { b: n, n: n + rows.length, pending: null, e: doc.e === 0 ? expiry() : doc.e } });
          if (moved.matchedCount === 0) throw new StoreUnavailableError(`The append lock of session ${doc._id} was lost while held; the edit was rolled back.`, { outcome: "not-stored" });
          await c.messages.deleteMany({ s: doc._id, q: { $lt: n } });
        }),
      );
    },

    async trim(key: SessionKey, trimOptions: { oldest: number }): Promise<number> {
      const sessionKey = createSessionKey(key);
      const oldest = trimCount(trimOptions);
      if (oldest === 0) return 0;
      return guarded((c) =>
        withAppendLock(sessionKey, undefined, async (doc) => {
          const n = await settle(c, doc);
          const base = doc.b ?? 0;
          const to = Math.min(n, base + oldest);
          // The base moves first: a crash leaves unreachable documents, never a gap readers would see.
          await c.sessions.updateOne({ _id: doc._id }, { $set: { b: to } });
          await c.messages.deleteMany({ s: doc._id, q: { $lt: to } });
          return to - base;
        }),
      );
    },

    async clear(key: SessionKey): Promise<void> {
      const sessionKey = createSessionKey(key);
      await guarded((c) =>
        withAppendLock(sessionKey, undefined, async (doc) => {
          await wipe(c, doc._id);
          // The turn lock goes too: a turn in flight can no longer save into the cleared session.
          await c.sessions.updateOne({ _id: doc._id }, { $set: { n: 0, b: 0, pending: null, e: 0, turn: null, ...NO_INFO } });
        }),
      );
      // e: 0 marks the session gone (not listed); its document is removed by prune or reused by the next append.
    },

    async count(key: SessionKey): Promise<number> {
      const sessionKey = createSessionKey(key);
      return guarded(async (c) => {
        const doc = await session(c, sessionKey);
        return doc ? (await visibleCount(c, doc)) - (doc.b ?? 0) : 0;
      });
    },

    async list(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<SessionPage> {
      const match = createKeyFilter(filter);
      const limit = listLimit(listOptions);
      const query: Filter<SessionDoc> = {};
      const fields = Object.keys(match).map((f) => `${f}=${match[f]}`);
      if (fields.length) query.kf = { $all: fields };
      if (listOptions?.cursor !== undefined) query._id = { $gt: listOptions.cursor };
      query.$or = [{ e: null }, { e: { $exists: false } }, { e: { $gt: Date.now() } }];
      return guarded(async (c) => {
        const rows = await c.sessions.find(query, { projection: { k: 1 } }).sort({ _id: 1 }).limit(limit + 1).toArray();
        const page = rows.slice(0, limit);
        const sessions = withoutScopes(page.map((row) => createSessionKey(row.k)), (key) => key, filter);
        return rows.length > limit ? { sessions, cursor: page[page.length - 1]?._id } : { sessions };
      });
    },

    async delete(filter: SessionKeyFilter): Promise<number> {
      const match = createKeyFilter(filter);
      requireFilterField(match);
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

    history(key: SessionKey) {
      return new StoreChatMessageHistory(store, createSessionKey(key));
    },

    async lock(key: SessionKey, lockOptions: LockOptions = {}): Promise<TurnLock> {
      const sessionKey = createSessionKey(key);
      return guarded((c) => sessionLock(c.sessions, sessionKey, "turn", lockOptions));
    },

    async prune(): Promise<number> {
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
  return store;
}
