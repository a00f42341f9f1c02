import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DriverFaults, driverFaultSuite } from "@memoria/testkit";
import Database from "better-sqlite3";
import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, inject } from "vitest";
import { createMysqlStore, createPostgresStore, createSqliteStore } from "../src/index.js";

// SQLite: the real better-sqlite3 connection; prepared statements fail as they run, synchronously, as the driver's do.
const dir = mkdtempSync(join(tmpdir(), "memoria-driver-faults-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sqlite = new DriverFaults((owner, name) => {
  if (owner === "database")
    return name === "prepare" ? { fail: "throw", wrap: "statement" } : name === "pragma" || name === "exec" ? { fail: "throw" } : undefined;
  return ["run", "all", "get", "iterate"].includes(name) ? { fail: "throw" } : undefined;
});
const sqliteError = (message: string, code: string) => () => new Database.SqliteError(message, code);
driverFaultSuite({
  name: "sqlite store",
  faults: sqlite,
  async createStore() {
    const database = new Database(join(dir, `faults-${crypto.randomUUID()}.db`));
    database.pragma("journal_mode = WAL");
    return createSqliteStore({ database: sqlite.wrap(database, "database") });
  },
  errors: [
    ["a disk I/O error", sqliteError("disk I/O error", "SQLITE_IOERR_WRITE")],
    ["a full disk", sqliteError("database or disk is full", "SQLITE_FULL")],
    ["a corrupt file", sqliteError("database disk image is malformed", "SQLITE_CORRUPT")],
  ],
});

// PostgreSQL: a real pool; queries and connects fail as pg's do when the server goes away or runs out of disk.
const connectionString = inject("databaseUrl");
const postgres = new DriverFaults((owner, name) => {
  if (owner === "pool") return name === "connect" ? { fail: "reject", wrap: "client" } : name === "query" ? { fail: "reject" } : undefined;
  return name === "query" ? { fail: "reject" } : undefined;
});
const serverError = (message: string, code: string) => () => Object.assign(new pg.DatabaseError(message, message.length, "error"), { code, severity: "FATAL" });
const pools: pg.Pool[] = [];
driverFaultSuite({
  name: "postgres store",
  faults: postgres,
  async createStore() {
    const pool = new pg.Pool({ connectionString, max: 4 });
    pool.on("error", () => {});
    pools.push(pool);
    return createPostgresStore({ pool: postgres.wrap(pool, "pool"), tablePrefix: "memoria_faults_" });
  },
  async destroyStore(store) {
    await store.close();
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
  },
  errors: [
    ["a connection reset", () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104, syscall: "read" })],
    ["the server shutting down", serverError("terminating connection due to administrator command", "57P01")],
    ["a full disk", serverError('could not extend file "base/16384/16385": No space left on device', "53100")],
    ["a serialization failure", serverError("could not serialize access due to concurrent update", "40001")],
  ],
});

// MySQL (MariaDB): a real mysql2 pool; connections and statements fail as mysql2's do on a lost server, a full disk or a deadlock.
const mysqlFaults = new DriverFaults((owner, name) => {
  if (owner === "pool") return name === "getConnection" ? { fail: "reject", wrap: "connection" } : undefined;
  return name === "query" ? { fail: "reject" } : undefined;
});
const mysqlError = (message: string, code: string, errno: number, sqlState: string, fatal?: boolean) => () =>
  Object.assign(new Error(message), { code, errno, sqlState, sqlMessage: message, ...(fatal ? { fatal } : {}) });
const mysqlPools: mysql.Pool[] = [];
driverFaultSuite({
  name: "mysql store",
  faults: mysqlFaults,
  async createStore() {
    const pool = mysql.createPool({ uri: inject("mysqlUrl"), connectionLimit: 4, flags: ["-FOUND_ROWS"] });
    mysqlPools.push(pool);
    return createMysqlStore({ pool: mysqlFaults.wrap(pool, "pool"), tablePrefix: "memoria_faults_" });
  },
  async destroyStore(store) {
    await store.close();
    await Promise.all(mysqlPools.splice(0).map((pool) => pool.end()));
  },
  errors: [
    ["a connection reset", () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104, syscall: "read", fatal: true })],
    ["the server shutting down", mysqlError("Server shutdown in progress", "ER_SERVER_SHUTDOWN", 1053, "08S01", true)],
    ["a full disk", mysqlError("The table 'memoria_faults_messages' is full", "ER_RECORD_FILE_FULL", 1114, "HY000")],
    ["a deadlock", mysqlError("Deadlock found when trying to get lock; try restarting transaction", "ER_LOCK_DEADLOCK", 1213, "40001")],
  ],
});
