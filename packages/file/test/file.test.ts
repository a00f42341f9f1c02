import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runHistoryStoreSuite } from "@memoria/testkit";
import { afterAll } from "vitest";
import { type FileHistoryStore, createFileStore } from "../src/index.js";

const root = mkdtempSync(join(tmpdir(), "memoria-file-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const directories = new WeakMap<FileHistoryStore, string>();

runHistoryStoreSuite({
  name: "file",
  async createStore() {
    const directory = join(root, `store-${++n}`);
    const store = createFileStore({ directory, fsync: "none" });
    directories.set(store, directory);
    return store;
  },
  createPeer: async (store) => createFileStore({ directory: directories.get(store as FileHistoryStore) as string, fsync: "none" }),
  createStoreWithTtl: async (ttlSeconds) => createFileStore({ directory: join(root, `ttl-${++n}`), ttlSeconds }),
  largeSessionSize: 2_000,
});
