// The testkit's door isolation suite through LangGraph's two doors, MemoriaSaver
// (threads per user by keyFields) and MemoriaStore (a namespace per user), over
// every kind of store this package tests: two users, every call, nothing crosses.
import { HumanMessage } from "@langchain/core/messages";
import type { HistoryStore } from "@memoria/core";
import { type DoorSetup, doorIsolationSuite } from "@memoria/testkit";
import { inject } from "vitest";
import { MemoriaSaver, MemoriaStore } from "../src/index.js";
import { echoGraph } from "./echo-graph.js";
import { type EmbeddedKind, type FreshStore, type ServerKind, freshStore, serverStore } from "./stores.js";

const saverDoor: DoorSetup = {
  name: "MemoriaSaver (keyFields: userId)",
  open(store, userId) {
    const saver = new MemoriaSaver({ store, keyFields: ["userId"] });
    const graph = echoGraph(saver);
    const config = (thread: string) => ({ configurable: { thread_id: thread, userId } });
    return {
      async write(secret) {
        await graph.invoke({ messages: [new HumanMessage(`t1 says ${secret}`)] }, config("t1"));
        await graph.invoke({ messages: [new HumanMessage(`t2 says ${secret}`)] }, config("t2"));
      },
      async read() {
        const seen: unknown[] = [];
        for (const thread of ["t1", "t2"]) {
          seen.push(await saver.getTuple(config(thread)), (await graph.getState(config(thread))).values);
          for await (const tuple of saver.list(config(thread))) seen.push(tuple);
          for await (const state of graph.getStateHistory(config(thread))) seen.push(state.values);
        }
        for await (const tuple of saver.list({ configurable: { userId } })) seen.push(tuple);
        return JSON.stringify(seen);
      },
      async change() {
        const head = await saver.getTuple(config("t2"));
        await saver.putWrites(head?.config ?? config("t2"), [["messages", [new HumanMessage("a pending write")]]], "task-1");
        await graph.invoke({ messages: [new HumanMessage("another turn")] }, config("t2"));
        await graph.updateState(config("t2"), { messages: [new HumanMessage("an update")] });
        await saver.deleteThread("t1", { userId });
      },
      close: () => saver.releaseLocks(),
    };
  },
};

const storeDoor: DoorSetup = {
  name: "MemoriaStore (a namespace per user)",
  open(store, userId) {
    const items = new MemoriaStore({ store, scope: { fields: ["userId"], of: (namespace) => ({ userId: namespace[1] }) } });
    const mine = ["memories", userId];
    return {
      async write(secret) {
        await items.put(mine, "k1", { text: `k1 holds ${secret}` });
        await items.put([...mine, "notes"], "k2", { text: `k2 holds ${secret}` });
      },
      async read() {
        return JSON.stringify([
          await items.get(mine, "k1"),
          await items.get([...mine, "notes"], "k2"),
          await items.search(mine),
          await items.search(mine, { filter: { text: "k1" } }),
          await items.listNamespaces({ prefix: mine }),
        ]);
      },
      async change() {
        await items.delete(mine, "k1");
        await items.put([...mine, "notes"], "k2", { text: "replaced" });
        await items.batch([{ namespace: mine, key: "k3", value: { text: "added" } }]);
      },
    };
  },
};

const urls: Record<ServerKind, string> = { postgres: inject("databaseUrl"), redis: inject("redisUrl"), "redis cluster": "", mongodb: inject("mongoUrl") };
const kinds: [string, () => FreshStore | Promise<FreshStore>][] = [
  ...(["memory", "sqlite", "file", "sqlite, guarded, redacted and encrypted"] as EmbeddedKind[]).map((kind): [string, () => FreshStore] => [
    kind,
    () => freshStore(kind),
  ]),
  ...(["postgres", "redis", "mongodb"] as ServerKind[]).map((kind): [string, () => Promise<FreshStore>] => [kind, () => serverStore(kind, urls[kind])]),
];

for (const [name, open] of kinds) {
  const held = new Map<HistoryStore, FreshStore>();
  const setup = {
    name,
    async createStore() {
      const fresh = await open();
      held.set(fresh.store, fresh);
      return fresh.store;
    },
    destroyStore: async (store: HistoryStore) => held.get(store)?.dispose(),
  };
  for (const door of [saverDoor, storeDoor]) doorIsolationSuite(setup, door);
}
