import { runHistoryStoreSuite } from "@memoria/testkit";
import { inject } from "vitest";
import { createMysqlStore } from "../src/index.js";

const uri = inject("mysqlUrl");

runHistoryStoreSuite({
  name: "mysql",
  createStore: async () => createMysqlStore({ uri }),
  createPeer: async () => createMysqlStore({ uri }),
  createStoreWithTtl: async (ttlSeconds) => createMysqlStore({ uri, tablePrefix: "memoria_ttl_", ttlSeconds }),
});
