import { LockLostError, type SessionKey } from "@memoria/core";
import type { EngineLock } from "@memoria/core/store-kit";
import type { ReadStatements } from "./history-reads.js";
import type { Tables } from "./schema.js";
import { type SqlDialect, type SqlStep, all } from "./sql-dialect.js";

/**
 * A turn lock as a row: taken when absent or expired, renewed and released only
 * by its owner (an owner token), and expiring after its TTL if its owner dies.
 * Times come from the database's clock, so app servers with skewed clocks agree on
 * expiry. The kit (`defineStore`) polls, renews and releases it through these calls.
 *
 * Where the engine sends statements in one trip (`dialect.driver.inOneTrip`), a try can also
 * read the session in that trip (`takeAndRead`), after the try and in a snapshot of
 * its own, so the read sees every turn stored before the lock was taken
 * (`lockedReads`: reads that return rows only to the lock's owner, so a try that
 * finds the lock held reads nothing).
 */
export function tableLock(
  dialect: SqlDialect,
  t: Tables,
  id: string,
  owner: string,
  ttlMs: number,
  ready: () => Promise<void>,
  lockedReads?: ReadStatements,
): EngineLock {
  const change = (sql: string, params: unknown[]) => dialect.driver.execute<number>({ kind: "run", sql, params });
  const takeStep: SqlStep = { kind: "run", sql: takeStatement(dialect, t, ttlMs), params: [id, owner] };
  const send = dialect.driver.inOneTrip?.bind(dialect);
  const lock: EngineLock = {
    async take() {
      await ready();
      return (await dialect.driver.execute<number>(takeStep)) > 0;
    },
    renew: async () =>
      (await change(`UPDATE ${t.locks} SET expires_at = ${dialect.forms.nowMs} + ${ttlMs} WHERE session_id = ? AND owner = ?`, [id, owner])) === 1,
    async release() {
      await change(releaseStatement(t), [id, owner]);
    },
  };
  if (send && lockedReads) {
    lock.takeAndRead = async (last) => {
      await ready();
      const readStep: SqlStep =
        last === undefined
          ? { kind: "column", sql: lockedReads.all, params: [id, owner] }
          : { kind: "column", sql: lockedReads.last, params: lockedReads.lastParams(id, last, owner) };
      const [changed, rows] = await send([takeStep, readStep]);
      return changed === 0 ? undefined : (rows as string[]);
    };
  }
  return lock;
}

/**
 * Takes the lock row when absent or expired, or when it is already this owner's;
 * changes no row otherwise. MySQL's upsert has no condition: the owner changes only
 * if the lock may be taken, then the expiry only if the owner is now this one (1 row
 * for an insert, 2 for a takeover, 0 when held by another, as its driver counts
 * changed rows). The owner column must not be a BLOB or TEXT type there: MariaDB
 * compares such a column with the inserted value, not the assigned one, in a later
 * assignment of the same upsert.
 */
function takeStatement(dialect: SqlDialect, t: Tables, ttlMs: number): string {
  const insert = `INSERT INTO ${t.locks} (session_id, owner, expires_at) VALUES (?, ?, ${dialect.forms.nowMs} + ${ttlMs})`;
  if (!dialect.features.returning) {
    return `${insert} ON DUPLICATE KEY UPDATE
         owner = IF(expires_at <= ${dialect.forms.nowMs} OR owner = VALUES(owner), VALUES(owner), owner),
         expires_at = IF(owner = VALUES(owner), VALUES(expires_at), expires_at)`;
  }
  return `${insert}
         ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE ${t.locks}.expires_at <= ${dialect.forms.nowMs} OR ${t.locks}.owner = excluded.owner`;
}

/**
 * Gives a lock back by clearing its row rather than deleting it: a turn takes and
 * gives back its session's lock row, and a deleted row is a dead tuple (with an index
 * entry) on PostgreSQL until autovacuum's next pass, so a busy session's lookups slowed
 * turn after turn; an update of columns no index holds is a heap-only tuple that the
 * page prunes by itself. The cleared owner matches no token, so the fence and a renewal
 * fail as for a deleted row, and the next take finds it expired. Erasure and `prune`
 * still delete rows.
 */
export function releaseStatement(t: Tables): string {
  return `UPDATE ${t.locks} SET owner = '', expires_at = 0 WHERE session_id = ? AND owner = ?`;
}

/**
 * The first step of a fenced write: the session's lock row must still carry the
 * write's token, or the transaction rolls back with `LockLostError`. On PostgreSQL
 * the row is locked (`FOR UPDATE`) until commit, so a takeover or an erasure waits
 * for this write and then sees it; SQLite's write lock already orders them.
 */
export function* checkFence(dialect: SqlDialect, t: Tables, key: SessionKey, id: string, token: string | undefined): Generator<SqlStep, void, unknown> {
  if (token === undefined) return;
  const held = yield* all(`SELECT owner FROM ${t.locks} WHERE session_id = ? AND owner = ?${dialect.forms.forUpdate}`, [id, token]);
  if (held.length === 0) throw new LockLostError(key);
}
