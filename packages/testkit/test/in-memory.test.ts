import { createInMemoryStore } from "@memoria/core";
import { runHistoryStoreSuite } from "../src/index.js";

runHistoryStoreSuite({
  name: "in-memory",
  frozenReads: true,
  createStore: async () => createInMemoryStore(),
  createStoreWithTtl: async (ttlSeconds) => createInMemoryStore({ ttlSeconds }),
});

runHistoryStoreSuite({
  name: "in-memory (copies)",
  createStore: async () => createInMemoryStore({ frozen: false }),
  createStoreWithTtl: async (ttlSeconds) => createInMemoryStore({ ttlSeconds, frozen: false }),
});
