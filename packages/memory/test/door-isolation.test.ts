// The testkit's door isolation suite through the memory tools an agent is given
// (memoryTools, scope userId), over the stores this package tests; the MCP server
// runs the same suite over the server stores (packages/cli).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import { type DoorSetup, doorIsolationSuite, testKeys } from "@memoria/testkit";
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
    const call = (name: string, args: Record<string, unknown>) => (tools.find((tool) => tool.name === name) as StructuredToolInterface).invoke(args, config);
    return {
      async write(secret) {
        // The conversation an app's turn stores, then what the model writes through the tools.
        await store.append({ userId, conversationId: "c1" }, [new HumanMessage(`c1 says ${secret}`), new AIMessage("noted")]);
        await call("remember", { subject: "user", statement: `the fact ${secret}` });
        await call("update_profile", { field: "note", value: `profile ${secret}` });
      },
      async read() {
        const seen = [];
        for (const query of ["fact", "alicesecret", "bobsecret", "profile"]) seen.push(await call("search_memory", { query, include_past: true }));
        for (const conversation of ["conversationId=c1", "c1", `conversationId=c1&userId=${userId}`])
          seen.push(await call("read_conversation", { conversation }));
        return JSON.stringify(seen);
      },
      async change() {
        await call("remember", { subject: "user", statement: "a correction", replaces: ["f1"] });
        await call("update_profile", { field: "note", value: "changed" });
        await call("forget", { id: "f1" });
        await call("forget", { id: "f2" });
      },
    };
  },
};

const stores: [string, () => HistoryStore][] = [
  ["in-memory", () => createInMemoryStore()],
  ["sqlite file", () => createSqliteStore({ path: join(dir, `door-${++n}.db`) })],
  ["sqlite file, encrypted", () => encryptStore(createSqliteStore({ path: join(dir, `door-${++n}.db`) }), { keys: { A: testKeys().A }, activeKeyId: "A" })],
];
for (const [name, createStore] of stores) doorIsolationSuite({ name, createStore: async () => createStore() }, toolsDoor);
