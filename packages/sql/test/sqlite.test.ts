import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runHistoryStoreSuite } from "@memoria/testkit";
import { afterAll } from "vitest";
import { type SqlHistoryStore, createSqliteStore } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const paths = new WeakMap<SqlHistoryStore, string>();

runHistoryStoreSuite({
  name: "sqlite (file)",
  async createStore() {
    const path = join(dir, `store-${++files}.db`);
    const store = createSqliteStore({ path });
    paths.set(store, path);
    return store;
  },
  // A second connection to the same file, as another process would open it.
  createPeer: async (store) => createSqliteStore({ path: paths.get(store as SqlHistoryStore) }),
  createStoreWithTtl: async (ttlSeconds) => createSqliteStore({ path: join(dir, `ttl-${++files}.db`), ttlSeconds }),
});

runHistoryStoreSuite({
  name: "sqlite (:memory:)",
  createStore: async () => createSqliteStore({ path: ":memory:" }),
});
