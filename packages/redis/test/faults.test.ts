import { join } from "node:path";
import { faultSuite } from "@memoria/testkit";
import { startRedis, startRedisCluster } from "@memoria/testkit/servers";
import { Cluster } from "ioredis";
import { createRedisStore } from "../src/index.js";

faultSuite({
  name: "redis (standalone)",
  async start() {
    const server = await startRedis();
    return {
      url: server.url,
      restart: () => server.restartGracefully(),
      crash: () => server.crash(),
      pause: () => server.pause(),
      resume: () => server.resume(),
      terminateConnections: () => server.terminateConnections(),
      stop: () => server.stop(),
    };
  },
  createStore: (url, { operationTimeoutMs }) => createRedisStore({ url, operationTimeoutMs }),
  storeModule: join(import.meta.dirname, "fixtures", "redis-store.ts"),
});

// Each fault hits every master, so it reaches whichever one serves the session's slot.
const clients: Cluster[] = [];
faultSuite({
  name: "redis (cluster of 3 masters)",
  async start() {
    const cluster = await startRedisCluster();
    const all = (action: (server: (typeof cluster.servers)[number]) => unknown) => Promise.all(cluster.servers.map(action));
    return {
      url: JSON.stringify(cluster.nodes),
      restart: async () => {
        await all((s) => s.restartGracefully());
        await cluster.ready();
      },
      crash: async () => {
        await all((s) => s.crash());
        await cluster.ready();
      },
      pause: () => void all((s) => s.pause()),
      resume: () => void all((s) => s.resume()),
      terminateConnections: async () => {
        await all((s) => s.terminateConnections());
      },
      stop: async () => {
        await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
        await cluster.stop();
      },
    };
  },
  createStore: (nodes, { operationTimeoutMs }) => {
    const client = new Cluster(JSON.parse(nodes));
    client.on("error", () => {});
    clients.push(client);
    return createRedisStore({ client, operationTimeoutMs });
  },
  storeModule: join(import.meta.dirname, "fixtures", "redis-cluster-store.ts"),
});
