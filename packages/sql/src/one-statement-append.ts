import type { SessionKey } from "@memoria/core";
import type { Tables } from "./schema.js";
import { OPEN, type OneStatement, cachedText, gate, keyFieldsStep, withKeyParams } from "./statement-parts.js";

/** What one append statement did. */
export interface OneStatementOutcome {
  /** The session had expired: nothing was written (the caller starts it afresh in a transaction). */
  expired: boolean;
  /** The write's lock was not its token's, and the turn was not stored before: nothing was written. */
  lockLost: boolean;
  /** The turn id was new and its messages were inserted. */
  appended: boolean;
  /** The lock was given back in the same statement. */
  released: boolean;
}

export type OneStatementAppend = OneStatement<OneStatementOutcome>;

/** A turn's append as the turn writer asks for it: fenced by the lock `token` when given, which `release` gives back in the same step. */
export interface AppendRequest {
  key: SessionKey;
  id: string;
  payloads: readonly string[];
  turnId: string;
  token: string | undefined;
  release: boolean;
}

/**
 * A turn as ONE PostgreSQL statement (data-modifying CTEs), so it costs one round
 * trip and one commit instead of a transaction of six: the fence on the lock row,
 * the turn id, the session upsert (its row lock orders concurrent writers and
 * numbers the messages), the key fields of a new session, the messages
 * (`unnest` of one text array), and, when asked, the lock's release. Each step
 * reads the one before it, which orders them; foreign keys are checked at the end
 * of the statement. With the release, the fence IS the lock row's `DELETE`.
 *
 * An expired session (a store with `ttlSeconds`) writes nothing and says so: the
 * caller then runs the transaction that deletes it and starts afresh. The clock is
 * read once (`MATERIALIZED`), so every step agrees on whether it expired.
 */
export function oneStatementAppend(
  t: Tables,
  nowMs: string,
  ttlMs: number | undefined,
  { key, id, payloads, turnId, token, release }: AppendRequest,
): OneStatementAppend {
  const fields = Object.keys(key);
  const fenced = token !== undefined;
  const releasing = fenced && release;
  const sql = cachedText(`append|${t.sessions}|${ttlMs}|${fields.length}|${fenced}|${releasing}`, () =>
    build(t, nowMs, ttlMs, fields.length, fenced, releasing),
  );
  const params = withKeyParams([id, JSON.stringify(key), payloads.length, turnId, payloads], token, key);
  return {
    sql,
    params,
    outcome: (row) => appendOutcome(row, releasing),
  };
}

/**
 * What an append's row of counts says it did (this statement's, MySQL's script's):
 * `expired`, `passed` (the fence), `stored_before` and `inserted`.
 */
export function appendOutcome(row: Record<string, unknown> | undefined, releasing: boolean): OneStatementOutcome {
  const expired = Number(row?.expired ?? 0) > 0;
  const passed = Number(row?.passed ?? 0) > 0;
  // A turn stored before (by an attempt whose answer was lost) is "stored already", whatever the lock says.
  const storedBefore = Number(row?.stored_before ?? 0) > 0;
  return {
    expired,
    lockLost: !expired && !passed && !storedBefore,
    appended: Number(row?.inserted ?? 0) > 0,
    released: releasing && passed && !expired,
  };
}

function build(t: Tables, nowMs: string, ttlMs: number | undefined, fieldCount: number, fenced: boolean, releasing: boolean): string {
  const expires = ttlMs === undefined ? "NULL::bigint" : `c.now + ${ttlMs}`;
  // $1 id, $2 key JSON, $3 message count, $4 turn id, $5 payloads (text[]), $6 lock token, then field/value pairs.
  const lockRow = `session_id = $1::text AND owner = $6::text AND ${OPEN}`;
  const fence = !fenced
    ? undefined
    : releasing
      ? `UPDATE ${t.locks} SET owner = '', expires_at = 0 WHERE ${lockRow} RETURNING 1`
      : `SELECT 1 FROM ${t.locks} WHERE ${lockRow} FOR UPDATE`;
  return `${gate(t, nowMs, fence)},
  turn AS (
    INSERT INTO ${t.turns} (session_id, turn_id) SELECT $1::text, $4::text FROM ok ON CONFLICT DO NOTHING RETURNING 1
  ),
  sess AS (
    INSERT INTO ${t.sessions} (id, key_json, next_seq, message_count, updated_at, expires_at, created_at, active_at)
    SELECT $1::text, $2::text, $3::bigint, $3::bigint, c.now, ${expires}, c.now, c.now FROM turn, c
    ON CONFLICT (id) DO UPDATE SET
      next_seq = ${t.sessions}.next_seq + excluded.next_seq,
      message_count = ${t.sessions}.message_count + excluded.message_count,
      updated_at = excluded.updated_at,
      expires_at = excluded.expires_at,
      active_at = excluded.active_at
    RETURNING next_seq
  ),
  ${keyFieldsStep(t, fieldCount, fenced ? 7 : 6, "sess.next_seq = $3::bigint")},
  msgs AS (
    INSERT INTO ${t.messages} (session_id, seq, turn_id, payload)
    SELECT $1::text, sess.next_seq - $3::bigint + p.ord - 1, $4::text, p.payload::json
    FROM sess, unnest($5::text[]) WITH ORDINALITY AS p (payload, ord)
    RETURNING 1
  )
  SELECT (SELECT n FROM gone) AS expired, (SELECT count(*) FROM ok) AS passed, (SELECT count(*) FROM msgs) AS inserted,
    (SELECT count(*) FROM ${t.turns} WHERE session_id = $1::text AND turn_id = $4::text) AS stored_before`;
}
