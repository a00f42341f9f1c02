import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privacySuite } from "@memoria/testkit";
import { filesHolding } from "@memoria/testkit/servers";
import { afterAll } from "vitest";
import { createFileStore } from "../src/index.js";

const root = mkdtempSync(join(tmpdir(), "memoria-file-privacy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const directories = new WeakMap<object, string>();

privacySuite({
  name: "file",
  async createStore() {
    const directory = join(root, `store-${++n}`);
    const store = createFileStore({ directory, fsync: "none" });
    directories.set(store, directory);
    return store;
  },
  createPeer: async (store) => createFileStore({ directory: directories.get(store) as string, fsync: "none" }),
  createStoreWithTtl: async (ttlSeconds) => createFileStore({ directory: join(root, `ttl-${++n}`), ttlSeconds }),
  // Every file of the store's folder (session files, ledgers, locks), byte for byte.
  scan: async (store, needle) => filesHolding(directories.get(store) as string, needle),
});
