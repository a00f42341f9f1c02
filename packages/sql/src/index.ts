export type { SqlHistoryStore, SqlStoreOptions } from "./sql-store.js";
export {
  DEFAULT_SQLITE_PATH,
  type SqliteDatabaseLike,
  type SqliteStatementLike,
  type SqliteStoreOptions,
  createSqliteStore,
} from "./sqlite-dialect.js";
export { type HeldRecallOptions, defaultRecallCacheBytes } from "./recall-scope-cache.js";
export { type PgClientLike, type PgPoolLike, type PgQuery, type PostgresStoreOptions, createPostgresStore } from "./postgres-dialect.js";
export { SCHEMA_VERSION } from "./schema.js";
export { type MysqlConnectionLike, type MysqlPoolLike, type MysqlStoreOptions, createMysqlStore } from "./mysql-dialect.js";
export { MYSQL_MAX_ID_LENGTH } from "./mysql-forms.js";
