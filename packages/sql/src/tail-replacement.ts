import type { SessionKey } from "@memoria/core";
import { randomId } from "@memoria/core/store-kit";
import type { Tables } from "./schema.js";
import { type SqlDialect, type SqlStep, all, run } from "./sql-dialect.js";
import { checkFence } from "./table-lock.js";
import type { TurnWriter } from "./turn-writer.js";

const ROW_PARAMS = 4;

/**
 * An edit's tail replacement as one transaction: the fence, the session row
 * (locked, so no append slips in), the count check, the old tail's rows deleted,
 * the new ones inserted after every sequence number used so far (so order by
 * `seq` stays the session's order), and the count set. Returns the count found:
 * when it is not `tail.count`, nothing was written.
 */
export function* replaceTail(
  dialect: SqlDialect,
  t: Tables,
  writer: TurnWriter,
  key: SessionKey,
  id: string,
  tail: { from: number; count: number; payloads: readonly string[] },
  token: string | undefined,
): Generator<SqlStep, number, unknown> {
  yield* checkFence(dialect, t, key, id, token);
  const alive = `(expires_at IS NULL OR expires_at > ${dialect.forms.nowMs})`;
  const [row] = yield* all<{ message_count: number | string; next_seq: number | string }>(
    `SELECT message_count, next_seq FROM ${t.sessions} WHERE id = ? AND ${alive}${dialect.forms.forUpdate}`,
    [id],
  );
  const found = row ? Number(row.message_count) : 0;
  if (found !== tail.count) return found;
  const n = tail.payloads.length;
  if (n === 0 && tail.from === found) return found;
  if (tail.from < found) {
    yield* run(
      `DELETE FROM ${t.messages} WHERE session_id = ? AND seq >= (SELECT seq FROM (SELECT seq FROM ${t.messages} WHERE session_id = ? ORDER BY seq LIMIT 1 OFFSET ?) AS first_replaced)`,
      [id, id, tail.from],
    );
  }
  // Numbers the new rows after every sequence number ever used (the upsert adds n to both counters).
  const end = yield* writer.upsertSession(key, id, n);
  yield* run(`UPDATE ${t.sessions} SET message_count = ? WHERE id = ?`, [tail.from + n, id]);
  const turnId = randomId("edit.");
  const rowsPerStatement = Math.floor(dialect.features.maxParams / ROW_PARAMS);
  for (let from = 0; from < n; from += rowsPerStatement) {
    const chunk = tail.payloads.slice(from, from + rowsPerStatement);
    const first = end - n + from;
    yield* run(
      `INSERT INTO ${t.messages} (session_id, seq, turn_id, payload) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`,
      chunk.flatMap((payload, i) => [id, first + i, turnId, payload]),
    );
  }
  return found;
}
