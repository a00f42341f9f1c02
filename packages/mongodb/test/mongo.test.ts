import { runHistoryStoreSuite } from "@memoria/testkit";
import { inject } from "vitest";
import { createMongoStore } from "../src/index.js";

const url = inject("mongoUrl");
const server = inject("mongoServer");
// Each test file uses its own database, so runs against a shared server stay apart.
const dbName = `memoria_test_${process.pid}`;

runHistoryStoreSuite({
  name: `mongodb (${server})`,
  createStore: async () => createMongoStore({ url, dbName }),
  createPeer: async () => createMongoStore({ url, dbName }),
  createStoreWithTtl: async (ttlSeconds) => createMongoStore({ url, dbName, collectionName: "memoria_ttl", ttlSeconds }),
});
