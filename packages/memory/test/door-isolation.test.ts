// The testkit's door isolation suite through the memory tools an agent is given
// (memoryTools, scope userId), over the stores this package tests; the MCP server
// runs the same suite over the server stores (packages/cli).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import { type DoorSetup, doorIsolationSuite, memoryToolsUser, testKeys } from "@memoria/testkit";
import { afterAll } from "vitest";
import { memoryTools } from "../src/tools.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-door-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const toolsDoor: DoorSetup = {
  name: "memoryTools (scope: userId)",
  open(store, userId) {
    const tools = memoryTools({ store, scope: ["userId"] });
    const config = { configurable: { userId, conversationId: "c1" } };
    return memoryToolsUser(store, userId, (name, args) => (tools.find((tool) => tool.name === name) as StructuredToolInterface).invoke(args, config));
  },
};

const stores: [string, () => HistoryStore][] = [
  ["in-memory", () => createInMemoryStore()],
  ["sqlite file", () => createSqliteStore({ path: join(dir, `door-${++n}.db`) })],
  ["sqlite file, encrypted", () => encryptStore(createSqliteStore({ path: join(dir, `door-${++n}.db`) }), { keys: { A: testKeys().A }, activeKeyId: "A" })],
];
for (const [name, createStore] of stores) doorIsolationSuite({ name, createStore: async () => createStore() }, toolsDoor);
