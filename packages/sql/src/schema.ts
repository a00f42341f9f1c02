import { MemoriaError } from "@memoria/core";
import { type SqlDialect, all, run } from "./sql-dialect.js";
import type { TextRole } from "./sql-forms.js";
import { postgresRecallVersions, sqliteRecallVersions } from "./recall-versions.js";

/** The tables of one store, named with its prefix. */
export interface Tables {
  version: string;
  sessions: string;
  fields: string;
  messages: string;
  turns: string;
  state: string;
  locks: string;
  recall: string;
  recallTerms: string;
  recallScopes: string;
  recallClock: string;
}

const PREFIX = /^[a-z_][a-z0-9_]{0,40}$/;

/** `lockSchema`: where the engine keeps lock rows, if not beside the rest. */
export function tablesFor(prefix: string, lockSchema?: string): Tables {
  if (!PREFIX.test(prefix)) {
    throw new MemoriaError("INVALID_ARGUMENT", `tablePrefix must match ${PREFIX}, got ${JSON.stringify(prefix)}.`);
  }
  return {
    version: `${prefix}schema_version`,
    sessions: `${prefix}sessions`,
    fields: `${prefix}session_fields`,
    messages: `${prefix}messages`,
    turns: `${prefix}turns`,
    state: `${prefix}state`,
    locks: lockSchema ? `${lockSchema}.${prefix}locks` : `${prefix}locks`,
    recall: `${prefix}recall`,
    recallTerms: `${prefix}recall_terms`,
    recallScopes: `${prefix}recall_scopes`,
    recallClock: `${prefix}recall_clock`,
  };
}

/**
 * Schema migrations, in order; the version table records how many have run. Each
 * is a list of statements, written once for every engine (with its forms' types),
 * but for the recall versions, which each engine keeps its own way.
 */
function migrations(t: Tables, dialect: SqlDialect): string[][] {
  const text = (role: TextRole) => dialect.forms.textType(role);
  const table = dialect.forms.tableOptions;
  return [
    [
      `CREATE TABLE ${t.sessions} (
        id ${text("id")} PRIMARY KEY,
        key_json ${text("text")} NOT NULL,
        next_seq BIGINT NOT NULL,
        message_count BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        expires_at BIGINT
      )${table}`,
      `CREATE INDEX ${t.sessions}_expiry ON ${t.sessions} (expires_at)${dialect.forms.indexWhere("expires_at IS NOT NULL")}`,
      `CREATE TABLE ${t.fields} (
        session_id ${text("id")} NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        field ${text("field")} NOT NULL,
        value ${text("value")} NOT NULL,
        PRIMARY KEY (session_id, field)
      )${table}`,
      `CREATE INDEX ${t.fields}_lookup ON ${t.fields} (field, value, session_id)`,
      `CREATE TABLE ${t.messages} (
        session_id ${text("id")} NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        turn_id ${text("turn")} NOT NULL,
        payload ${dialect.forms.jsonType} NOT NULL,
        PRIMARY KEY (session_id, seq)
      )${table}`,
      `CREATE TABLE ${t.turns} (
        session_id ${text("id")} NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        turn_id ${text("turn")} NOT NULL,
        PRIMARY KEY (session_id, turn_id)
      )${table}`,
    ],
    // 2: derived state of memory strategies (summaries, entities, …), erased with the session.
    [
      `CREATE TABLE ${t.state} (
        session_id ${text("id")} NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        name ${text("name")} NOT NULL,
        value ${dialect.forms.jsonType} NOT NULL,
        PRIMARY KEY (session_id, name)
      )${table}`,
    ],
    // 3: conversation info (creation and activity times, title, metadata), and an index on activity.
    [
      `ALTER TABLE ${t.sessions} ADD COLUMN created_at BIGINT`,
      `ALTER TABLE ${t.sessions} ADD COLUMN active_at BIGINT`,
      `ALTER TABLE ${t.sessions} ADD COLUMN title ${text("text")}`,
      `ALTER TABLE ${t.sessions} ADD COLUMN metadata ${text("text")}`,
      `UPDATE ${t.sessions} SET created_at = updated_at, active_at = updated_at`,
      `CREATE INDEX ${t.sessions}_recent ON ${t.sessions} (active_at DESC, id)`,
    ],
    // 4: recall memory's vectors (no text), erased with the session they came from.
    [
      `CREATE TABLE ${t.recall} (
        session_id ${text("id")} NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        position BIGINT NOT NULL,
        scope_id ${text("id")} NOT NULL,
        at BIGINT NOT NULL,
        embedding ${dialect.forms.blobType} NOT NULL,
        PRIMARY KEY (session_id, position)
      )${table}`,
      `CREATE INDEX ${t.recall}_scope ON ${t.recall} (scope_id, at)`,
    ],
    // 5: recall's lexical index: each embedded message's terms (its words, stemmed, and its topics) with their counts and the message's
    // length in terms, erased with its vector row. The row's `terms` is that length too; NULL on rows indexed before
    // this, which only vectors find.
    [
      `ALTER TABLE ${t.recall} ADD COLUMN terms BIGINT`,
      `CREATE INDEX ${t.recall}_lexical ON ${t.recall} (scope_id, terms)`,
      `CREATE TABLE ${t.recallTerms} (
        session_id ${text("id")} NOT NULL,
        position BIGINT NOT NULL,
        scope_id ${text("id")} NOT NULL,
        term ${text("term")} NOT NULL,
        n BIGINT NOT NULL,
        length BIGINT NOT NULL,
        PRIMARY KEY (scope_id, term, session_id, position),
        FOREIGN KEY (session_id, position) REFERENCES ${t.recall} (session_id, position) ON DELETE CASCADE
      )${table}`,
      `CREATE INDEX ${t.recallTerms}_item ON ${t.recallTerms} (session_id, position)`,
    ],
    // 6: the database's own id (`home`, set once by `migrate`), which recall notes in its progress: a copy of the
    // sessions into another database (`memoria migrate`) carries the progress but not the recall rows.
    [`ALTER TABLE ${t.version} ADD COLUMN home ${text("id")}`],
    // 7: each recall scope's version, which a copy of the scope held in the process checks (recall-versions.ts), on SQLite;
    // 8: the same on PostgreSQL.
    dialect.engine === "sqlite" ? sqliteRecallVersions(t) : [],
    dialect.engine === "postgres" ? postgresRecallVersions(t) : [],
  ];
}

/**
 * The lock table is ensured on every start rather than migrated: it holds nothing
 * worth keeping, and on SQLite it lives in a separate file that may be new.
 */
function lockTable(t: Tables, dialect: SqlDialect): string {
  return `CREATE ${dialect.forms.lockTableKind ?? ""} TABLE IF NOT EXISTS ${t.locks} (
    session_id ${dialect.forms.textType("id")} PRIMARY KEY,
    owner ${dialect.forms.textType("token")} NOT NULL,
    expires_at BIGINT NOT NULL
  )${dialect.forms.tableOptions}`;
}

/** The schema version this code writes. */
export const SCHEMA_VERSION = 8;

/**
 * Brings the schema up to date. Runs under the dialect's exclusive lock, so many
 * processes starting at once on an empty database migrate exactly once.
 */
export async function migrate(dialect: SqlDialect, tables: Tables): Promise<void> {
  await dialect.driver.exclusive(function* () {
    yield* run(`CREATE TABLE IF NOT EXISTS ${tables.version} (version INTEGER NOT NULL)${dialect.forms.tableOptions}`);
    const rows = yield* all<{ version: number | string }>(`SELECT version FROM ${tables.version}`);
    const current = rows.length === 0 ? 0 : Number(rows[0]?.version);
    if (current > SCHEMA_VERSION) {
      throw new MemoriaError(
        "CORRUPT_DATA",
        `The database's memoria schema is version ${current}, newer than this @memoria/sql understands (${SCHEMA_VERSION}). Upgrade @memoria/sql.`,
      );
    }
    const steps = migrations(tables, dialect);
    for (let version = current; version < SCHEMA_VERSION; version++) {
      for (const statement of steps[version] ?? []) yield* run(statement);
    }
    if (rows.length === 0) yield* run(`INSERT INTO ${tables.version} (version) VALUES (?)`, [SCHEMA_VERSION]);
    else if (current < SCHEMA_VERSION) yield* run(`UPDATE ${tables.version} SET version = ?`, [SCHEMA_VERSION]);
    if (current < SCHEMA_VERSION) yield* run(`UPDATE ${tables.version} SET home = ? WHERE home IS NULL`, [crypto.randomUUID()]);
    yield* run(lockTable(tables, dialect));
    if (dialect.forms.convertLockTable) yield* run(dialect.forms.convertLockTable(tables.locks));
  });
}
