import { basename } from "node:path";
import { privacySuite } from "@memoria/testkit";
import { filesHolding } from "@memoria/testkit/servers";
import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, inject } from "vitest";
import { createMysqlStore, createPostgresStore } from "../src/index.js";
import { sqliteSuiteSetup } from "./fixtures/suite-setup.js";

const sqlite = sqliteSuiteSetup("sqlite");
privacySuite({
  ...sqlite,
  // The database file, its write-ahead log and its lock file, byte for byte.
  scan: async (store, needle) => filesHolding(sqlite.dir, needle).filter((file) => file.startsWith(basename(sqlite.pathOf(store)))),
});

const connectionString = inject("databaseUrl");
const client = new pg.Client({ connectionString });
let connected: Promise<unknown> | undefined;
afterAll(async () => {
  if (connected) await client.end();
});

/** Every row of every table in the database whose text holds `needle`, as `schema.table`. */
async function scanTables(needle: string): Promise<string[]> {
  connected ??= client.connect();
  await connected;
  const { rows: tables } = await client.query<{ s: string; t: string }>(
    "SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
  );
  const places: string[] = [];
  for (const { s, t } of tables) {
    const table = `${client.escapeIdentifier(s)}.${client.escapeIdentifier(t)}`;
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} r WHERE strpos(r::text, $1) > 0`, [needle]);
    if (Number(rows[0]?.n) > 0) places.push(`${s}.${t}`);
  }
  return places;
}

privacySuite({
  name: "postgres",
  createStore: async () => createPostgresStore({ connectionString }),
  createPeer: async () => createPostgresStore({ connectionString }),
  createStoreWithTtl: async (ttlSeconds) => createPostgresStore({ connectionString, tablePrefix: "memoria_ttl_", ttlSeconds }),
  scan: (_store, needle) => scanTables(needle),
});

const uri = inject("mysqlUrl");
const mysqlPool = mysql.createPool({ uri });
afterAll(() => mysqlPool.end());

/** Every table of the MySQL database with a row whose text or bytes hold `needle`. */
async function scanMysqlTables(needle: string): Promise<string[]> {
  const [tables] = await mysqlPool.query("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'");
  const places: string[] = [];
  for (const { t } of tables as { t: string }[]) {
    const [rows] = await mysqlPool.query(`SELECT * FROM \`${t}\``);
    const holds = (rows as Record<string, unknown>[]).some((row) =>
      Object.values(row).some((value) => (Buffer.isBuffer(value) ? value.toString("latin1") : String(value)).includes(needle)),
    );
    if (holds) places.push(t);
  }
  return places;
}

privacySuite({
  name: "mysql",
  createStore: async () => createMysqlStore({ uri }),
  createPeer: async () => createMysqlStore({ uri }),
  createStoreWithTtl: async (ttlSeconds) => createMysqlStore({ uri, tablePrefix: "memoria_ttl_", ttlSeconds }),
  scan: (_store, needle) => scanMysqlTables(needle),
});
