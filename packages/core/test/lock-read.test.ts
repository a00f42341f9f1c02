import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { type MemoryStrategy, RunnableWithMessageHistory, type TurnOptions, createInMemoryStore } from "../src/index.js";
import { recordingStore, transcript } from "./helpers.js";

/**
 * An in-memory store whose calls are counted: `counts()` gives the reads the wrapper
 * made itself and the turns it opened with a read (the turn's `history`).
 */
function readingLockStore() {
  const inner = createInMemoryStore();
  const { store, calls } = recordingStore(inner);
  const counts = () => ({
    reads: calls.filter((call) => call.method === "read").length,
    lockReads: calls.filter((call) => call.method === "openTurn" && (call.args[1] as TurnOptions | undefined)?.read).length,
  });
  return { store, inner, counts };
}

const seen: string[][] = [];
const model = RunnableLambda.from((messages: BaseMessage[]) => {
  seen.push(messages.map((m) => String(m.content)));
  return new AIMessage(`saw ${messages.length}`);
});
const turnsOf = (n: number) => Array.from({ length: n }, (_, i) => [new HumanMessage(`q${i}`), new AIMessage(`a${i}`)]).flat();

describe("the strategy's first read taken with the turn", () => {
  it("answers the strategy's first read from the turn's history: the store is not read again, and the model sees the same history", async () => {
    const { store, inner, counts } = readingLockStore();
    const key = { sessionId: "window" };
    await inner.append(key, turnsOf(5));
    const window: MemoryStrategy = { name: "last-4", load: ({ read }) => read({ last: 4 }), firstRead: { last: 4 } };
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: window });
    seen.length = 0;
    await chain.invoke("next", { configurable: key });
    expect(counts()).toEqual({ reads: 0, lockReads: 1 });
    expect(seen[0]).toEqual(["q3", "a3", "q4", "a4", "next"]);
    await chain.invoke("after", { configurable: key });
    expect(seen[1]).toEqual(["q4", "a4", "next", "saw 5", "after"]); // the turn read what the turn before it stored
    expect(transcript(await inner.read(key)).slice(-4)).toEqual(["human: next", "ai: saw 5", "human: after", "ai: saw 5"]);
  });

  it("reads from the store when the first read asks for something else, or when the strategy declares none", async () => {
    const { store, inner, counts } = readingLockStore();
    const key = { sessionId: "other" };
    await inner.append(key, turnsOf(5));
    const mismatched: MemoryStrategy = { name: "says 4, reads 2", load: ({ read }) => read({ last: 2 }), firstRead: { last: 4 } };
    seen.length = 0;
    await new RunnableWithMessageHistory({ runnable: model, store, memory: mismatched }).invoke("x", { configurable: key });
    expect(seen[0]).toEqual(["q4", "a4", "x"]);
    expect(counts()).toEqual({ reads: 1, lockReads: 1 });
    const undeclared: MemoryStrategy = { name: "no hint", load: ({ read }) => read({ last: 2 }) };
    await new RunnableWithMessageHistory({ runnable: model, store, memory: undeclared }).invoke("y", { configurable: key });
    expect(seen[1]).toEqual(["x", "saw 3", "y"]);
    expect(counts()).toEqual({ reads: 2, lockReads: 1 });
  });

  it("hands the turn's history to the first read only: a second read, or one after a trim, goes to the store", async () => {
    const { store, inner, counts } = readingLockStore();
    const key = { sessionId: "trimmed" };
    await inner.append(key, turnsOf(3));
    const twice: MemoryStrategy = {
      name: "reads twice",
      firstRead: {},
      load: async ({ read }) => {
        const first = await read();
        const second = await read();
        expect(second).toEqual(first);
        return first;
      },
    };
    await new RunnableWithMessageHistory({ runnable: model, store, memory: twice }).invoke("z", { configurable: key });
    expect(counts()).toEqual({ reads: 1, lockReads: 1 });
    const trimsFirst: MemoryStrategy = {
      name: "trims, then reads (breaking its promise)",
      firstRead: {},
      load: async ({ read, trim }) => {
        await trim?.(2);
        return read();
      },
    };
    seen.length = 0;
    await new RunnableWithMessageHistory({ runnable: model, store, memory: trimsFirst }).invoke("t", { configurable: key });
    expect(seen[0]?.[0]).toBe("q1"); // q0 and a0, trimmed, are not sent
    expect(counts()).toEqual({ reads: 2, lockReads: 2 });
  });
});
