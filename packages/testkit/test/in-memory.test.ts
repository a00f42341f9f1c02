import { createInMemoryStore } from "@memoria/core";
import { runHistoryStoreSuite } from "../src/index.js";

runHistoryStoreSuite({
  name: "in-memory",
  createStore: async () => createInMemoryStore(),
  createStoreWithTtl: async (ttlSeconds) => createInMemoryStore({ ttlSeconds }),
});

runHistoryStoreSuite({
  name: "in-memory (frozen)",
  frozenReads: true,
  createStore: async () => createInMemoryStore({ frozen: true }),
  createStoreWithTtl: async (ttlSeconds) => createInMemoryStore({ ttlSeconds, frozen: true }),
});
