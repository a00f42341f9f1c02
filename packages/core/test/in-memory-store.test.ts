import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { MemoriaError, type SessionKey, SessionLocks, createInMemoryStore } from "../src/index.js";

// The shared contract is checked by @memoria/testkit (packages/testkit/test);
// these are the in-memory store's own promises.
describe("in-memory store", () => {
  it("drops the least recently used session past maxSessions", async () => {
    const evicted: SessionKey[] = [];
    const store = createInMemoryStore({ maxSessions: 2, onEvict: (key) => evicted.push(key) });
    await store.append({ sessionId: "a" }, [new HumanMessage("a")]);
    await store.append({ sessionId: "b" }, [new HumanMessage("b")]);
    await store.read({ sessionId: "a" }); // a is now the most recently used
    await store.append({ sessionId: "c" }, [new HumanMessage("c")]);
    expect(evicted).toEqual([{ sessionId: "b" }]);
    expect(await store.count({ sessionId: "a" })).toBe(1);
    expect(await store.count({ sessionId: "b" })).toBe(0);
  });

  it("refuses nonsense limits and works no more once closed", async () => {
    expect(() => createInMemoryStore({ maxSessions: 0 })).toThrow(MemoriaError);
    expect(() => createInMemoryStore({ ttlSeconds: -1 })).toThrow(MemoriaError);
    const store = createInMemoryStore();
    await store.close();
    await store.close();
    await expect(store.read({ sessionId: "a" })).rejects.toMatchObject({ code: "STORE_CLOSED" });
  });
});

describe("session locks", () => {
  it("queues holders of one id in order and frees the id when idle", async () => {
    const locks = new SessionLocks();
    const order: number[] = [];
    const run = async (n: number) => {
      const release = await locks.acquire("s");
      order.push(n);
      await new Promise((r) => setTimeout(r, 1));
      release();
    };
    await Promise.all([run(1), run(2), run(3)]);
    expect(order).toEqual([1, 2, 3]);
    expect(locks.isBusy("s")).toBe(false);
  });

  it("gives up a waiting place on abort without blocking those behind", async () => {
    const locks = new SessionLocks();
    const first = await locks.acquire("s");
    const controller = new AbortController();
    const aborted = locks.acquire("s", controller.signal);
    const third = locks.acquire("s");
    controller.abort(new Error("gave up"));
    await expect(aborted).rejects.toThrow("gave up");
    first();
    const releaseThird = await third;
    releaseThird();
    expect(locks.isBusy("s")).toBe(false);
  });
});
