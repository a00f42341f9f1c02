import { DriverFaults, driverFaultSuite } from "@memoria/testkit";
import { Redis, ReplyError } from "ioredis";
import { inject } from "vitest";
import { createRedisStore } from "../src/index.js";

const url = inject("redisUrl");

// ioredis's own calls that do not reach the server: events, connection management, pipelines being built.
const LOCAL = new Set([
  "on",
  "once",
  "off",
  "addListener",
  "removeListener",
  "removeAllListeners",
  "emit",
  "listeners",
  "listenerCount",
  "setMaxListeners",
  "duplicate",
  "connect",
  "disconnect",
  "quit",
  "defineCommand",
]);
const faults = new DriverFaults((owner, name) => {
  if (owner === "pipeline") return name === "exec" ? { fail: "reject" } : undefined;
  if (name === "pipeline" || name === "multi") return { wrap: "pipeline" };
  return LOCAL.has(name) ? undefined : { fail: "reject" };
});

const clients: Redis[] = [];
driverFaultSuite({
  name: "redis store",
  faults,
  async createStore() {
    const client = new Redis(url, { maxRetriesPerRequest: 2 });
    client.on("error", () => {});
    clients.push(client);
    return createRedisStore({ client: faults.wrap(client, "client"), keyPrefix: `faults-${crypto.randomUUID().slice(0, 8)}:` });
  },
  async destroyStore(store) {
    await store.close();
    await Promise.all(clients.splice(0).map((client) => client.quit()));
  },
  errors: [
    // What ioredis rejects with once the connection is gone and its retries are spent.
    ["a lost connection", () => new Error("Connection is closed.")],
    ["a failover (a replica answering)", () => new ReplyError("READONLY You can't write against a read only replica.")],
    ["a server out of memory", () => new ReplyError("OOM command not allowed when used memory > 'maxmemory'.")],
  ],
});
