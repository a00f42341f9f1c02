import { type LockOptions, type PolledLock, type SessionKey, type TurnLock, encodeSessionKey, lockTimes, pollForLock } from "@memoria/core/store-kit";
import type { Collection, Filter } from "mongodb";
import type { SessionDoc } from "./documents.js";
import { unavailable } from "./mongo-connection.js";

const DUPLICATE_KEY = 11000;

const free = (field: "lock" | "turn", now: number) => [{ [field]: { $exists: false } }, { [field]: null }, { [`${field}.x`]: { $lt: now } }];

/**
 * A lock field of a session document (the document created if needed), taken,
 * renewed and released by one owner's token.
 *
 * Taking matches only when the lock is free, expired or already this owner's, so
 * a busy lock makes the upsert collide on `_id` instead; matching our own owner
 * makes a try idempotent (a write the server applied but reported as failed is
 * picked up by the next try). The turn lock is taken only while no append lock is
 * held: a fenced append checks the turn lock under the append lock, so a turn lock
 * can never change hands between that check and the commit.
 *
 * `updateOne`, not `findOneAndUpdate`: the compatible test server runs the latter
 * as a separate read and write, so under contention two owners both took the lock
 * (10 of 600 handoffs), while `updateOne` excluded (0 of 1,800).
 */
export function lockCalls(
  sessions: Collection<SessionDoc>,
  key: SessionKey,
  field: "lock" | "turn",
  owner: string,
  ttlMs: number,
): Required<Omit<PolledLock, "owner">> {
  const id = encodeSessionKey(key);
  const mine = { _id: id, [`${field}.o`]: owner } as Filter<SessionDoc>;
  return {
    async take() {
      const now = Date.now();
      const conditions: Filter<SessionDoc>[] = [{ $or: [...free(field, now), { [`${field}.o`]: owner }] } as Filter<SessionDoc>];
      if (field === "turn") conditions.push({ $or: free("lock", now) } as Filter<SessionDoc>);
      try {
        const { matchedCount, upsertedCount } = await sessions.updateOne(
          { _id: id, $and: conditions } as Filter<SessionDoc>,
          {
            $set: { [field]: { o: owner, x: now + ttlMs } },
            $setOnInsert: { k: { ...key }, kf: Object.keys(key).map((f) => `${f}=${key[f]}`), n: 0, e: 0 },
          } as never,
          { upsert: true },
        );
        return matchedCount + upsertedCount > 0;
      } catch (error) {
        if ((error as { code?: number })?.code === DUPLICATE_KEY) return false; // held by someone else
        throw unavailable(error);
      }
    },
    // Renewed and released long after the lock was taken: driver errors are typed here too.
    async renew() {
      const { matchedCount } = await sessions.updateOne(mine, { $set: { [`${field}.x`]: Date.now() + ttlMs } } as never).catch((error: unknown) => {
        throw unavailable(error);
      });
      return matchedCount === 1;
    },
    async release() {
      await sessions.updateOne(mine, { $set: { [field]: null } } as never).catch((error: unknown) => {
        throw unavailable(error);
      });
    },
  };
}

/** The lock `field` of a session, taken by polling `lockCalls` and held as a renewed lease. */
export function sessionLock(sessions: Collection<SessionDoc>, key: SessionKey, field: "lock" | "turn", options: LockOptions): Promise<TurnLock> {
  const owner = crypto.randomUUID();
  return pollForLock(key, options, { owner, ...lockCalls(sessions, key, field, owner, lockTimes(options).ttlMs) });
}
