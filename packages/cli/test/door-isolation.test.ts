// The testkit's door isolation suite through `memoria mcp`'s server (one scope per
// connection, as --scope and the HTTP bearer bind it), driven by the MCP SDK's own
// client over every kind of store the CLI opens.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HistoryStore } from "@memoria/core";
import { type DoorSetup, doorIsolationSuite, memoryToolsUser } from "@memoria/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, inject } from "vitest";
import { conversationUri, memoriaMcpServer } from "../src/mcp/mcp-server.js";
import { openStore } from "../src/store-url.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-mcp-door-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const mcpDoor: DoorSetup = {
  name: "memoria mcp (one scope per connection)",
  async open(store, userId) {
    const server = await memoriaMcpServer({ store, scope: { userId } });
    const client = new Client({ name: "isolation", version: "1.0.0" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    return memoryToolsUser(store, userId, (name, args) => client.callTool({ name, arguments: args }), {
      // The server's own reads: the scope's conversations as resources, and one named without the scope.
      async reads() {
        const { resources } = await client.listResources();
        const read = await Promise.all(resources.map((resource) => client.readResource({ uri: resource.uri })));
        const unscoped = await client.readResource({ uri: conversationUri("conversationId=c1") }).catch((error: Error) => error.message);
        return [resources, ...read, unscoped];
      },
      async close() {
        await client.close();
        await server.close();
      },
    });
  },
};

const urls: [string, () => string][] = [
  ["sqlite", () => `sqlite:${join(dir, `door-${++n}.db`)}`],
  ["file", () => `file:${join(dir, `door-${++n}`)}`],
  ["postgres", () => `${inject("databaseUrl")}?prefix=door${process.pid}_${++n}_`],
  ["mysql", () => `${inject("mysqlUrl")}?prefix=door${process.pid}_${++n}_`],
  ["redis", () => `${inject("redisUrl")}?prefix=door:${process.pid}:${++n}:`],
  ["mongodb", () => `${inject("mongoUrl")}?prefix=door${process.pid}_${++n}_`],
];
for (const [name, url] of urls) {
  doorIsolationSuite({ name, createStore: async (): Promise<HistoryStore> => (await openStore(url(), { create: true })).store }, mcpDoor);
}
