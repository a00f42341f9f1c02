import { runHistoryStoreSuite } from "@memoria/testkit";
import { inject } from "vitest";
import { createPostgresStore } from "../src/index.js";

const connectionString = inject("databaseUrl");

runHistoryStoreSuite({
  name: "postgres",
  createStore: async () => createPostgresStore({ connectionString }),
  createPeer: async () => createPostgresStore({ connectionString }),
  createStoreWithTtl: async (ttlSeconds) => createPostgresStore({ connectionString, tablePrefix: "memoria_ttl_", ttlSeconds }),
});
