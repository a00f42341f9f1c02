export type { SqlHistoryStore, SqlStoreOptions } from "./sql-store.js";
export {
  DEFAULT_SQLITE_PATH,
  type SqliteDatabaseLike,
  type SqliteStatementLike,
  type SqliteStoreOptions,
  createSqliteStore,
} from "./sqlite-dialect.js";
export { type PgClientLike, type PgPoolLike, type PostgresStoreOptions, createPostgresStore } from "./postgres-dialect.js";
export { SCHEMA_VERSION } from "./schema.js";
