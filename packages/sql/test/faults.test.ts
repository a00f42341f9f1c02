import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { faultSuite } from "@memoria/testkit";
import { type RunningPostgres, startMariadb, startPostgres } from "@memoria/testkit/servers";
import { createMysqlStore, createPostgresStore, createSqliteStore } from "../src/index.js";

/** A server the fault suite may break, from a started PostgreSQL or MariaDB. */
function faulty(server: RunningPostgres) {
  return {
    url: server.url,
    restart: () => server.restart(),
    crash: () => server.crash(),
    pause: () => server.pause(),
    resume: () => server.resume(),
    terminateConnections: () => server.terminateConnections(),
    stop: () => server.stop(),
  };
}

faultSuite({
  name: "postgres",
  start: async () => faulty(await startPostgres({ durable: true })),
  createStore: (url, { operationTimeoutMs }) => createPostgresStore({ connectionString: url, operationTimeoutMs }),
  storeModule: join(import.meta.dirname, "fixtures", "postgres-store.ts"),
});

faultSuite({
  name: "mysql (MariaDB)",
  start: async () => faulty(await startMariadb({ durable: true })),
  createStore: (url, { operationTimeoutMs }) => createMysqlStore({ uri: url, operationTimeoutMs }),
  storeModule: join(import.meta.dirname, "fixtures", "mysql-store.ts"),
});

const embedded = "SQLite is embedded: there is no server to";
faultSuite({
  name: "sqlite",
  async start() {
    const dir = mkdtempSync(join(tmpdir(), "memoria-sqlite-faults-"));
    return { url: join(dir, "history.db"), stop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  createStore: (path) => createSqliteStore({ path }),
  storeModule: join(import.meta.dirname, "fixtures", "sqlite-store.ts"),
  skip: {
    restart: `${embedded} restart (a process killed mid-turn is the scenario that applies)`,
    crash: `${embedded} kill`,
    pause: `${embedded} freeze`,
    terminateConnections: `${embedded} cut off`,
  },
});
