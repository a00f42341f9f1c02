import { type AppendRequest, type OneStatementOutcome, appendOutcome } from "./one-statement-append.js";
import type { Tables } from "./schema.js";
import { mysqlForms } from "./mysql-forms.js";
import { cachedText } from "./statement-parts.js";

/** The script and its values; `outcome` reads the results of all its statements. */
export interface OneTripAppend {
  sql: string;
  params: unknown[];
  outcome(results: readonly unknown[]): OneStatementOutcome;
}

/** Scripts for turns of up to this many messages are kept, built once; a larger append (an import) builds its own. */
const CACHED_COUNTS = 64;

/**
 * A turn's append on MySQL as ONE script (statements sent together on a connection
 * made with `multipleStatements`), so it costs one round trip instead of a
 * transaction of eight. MySQL has neither data-modifying CTEs nor RETURNING, so the
 * script decides as it goes in session variables (`@memoria_…`, set afresh by every
 * script): the fence on the lock row, the session's row (locked, so concurrent
 * writers of the session queue here, and read for its expiry), and whether the turn
 * is stored already; then, only when all three allow it, the session upsert, its
 * new end, the key fields of a new session, the turn id, the messages, and, when
 * asked, the lock's release, before one COMMIT. The variables are selected before
 * the COMMIT, so a script that fails anywhere failed whole.
 *
 * An expired session (a store with `ttlSeconds`) writes nothing and says so, as
 * does a turn id another transaction inserted meanwhile (the server refuses the
 * duplicate): the caller then runs the transaction, which handles both.
 */
export function oneTripAppend(t: Tables, nowMs: string, ttlMs: number | undefined, maxParams: number, request: AppendRequest): OneTripAppend {
  const { key, id, payloads, turnId, token, release } = request;
  const fields = Object.keys(key);
  const fenced = token !== undefined;
  const releasing = fenced && release;
  const perStatement = Math.floor(maxParams / 3);
  const shape = `mysql-append|${t.sessions}|${ttlMs}|${fields.length}|${payloads.length}|${fenced}|${releasing}`;
  const make = () => build(t, nowMs, ttlMs, fields.length, payloads.length, perStatement, fenced, releasing);
  const sql = payloads.length <= CACHED_COUNTS ? cachedText(shape, make) : make();
  const params: unknown[] = [];
  if (fenced) params.push(id, token);
  params.push(id, id, turnId, id, JSON.stringify(key), payloads.length, payloads.length, id);
  for (const field of fields) params.push(id, field, key[field]);
  params.push(id, turnId);
  for (const payload of payloads) params.push(id, turnId, payload);
  if (releasing) params.push(id, token);
  return {
    sql,
    params,
    // The variables' row: the result before the COMMIT's, the script's last.
    outcome: (results) => appendOutcome((results[results.length - 2] as Record<string, unknown>[] | undefined)?.[0], releasing),
  };
}

function build(
  t: Tables,
  nowMs: string,
  ttlMs: number | undefined,
  fieldCount: number,
  count: number,
  perStatement: number,
  fenced: boolean,
  releasing: boolean,
): string {
  const alive = `(expires_at IS NULL OR expires_at > ${nowMs})`;
  const expires = ttlMs === undefined ? "NULL" : `${nowMs} + ${ttlMs}`;
  const rows = (n: number, select: (i: number) => string, when = "@memoria_ok") =>
    Array.from({ length: n }, (_, i) => `${select(i)} FROM DUAL WHERE ${when}`).join(" UNION ALL ");
  const statements = [
    "START TRANSACTION",
    fenced ? `SELECT COUNT(*) INTO @memoria_passed FROM ${t.locks} WHERE session_id = ? AND owner = ? FOR UPDATE` : "SET @memoria_passed = 1",
    `SELECT COALESCE(SUM(NOT ${alive}), 0) INTO @memoria_expired FROM ${t.sessions} WHERE id = ? FOR UPDATE`,
    `SELECT COUNT(*) INTO @memoria_before FROM ${t.turns} WHERE session_id = ? AND turn_id = ? FOR UPDATE`,
    "SET @memoria_ok = @memoria_passed > 0 AND @memoria_expired = 0 AND @memoria_before = 0",
    `INSERT INTO ${t.sessions} (id, key_json, next_seq, message_count, updated_at, expires_at, created_at, active_at)
       SELECT ?, ?, ?, ?, ${nowMs}, ${expires}, ${nowMs}, ${nowMs} FROM DUAL WHERE @memoria_ok
       ON DUPLICATE KEY UPDATE next_seq = next_seq + VALUES(next_seq), message_count = message_count + VALUES(message_count),
         updated_at = VALUES(updated_at), active_at = VALUES(active_at), expires_at = VALUES(expires_at)`,
    `SELECT COALESCE(MAX(next_seq), 0) INTO @memoria_end FROM ${t.sessions} WHERE id = ? FOR UPDATE`,
    // A new session's key fields, once: its end is this turn's count.
    `INSERT INTO ${t.fields} (session_id, field, value) ${rows(fieldCount, () => "SELECT ?, ?, ?", `@memoria_ok AND @memoria_end = ${count}`)}${mysqlForms.skipExisting("field")}`,
    // A turn id another transaction inserted meanwhile fails the script whole.
    `INSERT INTO ${t.turns} (session_id, turn_id) SELECT ?, ? FROM DUAL WHERE @memoria_ok`,
  ];
  for (let from = 0; from < count; from += perStatement) {
    const n = Math.min(perStatement, count - from);
    statements.push(`INSERT INTO ${t.messages} (session_id, seq, turn_id, payload) ${rows(n, (i) => `SELECT ?, @memoria_end - ${count - from - i}, ?, ?`)}`);
  }
  if (releasing)
    statements.push(`UPDATE ${t.locks} SET owner = '', expires_at = 0 WHERE session_id = ? AND owner = ? AND @memoria_passed > 0 AND @memoria_expired = 0`);
  statements.push("SELECT @memoria_passed AS passed, @memoria_expired AS expired, @memoria_before AS stored_before, @memoria_ok AS inserted", "COMMIT");
  return statements.join(";\n");
}
