import type { SessionKey } from "@memoria/core";
import type { Tables } from "./schema.js";
import { OPEN, type OneStatement, cachedText, gate, keyFieldsStep, withKeyParams } from "./statement-parts.js";

/** What one state-writing statement did. */
export interface StatesOutcome {
  /** The session had expired: nothing was written (the caller starts it afresh in a transaction). */
  expired: boolean;
  /** The write's lock was not its token's: nothing was written. */
  lockLost: boolean;
}

/**
 * State values of a session as ONE PostgreSQL statement (data-modifying CTEs, as
 * the append is: `one-statement-append.ts`), so a `setState` or `setStates` costs one
 * round trip and one commit instead of a transaction of five: the fence on the lock
 * row (`FOR UPDATE`), the session upsert (renewing its expiry; a new session gets its
 * key fields), and the values (`unnest` of two text arrays). All of them or none: it
 * is one statement (PostgreSQL runs every data-modifying step whether or not the
 * final SELECT reads it). An expired session writes nothing and says so, for the caller's
 * transaction to delete it and start afresh.
 */
export function oneStatementStates(
  t: Tables,
  nowMs: string,
  ttlMs: number | undefined,
  key: SessionKey,
  id: string,
  entries: readonly (readonly [string, string])[],
  token: string | undefined,
): OneStatement<StatesOutcome> {
  const fields = Object.keys(key);
  const fenced = token !== undefined;
  const sql = cachedText(`states|${t.sessions}|${ttlMs}|${fields.length}|${fenced}`, () => build(t, nowMs, ttlMs, fields.length, fenced));
  const params = withKeyParams([id, JSON.stringify(key), entries.map(([name]) => name), entries.map(([, value]) => value)], token, key);
  return {
    sql,
    params,
    outcome(row) {
      const expired = Number(row?.expired ?? 0) > 0;
      return { expired, lockLost: !expired && Number(row?.passed ?? 0) === 0 };
    },
  };
}

function build(t: Tables, nowMs: string, ttlMs: number | undefined, fieldCount: number, fenced: boolean): string {
  const expires = ttlMs === undefined ? "NULL::bigint" : `c.now + ${ttlMs}`;
  // $1 id, $2 key JSON, $3 names (text[]), $4 values (text[]), $5 lock token, then field/value pairs.
  const fence = fenced ? `SELECT 1 FROM ${t.locks} WHERE session_id = $1::text AND owner = $5::text AND ${OPEN} FOR UPDATE` : undefined;
  return `${gate(t, nowMs, fence)},
  sess AS (
    INSERT INTO ${t.sessions} (id, key_json, next_seq, message_count, updated_at, expires_at, created_at, active_at)
    SELECT $1::text, $2::text, 0, 0, c.now, ${expires}, c.now, c.now FROM ok, c
    ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, expires_at = excluded.expires_at
    RETURNING next_seq
  ),
  ${keyFieldsStep(t, fieldCount, fenced ? 6 : 5, "sess.next_seq = 0")},
  written AS (
    INSERT INTO ${t.state} (session_id, name, value)
    SELECT $1::text, s.name, s.value::json FROM sess, unnest($3::text[], $4::text[]) AS s (name, value)
    ON CONFLICT (session_id, name) DO UPDATE SET value = excluded.value
  )
  SELECT (SELECT n FROM gone) AS expired, (SELECT count(*) FROM ok) AS passed`;
}
