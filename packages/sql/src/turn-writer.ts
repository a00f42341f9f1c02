import { LockLostError, type SessionKey } from "@memoria/core";
/** What a turn's append did: stored or not (a turn id seen before), and whether the lock went back with it. */
type TurnAppendResult = { appended: boolean; released?: boolean };
import { oneTripAppend } from "./mysql-one-trip.js";
import { type AppendRequest, type OneStatementOutcome, oneStatementAppend } from "./one-statement-append.js";
import { oneStatementStates } from "./one-statement-states.js";
import type { Tables } from "./schema.js";
import { Rollback, type SqlDialect, type SqlDriver, type SqlStep, all, run } from "./sql-dialect.js";
import { checkFence, releaseStatement } from "./table-lock.js";

const ROW_PARAMS = 4;

/** How a SQL store writes: a turn's append, and the session upsert that state writes share. */
export interface TurnWriter {
  /** Creates or renews the session row, adding `count` to its sequence; gives the sequence's new end. */
  upsertSession(key: SessionKey, id: string, count: number): Generator<SqlStep, number, unknown>;
  /** A turn's messages under `turnId`, fenced by the lock `token` when given, which `release` gives back in the same step. */
  append(key: SessionKey, id: string, payloads: readonly string[], turnId: string, token: string | undefined, release: boolean): Promise<TurnAppendResult>;
  /** State values (name and JSON text) written together, fenced as an append is: one statement where the dialect writes so, else one transaction. */
  setStates(key: SessionKey, id: string, entries: readonly (readonly [string, string])[], token: string | undefined): Promise<void>;
}

export function turnWriter(dialect: SqlDialect, t: Tables, ttlMs: number | undefined): TurnWriter {
  const now = dialect.forms.nowMs;
  const alive = (column: string) => `(${column} IS NULL OR ${column} > ${now})`;

  const setExpiry = ttlMs === undefined ? "NULL" : `${now} + ${ttlMs}`;
  const insertSession = `INSERT INTO ${t.sessions} (id, key_json, next_seq, message_count, updated_at, expires_at, created_at, active_at)
         VALUES (?, ?, ?, ?, ${now}, ${setExpiry}, ${now}, ${now})`;

  /** The upsert as `ON CONFLICT … DO UPDATE … WHERE … RETURNING`: one statement, which gives no row for an expired session. */
  function* conditionalUpsert(key: SessionKey, id: string, count: number): Generator<SqlStep, number | undefined, unknown> {
    const [row] = yield* all<{ next_seq: number | string }>(
      `${insertSession}
         ON CONFLICT (id) DO UPDATE SET
           next_seq = ${t.sessions}.next_seq + excluded.next_seq,
           message_count = ${t.sessions}.message_count + excluded.message_count,
           updated_at = excluded.updated_at,
           expires_at = excluded.expires_at${count > 0 ? ",\n           active_at = excluded.active_at" : ""}
         WHERE ${alive(`${t.sessions}.expires_at`)}
         RETURNING next_seq`,
      [id, JSON.stringify(key), count, count],
    );
    return row === undefined ? undefined : Number(row.next_seq);
  }

  /**
   * MySQL's upsert has neither a condition nor RETURNING: each column keeps its value
   * unless the session is alive (the expiry, which the conditions read, is assigned
   * last), and a read of the row, locked by the upsert, gives the sequence's end.
   */
  function* upsertThenRead(key: SessionKey, id: string, count: number): Generator<SqlStep, number | undefined, unknown> {
    const live = alive("expires_at");
    const renewed = (column: string, value: string) => `${column} = IF(${live}, ${value}, ${column})`;
    yield* run(
      `${insertSession} ON DUPLICATE KEY UPDATE ${[
        renewed("next_seq", "next_seq + VALUES(next_seq)"),
        renewed("message_count", "message_count + VALUES(message_count)"),
        renewed("updated_at", "VALUES(updated_at)"),
        ...(count > 0 ? [renewed("active_at", "VALUES(active_at)")] : []),
        renewed("expires_at", "VALUES(expires_at)"),
      ].join(", ")}`,
      [id, JSON.stringify(key), count, count],
    );
    const [row] = yield* all<{ next_seq: number | string; live: number | string }>(`SELECT next_seq, ${live} AS live FROM ${t.sessions} WHERE id = ?`, [id]);
    return row && Number(row.live) === 1 ? Number(row.next_seq) : undefined;
  }

  /**
   * The row lock the upsert takes orders concurrent writers of the session. An
   * expired session starts afresh: the upsert leaves it alone (still locking it),
   * its old rows go, and the upsert runs again, so the common case is one statement
   * (two on MySQL).
   */
  function* upsertSession(key: SessionKey, id: string, count: number): Generator<SqlStep, number, unknown> {
    const upsert = dialect.features.returning ? conditionalUpsert : upsertThenRead;
    let end = yield* upsert(key, id, count);
    if (end === undefined) {
      yield* run(`DELETE FROM ${t.sessions} WHERE id = ?`, [id]);
      end = yield* upsert(key, id, count);
    }
    if (end === count) {
      // Possibly new (a session with only state also has end 0): its key fields, once.
      const fields = Object.keys(key);
      yield* run(
        `INSERT INTO ${t.fields} (session_id, field, value) VALUES ${fields.map(() => "(?, ?, ?)").join(", ")}${dialect.forms.skipExisting("field")}`,
        fields.flatMap((field) => [id, field, key[field]]),
      );
    }
    return end as number;
  }

  /** The append as a transaction; the lock's release, when asked, is its last statement. */
  function* appendTurn(
    key: SessionKey,
    id: string,
    payloads: readonly string[],
    turnId: string,
    token: string | undefined,
    release: boolean,
  ): Generator<SqlStep, TurnAppendResult, unknown> {
    yield* checkFence(dialect, t, key, id, token);
    const end = yield* upsertSession(key, id, payloads.length);
    const inserted = yield* run(`INSERT INTO ${t.turns} (session_id, turn_id) VALUES (?, ?)${dialect.forms.skipExisting("turn_id")}`, [id, turnId]);
    if (inserted === 0) throw new Rollback({ appended: false }); // this turn is stored already
    const rowsPerStatement = Math.floor(dialect.features.maxParams / ROW_PARAMS);
    for (let from = 0; from < payloads.length; from += rowsPerStatement) {
      const chunk = payloads.slice(from, from + rowsPerStatement);
      const first = end - payloads.length + from;
      yield* run(
        `INSERT INTO ${t.messages} (session_id, seq, turn_id, payload) VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}`,
        chunk.flatMap((payload, i) => [id, first + i, turnId, payload]),
      );
    }
    if (!release) return { appended: true };
    yield* run(releaseStatement(t), [id, token]);
    return { appended: true, released: true };
  }

  function* writeStates(
    key: SessionKey,
    id: string,
    entries: readonly (readonly [string, string])[],
    token: string | undefined,
  ): Generator<SqlStep, void, unknown> {
    yield* checkFence(dialect, t, key, id, token);
    yield* upsertSession(key, id, 0);
    const rowsPerStatement = Math.floor(dialect.features.maxParams / 3);
    for (let from = 0; from < entries.length; from += rowsPerStatement) {
      const chunk = entries.slice(from, from + rowsPerStatement);
      yield* run(
        `INSERT INTO ${t.state} (session_id, name, value) VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")}${dialect.forms.upsert(["session_id", "name"], ["value"])}`,
        chunk.flatMap(([name, text]) => [id, name, text]),
      );
    }
  }

  /** The append as one statement (PostgreSQL). */
  async function statementAppend(request: AppendRequest): Promise<OneStatementOutcome> {
    const statement = oneStatementAppend(t, now, ttlMs, request);
    const [row] = await dialect.driver.execute<Record<string, unknown>[]>({ kind: "all", sql: statement.sql, params: statement.params });
    return statement.outcome(row);
  }

  /** The append as one script (MySQL); undefined when it met a turn id another transaction inserted meanwhile (nothing written). */
  async function scriptAppend(request: AppendRequest): Promise<OneStatementOutcome | undefined> {
    const script = oneTripAppend(t, now, ttlMs, dialect.features.maxParams, request);
    const results = await (dialect.driver.script as NonNullable<SqlDriver["script"]>)(script.sql, script.params);
    return results && script.outcome(results);
  }

  /**
   * The dialect's append in one round trip, chosen once: a statement, a script, or
   * none (SQLite, whose transaction runs in the process). The transaction
   * (`appendTurn`) runs where there is none, and where one found the session expired
   * or gave no outcome.
   */
  const appendInOne = dialect.features.writesInOneStatement ? statementAppend : dialect.driver.script ? scriptAppend : undefined;

  return {
    upsertSession,
    async setStates(key, id, entries, token) {
      if (dialect.features.writesInOneStatement) {
        const statement = oneStatementStates(t, now, ttlMs, key, id, entries, token);
        const [row] = await dialect.driver.execute<Record<string, unknown>[]>({ kind: "all", sql: statement.sql, params: statement.params });
        const outcome = statement.outcome(row);
        if (!outcome.expired) {
          if (outcome.lockLost) throw new LockLostError(key);
          return;
        }
      }
      await dialect.driver.transaction(() => writeStates(key, id, entries, token));
    },
    async append(key, id, payloads, turnId, token, release) {
      const outcome = appendInOne && (await appendInOne({ key, id, payloads, turnId, token, release }));
      if (outcome && !outcome.expired) {
        if (outcome.lockLost) throw new LockLostError(key);
        return outcome.released ? { appended: outcome.appended, released: true } : { appended: outcome.appended };
      }
      return dialect.driver.transaction(() => appendTurn(key, id, payloads, turnId, token, release));
    },
  };
}
