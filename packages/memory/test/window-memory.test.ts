import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, RunnableWithMessageHistory, createInMemoryStore, memoryContext } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import { transcript } from "@memoria/testkit";
import { describe, expect, it } from "vitest";
import { windowMemory } from "../src/index.js";

const stores: [string, () => HistoryStore][] = [
  ["in-memory", () => createInMemoryStore()],
  ["sqlite", () => createSqliteStore({ path: ":memory:" })],
];

describe.each(stores)("windowMemory on %s", (_, makeStore) => {
  it("gives the prompt the last k turns, reading only a window from the store's end", async () => {
    const store = makeStore();
    const reads: (number | undefined)[] = [];
    const counting: HistoryStore = {
      ...store,
      read: (key, options) => {
        reads.push(options?.last);
        return store.read(key, options);
      },
    };
    let seen: string[] = [];
    const model = RunnableLambda.from((messages: BaseMessage[]) => {
      seen = transcript(messages);
      return `answer ${messages.length}`;
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store: counting, memory: windowMemory({ k: 2 }) });
    const config = { configurable: { sessionId: "w" } };
    for (const text of ["one", "two", "three", "four", "five"]) await chain.invoke(text, config);
    expect(seen).toEqual(["human: three", "ai: answer 5", "human: four", "ai: answer 5", "human: five"]);
    expect(reads.every((n) => n !== undefined && n <= 8)).toBe(true);
    await store.close();
  });

  it("keeps a tool call with its results, and never starts on an orphan tool result", async () => {
    const store = makeStore();
    const key = { sessionId: "tools" };
    await store.append(key, [new HumanMessage("old"), new AIMessage("old answer")]);
    await store.append(key, [
      new HumanMessage("weather?"),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "weather", args: {}, type: "tool_call" }] }),
      ...Array.from({ length: 9 }, (_, i) => new ToolMessage({ content: `part ${i}`, tool_call_id: "c1" })),
      new AIMessage("sunny"),
    ]);
    const window = await windowMemory({ k: 1 }).load(memoryContext(store, key));
    expect(window[0]!.getType()).toBe("human");
    expect(transcript(window)[0]).toBe("human: weather?");
    expect(window).toHaveLength(12);
    await store.close();
  });

  it("returns a short session whole, and nothing for k = 0", async () => {
    const store = makeStore();
    const key = { sessionId: "short" };
    await store.append(key, [new AIMessage("preloaded greeting"), new HumanMessage("hi"), new AIMessage("hello")]);
    expect(transcript(await windowMemory({ k: 5 }).load(memoryContext(store, key)))).toEqual(["ai: preloaded greeting", "human: hi", "ai: hello"]);
    expect(await windowMemory({ k: 0 }).load(memoryContext(store, key))).toEqual([]);
    expect(() => windowMemory({ k: -1 })).toThrow(/k must be/);
    await store.close();
  });

  it("with a step, starts the prompt the same for step turns at a time, and always holds the last k turns", async () => {
    const store = makeStore();
    const key = { sessionId: "stepped" };
    const memory = windowMemory({ k: 3, step: 4 });
    const starts: string[] = [];
    for (let turn = 0; turn < 30; turn++) {
      const window = await memory.load(memoryContext(store, key));
      const lines = transcript(window);
      if (turn > 0) {
        expect(lines[0]).toMatch(/^human: /);
        // The last k turns at least (all when fewer), at most k + step.
        const turns = lines.filter((line) => line.startsWith("human: ")).length;
        expect(turns).toBeGreaterThanOrEqual(Math.min(3, turn));
        expect(turns).toBeLessThanOrEqual(3 + 4);
        expect(lines.at(-1)).toBe(`ai: answer ${turn - 1}`);
      }
      starts.push(lines[0] ?? "");
      await store.append(key, [new HumanMessage(`question ${turn}`), new AIMessage(`answer ${turn}`)]);
    }
    // The start moved only every fourth turn: 30 turns, at most 30 / 4 + 1 different starts.
    const moves = starts.filter((start, i) => i > 0 && start !== starts[i - 1]).length;
    expect(moves).toBeLessThanOrEqual(Math.ceil(30 / 4) + 1);
    expect(new Set(starts).size).toBeGreaterThan(4);
    expect(() => windowMemory({ k: 3, step: 0 })).toThrow(/step must be/);
    await store.close();
  });
});
