/**
 * The SQL that differs between engines beyond connecting and running statements:
 * column types, upsert clauses and rows of parameters. SQLite and PostgreSQL share
 * the standard forms; MySQL / MariaDB has its own (mysql-forms.ts). The store's
 * statements are written once, with these holes in them.
 */

/** What a text column of the schema holds; MySQL must size the ones inside keys (an index holds at most 3072 bytes). */
export type TextRole =
  /** An encoded session or scope key (ASCII). */
  | "id"
  /** A key field's name (ASCII, at most 64). */
  | "field"
  /** A key field's value (at most 256 characters). */
  | "value"
  /** A state value's name (ASCII, at most 64). */
  | "name"
  /** A lock's owner token (a UUID). */
  | "token"
  /** A turn id (at most 128 characters). */
  | "turn"
  /** A recall term (a word or a topic). */
  | "term"
  /** Anything else: a key's JSON, a title, metadata. */
  | "text";

/** The type of one column of parameter rows. */
export type ParamType = "text" | "bigint" | "double";

export interface SqlForms {
  /** The column type for a text column of this role. */
  textType(role: TextRole): string;
  /** Column type for a message's JSON text. */
  readonly jsonType: string;
  /** Column type for raw bytes (recall vectors). */
  readonly blobType: string;
  /** Appended to every `CREATE TABLE` (an engine and default collation, on MySQL). */
  readonly tableOptions: string;
  /** An index's `WHERE` clause, or nothing where the engine has no partial indexes (it then indexes every row). */
  indexWhere(condition: string): string;
  /** A schema for the lock table when locks live apart from the history (SQLite: an attached, unsynced file). */
  readonly lockSchema?: string;
  /** Table kind of the lock table: `"UNLOGGED"` where the engine can skip the WAL (and its flush) for lock rows. */
  readonly lockTableKind?: string;
  /** A statement giving a lock table made by an older version the `lockTableKind`, if it lacks it. */
  convertLockTable?(table: string): string;
  /** An SQL expression for the database's clock, in epoch milliseconds. */
  readonly nowMs: string;
  /** An SQL expression reading a JSON column as its text (drivers that parse JSON would otherwise do it for us). */
  jsonText(column: string): string;
  /** The tail of an INSERT that overwrites `columns` of a row whose key (`keys`) exists. */
  upsert(keys: readonly string[], columns: readonly string[]): string;
  /** The tail of an INSERT that leaves a row whose key exists alone; `run` counts 0 for it. `column` is one of the key's. */
  skipExisting(column: string): string;
  /** A parameter of this type where the engine cannot infer it (`CAST(? AS BIGINT)`), or a plain `?`. */
  param(type: ParamType): string;
  /** A `SELECT` giving `count` rows of parameters, in columns named and typed as `columns`. */
  paramRows(columns: readonly (readonly [string, ParamType])[], count: number): string;
  /** Appended to a fencing `SELECT` to lock the row until commit (`" FOR UPDATE"`), or empty where transactions already exclude each other. */
  readonly forUpdate: string;
  /**
   * Appended to a `SELECT` of sessions rows a write refers to (recall rows), so none is
   * deleted before the write commits (`" FOR KEY SHARE"`: updates of other columns still
   * pass); unset where transactions already exclude each other.
   */
  readonly forKeyShare?: string;
  /** A statement that stops other transactions from locking or writing `table`'s rows until commit, where transactions do not already exclude each other. */
  freezeTable?(table: string): string;
  /** An aggregate giving the group's `[a, b]` pairs as the text of a JSON array (`[]` for none), where the engine holds recall scopes in the process. */
  jsonPairs?(a: string, b: string): string;
  /**
   * An SQL expression for the cosine distance between a vector column and a vector
   * parameter, where the engine can compute it (SQLite with sqlite-vec, loaded on
   * first call); undefined where vectors are ranked in the process.
   */
  vectorDistance?(column: string): string;
}

const SQL_TYPES: Record<ParamType, string> = { text: "TEXT", bigint: "BIGINT", double: "DOUBLE PRECISION" };

/** SQLite's and PostgreSQL's forms: standard SQL, TEXT columns of any length. */
/** The forms an engine's file gives itself: its column types, clock, JSON text and row locks. */
type OwnForms = "jsonType" | "blobType" | "nowMs" | "jsonText" | "forUpdate";
/** Forms one file gives two engines (standardForms for SQLite and PostgreSQL; mysqlForms for MySQL and MariaDB). */
export type SharedForms = Omit<SqlForms, OwnForms>;

export function standardForms(engine: "sqlite" | "postgres"): SharedForms {
  const param = (type: ParamType) => `CAST(? AS ${SQL_TYPES[type]})`;
  return {
    textType: () => "TEXT",
    tableOptions: "",
    indexWhere: (condition) => ` WHERE ${condition}`,
    upsert: (keys, columns) => ` ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(", ")}`,
    skipExisting: () => " ON CONFLICT DO NOTHING",
    param,
    paramRows(columns, count) {
      const row = `(${columns.map(([, type]) => param(type)).join(", ")})`;
      const values = `VALUES ${Array.from({ length: count }, () => row).join(", ")}`;
      // SQLite names a VALUES list's columns column1, column2, …; PostgreSQL takes the names as an alias list.
      if (engine === "sqlite") return `SELECT ${columns.map(([name], i) => `column${i + 1} AS ${name}`).join(", ")} FROM (${values})`;
      return `SELECT * FROM (${values}) AS v (${columns.map(([name]) => name).join(", ")})`;
    },
    jsonPairs: (a, b) => (engine === "sqlite" ? `json_group_array(json_array(${a}, ${b}))` : `COALESCE(json_agg(json_build_array(${a}, ${b})), '[]')::text`),
  };
}
