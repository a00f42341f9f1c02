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
});
