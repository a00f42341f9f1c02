import { RunnableWithMessageHistory as LangChainRunnableWithMessageHistory } from "@langchain/core/runnables";
import { RunnableLambda } from "@langchain/core/runnables";
import type { BaseMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { type HistoryStore, RunnableWithMessageHistory } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered, randomKey, transcript } from "../fixtures.js";
import { useStore, withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** The store inside LangChain's wrapper, inside ours, and its cross-process lock. */
export function interopSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: interop`, () => {
    const store = useStore(setup);

    it("store.history(key) works inside @langchain/core's RunnableWithMessageHistory", async () => {
      const key = randomKey();
      const chain = new LangChainRunnableWithMessageHistory({
        runnable: new FakeChatModel({}),
        getMessageHistory: (sessionId: string) => store().history({ sessionId }),
      });
      const config = { configurable: { sessionId: key.sessionId } };
      await chain.invoke("first", config);
      const second = await chain.invoke("second", config);
      expect(second.content).toBe("first\nfirst\nsecond");
      expect(transcript(await store().read(key))).toEqual(["human: first", "ai: first", "human: second", "ai: first\nfirst\nsecond"]);
    });

    it("store.history(key) offers LangChain's helpers: addUserMessage, addAIMessage, addMessages, clear", async () => {
      const key = randomKey();
      const history = store().history(key);
      await history.addUserMessage("hello");
      await history.addAIMessage("hi");
      await history.addMessages([new HumanMessage("a"), new HumanMessage("b")]);
      expect(transcript(await history.getMessages())).toEqual(["human: hello", "ai: hi", "human: a", "human: b"]);
      await history.clear();
      expect(await store().count(key)).toBe(0);
    });

    it("serves memoria's RunnableWithMessageHistory: 20 concurrent turns, each seeing all before it", async () => {
      const key = randomKey();
      const seen: number[] = [];
      const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
        seen.push(messages.length);
        return `echo ${messages[messages.length - 1]!.content}`;
      });
      const chain = new RunnableWithMessageHistory({ runnable: model, store: store() });
      await Promise.all(Array.from({ length: 20 }, (_, i) => chain.invoke([new HumanMessage(`q${i}`)], { configurable: key })));
      expect(seen).toEqual(Array.from({ length: 20 }, (_, n) => 2 * n + 1));
      expect(await store().count(key)).toBe(40);
    });

    const crossProcess = () => store().capabilities.crossProcessLock;
    it(`its cross-process turn lock excludes a second holder until released (skipped where the store has none)`, async (context) => {
      if (!crossProcess() || !store().lock) return context.skip();
      const key = randomKey();
      const first = await store().lock(key, { ttlMs: 10_000 });
      await expect(store().lock(key, { waitMs: 0 })).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
      const other = randomKey();
      const unrelated = await store().lock(other, { waitMs: 0 });
      await unrelated.release();
      const waiting = store().lock(key, { waitMs: 5_000 });
      await first.release();
      await first.release(); // twice is safe
      const second = await waiting;
      await second.release();
    });

    it(`its cross-process turn lock passes to a waiter racing the release, 100 times over (skipped where the store has none)`, async (context) => {
      if (!crossProcess() || !store().lock) return context.skip();
      // A waiter's try that lands while the holder releases must end in a lock, never
      // in a write the store applied but took for a failure (found on the MongoDB
      // compatible server: about one handoff in sixteen wedged until the lock expired).
      for (let round = 0; round < 100; round++) {
        const key = randomKey();
        const first = await store().lock(key, { ttlMs: 60_000 });
        const waiting = store().lock(key, { waitMs: 10_000 });
        await first.release();
        const second = await waiting;
        await second.release();
        const third = await store().lock(key, { waitMs: 0 });
        await third.release();
      }
    });

    it(`its cross-process turn lock never admits two holders: 4 contenders over two instances, 200 handoffs (skipped without a shared backend and lock)`, async (context) => {
      if (!crossProcess() || !setup.createPeer) return context.skip();
      const other = await setup.createPeer(store());
      await withStores([other], async () => {
        const key = randomKey();
        let inside = 0;
        let overlaps = 0;
        const contender = async (instance: HistoryStore) => {
          for (let round = 0; round < 50; round++) {
            const held = await instance.lock(key, { waitMs: 30_000 });
            if (++inside > 1) overlaps++;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
            inside--;
            await held.release();
          }
        };
        await Promise.all([store(), other, store(), other].map(contender));
        expect(overlaps).toBe(0);
      });
    });

    it(`its cross-process turn lock serializes turns across two store instances (skipped without a shared backend and lock)`, async (context) => {
      if (!crossProcess() || !setup.createPeer) return context.skip();
      const other = await setup.createPeer(store());
      await withStores([other], async () => {
        const key = randomKey();
        const seen: number[] = [];
        const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
          seen.push(messages.length);
          await new Promise((r) => setTimeout(r, 2));
          return "ok";
        });
        const a = new RunnableWithMessageHistory({ runnable: model, store: store() });
        const b = new RunnableWithMessageHistory({ runnable: model, store: other });
        await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).invoke([new HumanMessage(`q${i}`)], { configurable: key })));
        expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: 10 }, (_, n) => 2 * n + 1));
        expect(transcript(await store().read(key)).filter((line) => line === "ai: ok")).toHaveLength(10);
      });
    });

    it("closes twice without error", async () => {
      const extra = await setup.createStore();
      await extra.append(randomKey(), numbered(1));
      await extra.close();
      await extra.close();
    });
  });
}
