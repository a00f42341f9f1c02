import { createRequire } from "node:module";
import { join } from "node:path";
import { faultSuite } from "@memoria/testkit";
import { jongodbBinary, startJongodb } from "@memoria/testkit/servers";
import { inject } from "vitest";
import { createMongoStore } from "../src/index.js";

const inMemory = "the compatible test server keeps its data in memory, so it comes back empty after a";
if (inject("mongoServer") === "jongodb") {
  faultSuite({
    name: "mongodb (jongodb)",
    async start() {
      const server = await startJongodb(jongodbBinary(createRequire(import.meta.url)));
      return {
        url: server.url,
        pause: () => process.kill(server.pid, "SIGSTOP"),
        resume: () => process.kill(server.pid, "SIGCONT"),
        stop: async () => {
          process.kill(server.pid, "SIGCONT");
          await server.stop();
        },
      };
    },
    createStore: (url, { operationTimeoutMs }) => createMongoStore({ url, dbName: "memoria_faults", operationTimeoutMs }),
    storeModule: join(import.meta.dirname, "fixtures", "mongo-store.ts"),
    skip: {
      restart: `${inMemory} restart; against a real mongod (MONGODB_URL) restarts are not driven by this suite`,
      crash: `${inMemory} kill`,
      terminateConnections: "the compatible test server has no command to end other clients' connections",
    },
  });
} else {
  faultSuite({
    name: "mongodb (mongod at MONGODB_URL)",
    start: async () => ({ url: inject("mongoUrl"), stop: async () => {} }),
    createStore: (url, { operationTimeoutMs }) => createMongoStore({ url, dbName: "memoria_faults", operationTimeoutMs }),
    storeModule: join(import.meta.dirname, "fixtures", "mongo-store.ts"),
    skip: {
      restart: "the suite does not own the mongod at MONGODB_URL",
      crash: "the suite does not own the mongod at MONGODB_URL",
      pause: "the suite does not own the mongod at MONGODB_URL",
      terminateConnections: "the suite does not own the mongod at MONGODB_URL",
    },
  });
}
