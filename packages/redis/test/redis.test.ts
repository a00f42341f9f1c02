import { runHistoryStoreSuite } from "@memoria/testkit";
import { Cluster, Redis } from "ioredis";
import { afterAll, inject } from "vitest";
import { createRedisStore } from "../src/index.js";

const url = inject("redisUrl");
const nodes = inject("clusterNodes");

runHistoryStoreSuite({
  name: "redis (standalone)",
  createStore: async () => createRedisStore({ url }),
  createPeer: async () => createRedisStore({ url }),
  createStoreWithTtl: async (ttlSeconds) => createRedisStore({ url, keyPrefix: "memoria-ttl:", ttlSeconds }),
});

// Stores on the application's own clients do not close them: the test does.
const clients: (Redis | Cluster)[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
});
function onClient(client: Redis | Cluster, options: { ttlSeconds?: number; keyPrefix?: string } = {}) {
  clients.push(client);
  return createRedisStore({ client, ...options });
}

runHistoryStoreSuite({
  name: "redis (cluster of 3 masters)",
  createStore: async () => onClient(new Cluster(nodes)),
  createPeer: async () => onClient(new Cluster(nodes)),
  createStoreWithTtl: async (ttlSeconds) => onClient(new Cluster(nodes), { keyPrefix: "memoria-ttl:", ttlSeconds }),
});

const sentinel = inject("sentinel");
if (sentinel) {
  // Through Sentinel: the client asks the sentinel where the master is.
  runHistoryStoreSuite({
    name: "redis (through Sentinel)",
    createStore: async () =>
      onClient(new Redis({ sentinels: [{ host: sentinel.host, port: sentinel.port }], name: sentinel.name }), { keyPrefix: "memoria-sentinel:" }),
  });
}

runHistoryStoreSuite({
  name: "redis (an application's Redis client)",
  createStore: async () => onClient(new Redis(url)),
});
