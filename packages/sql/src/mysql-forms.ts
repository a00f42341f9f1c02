import type { SharedForms, TextRole } from "./sql-forms.js";

/**
 * The longest encoded session or scope key the MySQL store holds. InnoDB keys hold at
 * most 3072 bytes, and the longest key of the schema (a recall term's: scope, term,
 * session, position) holds two of these and a term.
 */
export const MYSQL_MAX_ID_LENGTH = 1000;

/** The longest recall term MySQL keys, in characters (4 bytes each at most); longer terms are cut to it. */
export const MYSQL_MAX_TERM_LENGTH = 200;

const ASCII = "CHARACTER SET ascii COLLATE ascii_bin";

/**
 * Sized to be keys, and compared exactly, as on the other engines. Text collations
 * ignore trailing spaces (`"pad"` equals `"pad "`), so a key column that may hold
 * them holds bytes (VARBINARY, UTF-8: 4 bytes a character at most); the ASCII ones
 * hold encoded keys and checked names, which have no spaces.
 */
const TEXT_TYPES: Record<TextRole, string> = {
  id: `VARCHAR(${MYSQL_MAX_ID_LENGTH}) ${ASCII}`,
  field: `VARCHAR(64) ${ASCII}`,
  name: `VARCHAR(64) ${ASCII}`,
  token: `VARCHAR(64) ${ASCII}`,
  value: "VARBINARY(1024)",
  turn: "VARBINARY(512)",
  term: `VARBINARY(${4 * MYSQL_MAX_TERM_LENGTH})`,
  // Metadata may be 64 KiB of JSON, one byte more than TEXT holds.
  text: "MEDIUMTEXT",
};

/**
 * MySQL's and MariaDB's forms: sized key columns compared exactly,
 * `ON DUPLICATE KEY UPDATE` for upserts (and no RETURNING: see the dialect's features).
 * Rows changed are counted as changed, not as matched (the connection drops
 * `FOUND_ROWS`), so an upsert that left its row alone counts 0.
 */
export const mysqlForms: SharedForms = {
  textType: (role) => TEXT_TYPES[role],
  tableOptions: " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
  indexWhere: () => "",
  upsert: (_keys, columns) => ` ON DUPLICATE KEY UPDATE ${columns.map((c) => `${c} = VALUES(${c})`).join(", ")}`,
  skipExisting: (column) => ` ON DUPLICATE KEY UPDATE ${column} = ${column}`,
  param: () => "?",
  paramRows(columns, count) {
    // The first row names the columns; text is compared with binary columns, byte for byte.
    const first = columns.map(([name]) => `? AS ${name}`).join(", ");
    const rest = columns.map(() => "?").join(", ");
    return [`SELECT ${first}`, ...Array.from({ length: count - 1 }, () => `SELECT ${rest}`)].join(" UNION ALL ");
  },
};
