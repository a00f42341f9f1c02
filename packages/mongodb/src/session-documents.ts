import { LockLostError, type SessionKey, SessionLocks, StoreUnavailableError, createSessionKey, encodeSessionKey } from "@memoria/core/store-kit";
import type { Filter } from "mongodb";
import { type Collections, NO_INFO, type SessionDoc } from "./documents.js";
import { sessionLock } from "./session-locks.js";

/**
 * How the store works on a session's documents without multi-document
 * transactions: the append lock every write holds, the settling of a turn a crash
 * left half-written, and erasure. The store (mongo-store.ts) says what each call
 * does under them.
 */
export function sessionDocuments(collections: () => Promise<Collections>, ttlMs: number | undefined, appendLockTtlMs: number) {
  /** The creation and activity times a write that makes a session sets, if it has none yet. */
  const created = (doc: SessionDoc) => {
    const now = Date.now();
    return { c: doc.c ?? now, a: doc.a ?? now };
  };

  const alive = (doc: Pick<SessionDoc, "e"> | null): boolean => !!doc && (doc.e === undefined || doc.e === null || doc.e > Date.now());
  const expiry = () => (ttlMs === undefined ? null : Date.now() + ttlMs);

  /** Appends of this store instance queue per session in process, so only other processes poll the lock. */
  const local = new SessionLocks();

  /**
   * Runs `body` holding the session's append lock: queued in this process, polled
   * across processes, renewed while held. A fenced write is checked here, once the
   * lock is held: the session's turn lock must still be the write's. A document
   * that refused write made (its lock upsert) goes again, so it is never listed,
   * unless another holder's turn lock is in it.
   */
  async function withAppendLock<T>(key: SessionKey, token: string | undefined, body: (doc: SessionDoc, owner: string) => Promise<T>): Promise<T> {
    const id = encodeSessionKey(key);
    const releaseLocal = await local.acquire(id);
    try {
      const c = await collections();
      const lock = await sessionLock(c.sessions, key, "lock", { ttlMs: appendLockTtlMs, waitMs: 60_000 });
      try {
        // Taking the lock upserted the document, and erasure holds this lock too, so
        // it is there unless the lock was lost under a stall longer than its lease.
        const doc = await c.sessions.findOne({ _id: id });
        if (!doc || lock.lost)
          throw new StoreUnavailableError(`The append lock of session ${id} was lost while held; nothing was written.`, { outcome: "not-stored" });
        if (token !== undefined && doc.turn?.o !== token) {
          // Not while it holds a turn lock: that is another holder's, taken on a session with nothing else yet.
          if (doc.n === 0 && doc.e === 0 && doc.turn == null)
            await c.sessions.deleteOne({ _id: id, n: 0, e: 0, turn: null, "lock.o": lock.token } as Filter<SessionDoc>);
          throw new LockLostError(key);
        }
        return await body(doc, lock.token);
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
    return withAppendLock(createSessionKey(found.k), undefined, async (current) => {
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
    if (doc.e === 0 && doc.n === 0 && !doc.pending) return 0; // new, or cleared (clear wiped it)
    if (!alive(doc)) {
      await wipe(c, doc._id);
      await c.sessions.updateOne({ _id: doc._id }, { $set: { n: 0, b: 0, pending: null, ...NO_INFO } });
      Object.assign(doc, NO_INFO);
      return 0;
    }
    if (!doc.pending) return doc.n;
    const done = await c.turns.findOne({ _id: `${doc._id}\u0000${doc.pending.t}` });
    const n = done ? doc.pending.to : doc.n;
    if (!done) await c.messages.deleteMany({ s: doc._id, q: { $gte: doc.pending.from } });
    await c.sessions.updateOne({ _id: doc._id }, { $set: { n, pending: null } });
    return n;
  }

  /**
   * How many messages a reader sees: the committed count, and a pending turn too
   * once its marker is stored. Such a turn is stored whatever happens next (the next
   * writer completes it), so a reader that left it out would answer from a history
   * missing a turn that is there: seen when a writer was killed between its marker
   * and its commit, and the next turn read before its own append settled it.
   */
  async function visibleCount(c: Collections, doc: SessionDoc): Promise<number> {
    const pending = doc.pending;
    if (!pending || pending.from !== doc.n) return doc.n;
    return (await c.turns.findOne({ _id: `${doc._id}\u0000${pending.t}` })) ? pending.to : doc.n;
  }

  /** The live session document stored under `id` (an encoded session key). */
  async function session(c: Collections, id: string): Promise<SessionDoc | null> {
    const doc = await c.sessions.findOne({ _id: id });
    return doc && alive(doc) ? doc : null;
  }

  return { created, alive, expiry, withAppendLock, erase, wipe, settle, session, visibleCount };
}
