import type { Tables } from "./schema.js";
import type { SqlDialect } from "./sql-dialect.js";

/** The statements of a history read: the whole session, and its last n messages. */
export interface ReadStatements {
  /** Parameters: the session id, then the condition's (`readStatements`). */
  all: string;
  last: string;
  lastParams(id: string, last: number, ...condition: unknown[]): unknown[];
}

/**
 * A read goes through the session row (`alive`: its expiry check on `s`, and any
 * condition on it, whose parameters follow the session id), so expiry is checked once,
 * not once per message (a subquery on the clock was re-evaluated for every row,
 * doubling SQLite's fetch). Built once: the dialect finds its prepared statement by
 * the text.
 */
export function readStatements(dialect: SqlDialect, t: Tables, alive: string): ReadStatements {
  const owned = (on = "") => `${t.sessions} s JOIN ${t.messages} m ON m.session_id = s.id${on} WHERE s.id = ? AND ${alive}`;
  const all = `SELECT ${dialect.forms.jsonText("m.payload")} AS payload FROM ${owned()} ORDER BY m.seq`;
  if (dialect.features.windowsByRange) {
    // From the n-th newest sequence number, found on the key's index alone (edits leave
    // gaps, so it is looked up, not computed; sequence numbers start at 0), in order.
    const nthNewest = `(SELECT seq FROM ${t.messages} WHERE session_id = s.id ORDER BY seq DESC LIMIT 1 OFFSET ?)`;
    return {
      all,
      last: `SELECT ${dialect.forms.jsonText("m.payload")} AS payload FROM ${owned(` AND m.seq >= COALESCE(${nthNewest}, 0)`)} ORDER BY m.seq`,
      lastParams: (id, last, ...condition) => [last - 1, id, ...condition],
    };
  }
  return {
    all,
    last: `SELECT ${dialect.forms.jsonText("payload")} AS payload FROM (SELECT m.seq, m.payload FROM ${owned()} ORDER BY m.seq DESC LIMIT ?) w ORDER BY seq`,
    lastParams: (id, last, ...condition) => [id, ...condition, last],
  };
}
