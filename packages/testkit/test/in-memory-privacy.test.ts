import { createInMemoryStore } from "@memoria/core";
import { privacySuite } from "../src/index.js";

privacySuite({
  name: "in-memory",
  createStore: async () => createInMemoryStore(),
  createStoreWithTtl: async (ttlSeconds) => createInMemoryStore({ ttlSeconds }),
});
