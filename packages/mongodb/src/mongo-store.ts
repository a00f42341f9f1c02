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
  SessionLocks,
  StoreClosedError,
  type TurnLock,
  createKeyFilter,
  createSessionKey,
  decodeMessage,
  encodeMessages,
  encodeSessionKey,
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
import type { Db, Filter, MongoClient } from "mongodb";

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
}

export interface MongoHistoryStore extends HistoryStore {
  /** Deletes expired sessions with their messages; resolves with how many sessions. */
  prune(): Promise<number>;
  /** Creates the indexes now, instead of on first use. */
  ready(): Promise<void>;
}

interface Lock {
  o: string;
  x: number;
}

/** One session: its key, the committed message count, and its locks. */
interface SessionDoc {
  _id: string;
  k: Record<string, string>;
  /** `field=value` strings of the key, indexed: `list` and `delete` by any field. */
  kf: string[];
  /** Messages with `q < n` are committed; a crash may leave more, which no one reads. */
  n: number;
  /** Messages with `q < b` were trimmed (compaction). */
  b?: number;
  /** A turn being written: its id and the sequence range it takes. */
  pending?: { t: string; from: number; to: number } | null;
  /** The short append lock, and the long turn lock. */
  lock?: Lock | null;
  turn?: Lock | null;
  /** Expiry (epoch ms) or null. */
  e?: number | null;
}

interface MessageDoc {
  s: string;
  q: number;
  /** The message as codec JSON text: keys holding `$` or `.` stay data. */
  p: string;
}

interface MarkerDoc {
  _id: string;
  s: string;
}

interface StateDoc {
  _id: string;
  s: string;
  v: string;
}

type MongoModule = { MongoClient: new (url: string) => MongoClient };

const DUPLICATE_KEY = 11000;
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,40}$/;

function isDuplicate(error: unknown): boolean {
  return (error as { code?: number })?.code === DUPLICATE_KEY;
}

function unavailable(error: unknown): unknown {
  const name = (error as Error)?.name ?? "";
  if (MemoriaError.isInstance(error) || !/MongoServerSelectionError|MongoNetworkError|MongoNetworkTimeoutError|MongoTopologyClosedError/.test(name)) return error;
  return new MemoriaError("STORE_UNAVAILABLE", `MongoDB is unreachable: ${(error as Error).message}.`, { cause: error });
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
  const owned = !options.client;
  let client = options.client;
  let started: Promise<Db> | undefined;
  let closed = false;

  function start(): Promise<Db> {
    if (closed) return Promise.reject(new StoreClosedError("mongodb"));
    started ??= (async () => {
      if (!client) {
        const mongodb = loadPeerDependency<MongoModule>("mongodb", "The MongoDB store", import.meta.url);
        client = new mongodb.MongoClient(options.url as string);
      }
      await client.connect();
      const db = client.db(options.dbName ?? "memoria");
      await Promise.all([
        db.collection(`${base}_messages`).createIndex({ s: 1, q: 1 }, { unique: true }),
        db.collection(`${base}_sessions`).createIndex({ kf: 1, _id: 1 }),
        db.collection(`${base}_sessions`).createIndex({ e: 1 }),
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

  async function collections() {
    const db = await start();
    return {
      sessions: db.collection<SessionDoc>(`${base}_sessions`),
      messages: db.collection<MessageDoc>(`${base}_messages`),
      turns: db.collection<MarkerDoc>(`${base}_turns`),
      state: db.collection<StateDoc>(`${base}_state`),
    };
  }
  type Collections = Awaited<ReturnType<typeof collections>>;

  async function guarded<T>(body: (c: Collections) => Promise<T>): Promise<T> {
    try {
      return await body(await collections());
    } catch (error) {
      throw unavailable(error);
    }
  }

  const alive = (doc: Pick<SessionDoc, "e"> | null): boolean => !!doc && (doc.e === undefined || doc.e === null || doc.e > Date.now());
  const expiry = () => (ttlMs === undefined ? null : Date.now() + ttlMs);

  /**
   * Takes a lock field of a session document (creating the document if needed):
   * the filter matches only when the lock is free, expired or already this owner's,
   * so a busy lock makes the upsert collide on `_id` instead. Matching our own owner
   * makes a try idempotent: a write the server applied but reported as failed is
   * picked up by the next try instead of wedging the session until the lock expires.
   *
   * `updateOne`, not `findOneAndUpdate`: the compatible test server runs the latter
   * as a separate read and write, so under contention two owners both took the lock
   * (10 of 600 handoffs), while `updateOne` excluded (0 of 1,800). On a real mongod
   * both are atomic; this costs the append one `findOne` there.
   */
  async function takeLock(c: Collections, key: SessionKey, field: "lock" | "turn", owner: string, ttl: number): Promise<boolean> {
    const now = Date.now();
    const free = { $or: [{ [field]: { $exists: false } }, { [field]: null }, { [`${field}.x`]: { $lt: now } }, { [`${field}.o`]: owner }] } as Filter<SessionDoc>;
    try {
      const { matchedCount, upsertedCount } = await c.sessions.updateOne(
        { _id: encodeSessionKey(key), ...free },
        {
          $set: { [field]: { o: owner, x: now + ttl } },
          $setOnInsert: { k: { ...key }, kf: Object.keys(key).map((f) => `${f}=${key[f]}`), n: 0, e: expiry() },
        } as never,
        { upsert: true },
      );
      return matchedCount + upsertedCount > 0;
    } catch (error) {
      if (isDuplicate(error)) return false; // held by someone else
      throw error;
    }
  }

  async function releaseLock(c: Collections, id: string, field: "lock" | "turn", owner: string): Promise<void> {
    await c.sessions.updateOne({ _id: id, [`${field}.o`]: owner } as Filter<SessionDoc>, { $set: { [field]: null } } as never);
  }

  /** Takes a lock field for `owner`, polling. */
  function acquireLock(key: SessionKey, field: "lock" | "turn", owner: string, ttl: number, options: LockOptions): Promise<TurnLock> {
    return pollForLock(key, options, {
      take: () => guarded((c) => takeLock(c, key, field, owner, ttl)),
      release: () => guarded((c) => releaseLock(c, encodeSessionKey(key), field, owner)),
    });
  }

  /** Appends of this store instance queue per session in process, so only other processes poll the lock. */
  const local = new SessionLocks();

  /** Runs `body` holding the session's append lock: queued in this process, polled across processes. */
  async function withAppendLock<T>(key: SessionKey, body: (doc: SessionDoc, owner: string) => Promise<T>): Promise<T> {
    const id = encodeSessionKey(key);
    const releaseLocal = await local.acquire(id);
    try {
      const owner = crypto.randomUUID();
      const lock = await acquireLock(key, "lock", owner, 30_000, { waitMs: 60_000 });
      try {
        // Taking the lock upserted the document, and erasure holds this lock too, so
        // it is there unless the lock expired under a stall of more than 30 s.
        const doc = await guarded((c) => c.sessions.findOne({ _id: id }));
        if (!doc) throw new MemoriaError("STORE_UNAVAILABLE", `The append lock of session ${id} expired while held; nothing was written.`);
        return await body(doc, owner);
      } finally {
        await lock.release();
      }
    } finally {
      releaseLocal();
    }
  }

  /**
   * Erases a session (its messages, turn markers, state and document) under its
   * append lock, so no append in flight can leave messages behind it, if `doomed`
   * still says so once the lock is held. True when it erased.
   */
  async function erase(c: Collections, found: SessionDoc, doomed: (current: SessionDoc) => boolean): Promise<boolean> {
    return withAppendLock(createSessionKey(found.k), async (current) => {
      if (!doomed(current)) return false;
      await wipe(c, current._id);
      await c.sessions.deleteOne({ _id: current._id });
      return true;
    });
  }

  /** Deletes everything of a session but its document. */
  async function wipe(c: Collections, id: string): Promise<void> {
    await Promise.all([c.messages.deleteMany({ s: id }), c.turns.deleteMany({ s: id }), c.state.deleteMany({ s: id })]);
  }

  /**
   * Under the append lock: starts an expired session afresh, and settles a turn a
   * crash left half-written (completed if its marker was stored, else removed).
   * Returns the committed count.
   */
  async function settle(c: Collections, doc: SessionDoc): Promise<number> {
    if (!alive(doc)) {
      await wipe(c, doc._id);
      await c.sessions.updateOne({ _id: doc._id }, { $set: { n: 0, b: 0, pending: null } });
      return 0;
    }
    if (!doc.pending) return doc.n;
    const done = await c.turns.findOne({ _id: `${doc._id}\u0000${doc.pending.t}` });
    const n = done ? doc.pending.to : doc.n;
    if (!done) await c.messages.deleteMany({ s: doc._id, q: { $gte: doc.pending.from } });
    await c.sessions.updateOne({ _id: doc._id }, { $set: { n, pending: null } });
    return n;
  }

  async function session(c: Collections, key: SessionKey): Promise<SessionDoc | null> {
    const doc = await c.sessions.findOne({ _id: encodeSessionKey(key) });
    return doc && alive(doc) ? doc : null;
  }

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
        if (!doc || doc.n === 0) return [];
        const base = doc.b ?? 0;
        const from = last === undefined ? base : Math.max(base, doc.n - last);
        const rows = await c.messages.find({ s: doc._id, q: { $gte: from, $lt: doc.n } }, { projection: { p: 1, _id: 0 } }).sort({ q: 1 }).toArray();
        return rows.map((row) => decodeMessage(row.p));
      });
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      const sessionKey = createSessionKey(key);
      const turnId = turnIdOf(appendOptions);
      const payloads = encodeMessages(messages).map((message) => JSON.stringify(message));
      if (payloads.length === 0) return { appended: true };
      return guarded((c) =>
        withAppendLock(sessionKey, async (doc, owner) => {
          const n = await settle(c, doc);
          const marker = `${doc._id}\u0000${turnId}`;
          if (await c.turns.findOne({ _id: marker })) return { appended: false };
          const to = n + payloads.length;
          await c.sessions.updateOne({ _id: doc._id }, { $set: { pending: { t: turnId, from: n, to } } });
          await c.messages.insertMany(
            payloads.map((p, i) => ({ s: doc._id, q: n + i, p })),
            { ordered: true },
          );
          await c.turns.insertOne({ _id: marker, s: doc._id });
          // The commit, only while this owner still holds the append lock: the turn becomes visible.
          await c.sessions.updateOne({ _id: doc._id, "lock.o": owner } as Filter<SessionDoc>, { $set: { n: to, pending: null, e: expiry() } });
          return { appended: true };
        }),
      );
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

    async setState(key: SessionKey, name: string, value: JsonValue): Promise<void> {
      const sessionKey = createSessionKey(key);
      stateName(name);
      const v = JSON.stringify(stateValue(value));
      await guarded((c) =>
        withAppendLock(sessionKey, async (doc) => {
          await settle(c, doc);
          await c.state.updateOne({ _id: `${doc._id}\u0000${name}` }, { $set: { s: doc._id, v } }, { upsert: true });
          await c.sessions.updateOne({ _id: doc._id }, { $set: { e: expiry() } });
        }),
      );
    },

    async trim(key: SessionKey, trimOptions: { oldest: number }): Promise<number> {
      const sessionKey = createSessionKey(key);
      const oldest = trimCount(trimOptions);
      if (oldest === 0) return 0;
      return guarded((c) =>
        withAppendLock(sessionKey, async (doc) => {
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
        withAppendLock(sessionKey, async (doc) => {
          await wipe(c, doc._id);
          await c.sessions.updateOne({ _id: doc._id }, { $set: { n: 0, b: 0, pending: null, e: 0 } });
        }),
      );
      // e: 0 marks the session gone (not listed); its document is removed by prune or reused by the next append.
    },

    async count(key: SessionKey): Promise<number> {
      const sessionKey = createSessionKey(key);
      return guarded(async (c) => {
        const doc = await session(c, sessionKey);
        return doc ? doc.n - (doc.b ?? 0) : 0;
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
        const sessions = page.map((row) => createSessionKey(row.k));
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
      const ttl = Math.max(1, Math.round(lockOptions.ttlMs ?? 60_000));
      return acquireLock(createSessionKey(key), "turn", crypto.randomUUID(), ttl, lockOptions);
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

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (owned && client) await client.close();
    },
  };
  return store;
}
