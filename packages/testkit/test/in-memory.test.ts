import { createInMemoryStore } from "@memoria/core";
import { runHistoryStoreSuite } from "../src/index.js";

runHistoryStoreSuite({
  name: "in-memory",
  createStore: async () => createInMemoryStore(),
  createStoreWithTtl: async (ttlSeconds) => createInMemoryStore({ ttlSeconds }),
});
