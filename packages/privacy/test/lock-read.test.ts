import { randomBytes } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, type LockOptions, type MemoryStrategy, RunnableWithMessageHistory, type SessionKey, createInMemoryStore } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { encryptStore, guardStore, redactStore } from "../src/index.js";

/** An in-memory store whose lock reads with it where asked (as Redis's does), counting every call made to it. */
function countedReadingStore() {
  const inner = createInMemoryStore();
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || property === "history") return value;
      if (property === "lock") {
        return async (key: SessionKey, options?: LockOptions) => {
          calls.push(options?.read ? "lock+read" : "lock");
          const lock = await (inner.lock as NonNullable<HistoryStore["lock"]>)(key, options);
          if (options?.read) lock.messages = await inner.read(key, options.read);
          return lock;
        };
      }
      return (...args: unknown[]) => {
        calls.push(String(property));
        return value.apply(target, args);
      };
    },
  });
  return { store, calls };
}

const window: MemoryStrategy = { name: "last-4", load: ({ read }) => read({ last: 4 }), firstRead: { last: 4 } };
const seen: string[][] = [];
const model = RunnableLambda.from((messages: BaseMessage[]) => {
  seen.push(messages.map((m) => String(m.content)));
  return new AIMessage(`answer ${seen.length}`);
});

describe("a turn's first read taken with the lock, through the wrappers", () => {
  for (const [name, wrap] of [
    ["encryptStore", (s: HistoryStore) => encryptStore(s, { keys: { A: randomBytes(32) }, activeKeyId: "A" })],
    ["redactStore over encryptStore", (s: HistoryStore) => redactStore(encryptStore(s, { keys: { A: randomBytes(32) }, activeKeyId: "A" }))],
    ["guardStore over encryptStore", (s: HistoryStore) => guardStore(encryptStore(s, { keys: { A: randomBytes(32) }, activeKeyId: "A" }), () => true)],
  ] as const) {
    it(`${name}: a turn asks the inner store for its lock with the read and for the append, nothing else, and sees every turn before it`, async () => {
      const { store: inner, calls } = countedReadingStore();
      const chain = new RunnableWithMessageHistory({ runnable: model, store: wrap(inner), memory: window });
      const key = { sessionId: "s" };
      seen.length = 0;
      await chain.invoke([new HumanMessage("q1")], { configurable: key });
      await chain.invoke([new HumanMessage("q2")], { configurable: key }); // the data key is known from here on
      calls.length = 0;
      await chain.invoke([new HumanMessage("q3")], { configurable: key });
      expect(calls).toEqual(["lock+read", "append"]);
      expect(seen[2]).toEqual(["q1", "answer 1", "q2", "answer 2", "q3"]);
    });
  }

  it("guardStore checks read access too when a lock reads", async () => {
    const actions: string[] = [];
    const store = guardStore(createInMemoryStore(), ({ action }) => {
      actions.push(action);
      return action !== "read";
    });
    const lock = store.lock?.bind(store) as NonNullable<HistoryStore["lock"]>;
    await (await lock({ sessionId: "s" })).release();
    await expect(lock({ sessionId: "s" }, { read: {} })).rejects.toMatchObject({ code: "FORBIDDEN", action: "read" });
    expect(actions).toEqual(["append", "append", "read"]);
  });
});
