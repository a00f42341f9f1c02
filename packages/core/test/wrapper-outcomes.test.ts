import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { type MemoryStrategy, RunnableWithMessageHistory, StoreChatMessageHistory, StoreUnavailableError, createInMemoryStore } from "../src/index.js";
import { withTurns } from "./helpers.js";

const answer = RunnableLambda.from(() => "ok");
const session = (sessionId: string, more: Record<string, unknown> = {}) => ({ configurable: { sessionId, ...more } });

describe("a call resolves if and only if its turn is stored", () => {
  it("resolves when the turn is stored but its lock cannot be released (the server died at that moment)", async () => {
    const store = withTurns(createInMemoryStore(), () => ({ release: () => Promise.reject(new Error("connection reset")) }));
    const chain = new RunnableWithMessageHistory({ runnable: answer, store });
    await expect(chain.invoke("hi", session("s"))).resolves.toBe("ok");
    expect(await store.count({ sessionId: "s" })).toBe(2);
  });

  it("resolves when the strategy fails after the turn was stored, and reports the failure to onMemoryError", async () => {
    const failing: MemoryStrategy = { name: "failing", load: ({ read }) => read(), afterSave: async () => Promise.reject(new Error("summary model down")) };
    const reported: string[] = [];
    const chain = new RunnableWithMessageHistory({
      runnable: answer,
      store: createInMemoryStore(),
      memory: failing,
      onMemoryError: (error, context) => {
        reported.push(`${(error as Error).message} after ${context.turnId}`);
      },
    });
    await expect(chain.invoke("hi", session("s", { turnId: "t1" }))).resolves.toBe("ok");
    expect(reported).toEqual(["summary model down after t1"]);
  });

  it("without onMemoryError, a strategy failure after a stored turn becomes a process warning, not a rejection", async () => {
    const failing: MemoryStrategy = { name: "failing", load: ({ read }) => read(), afterSave: async () => Promise.reject(new Error("boom")) };
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }) => warnings.push(`${warning.code}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      const chain = new RunnableWithMessageHistory({ runnable: answer, store: createInMemoryStore(), memory: failing });
      await expect(chain.invoke("hi", session("s"))).resolves.toBe("ok");
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^MEMORIA_MEMORY_ERROR: .*"failing" failed after turn .* was stored: boom$/);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("a rejected save says whether anything may be stored, and how to retry safely", async () => {
    const lost = withTurns(createInMemoryStore(), () => ({
      save: () => Promise.reject(new StoreUnavailableError("Redis did not answer", { outcome: "unknown" })),
    }));
    const error = await new RunnableWithMessageHistory({ runnable: answer, store: lost })
      .invoke("hi", session("s", { turnId: "mine" }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "SAVE_FAILED", outcome: "unknown", turnId: "mine" });
    expect((error as Error).message).toContain('retry with configurable.turnId = "mine"');

    const refused = withTurns(createInMemoryStore(), () => ({ save: () => Promise.reject(new StoreUnavailableError("disk full", { outcome: "not-stored" })) }));
    const second = await new RunnableWithMessageHistory({ runnable: answer, store: refused }).invoke("hi", session("s")).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: "SAVE_FAILED", outcome: "not-stored" });
    expect((second as Error).message).toContain("Nothing of this turn was stored");
  });

  it("refuses a turn id that is not a short string before the model runs", async () => {
    let ran = false;
    const model = RunnableLambda.from(() => {
      ran = true;
      return "ok";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store: createInMemoryStore() });
    for (const turnId of [42, "", "a\nb", "x".repeat(129)]) {
      await expect(chain.invoke("hi", session("s", { turnId }))).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    }
    expect(ran).toBe(false);
  });
});

describe("input size", () => {
  it("refuses a turn whose input is larger than maxInputBytes, before the model runs and writing nothing", async () => {
    let ran = false;
    const store = createInMemoryStore();
    const model = RunnableLambda.from(() => {
      ran = true;
      return "ok";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store, maxInputBytes: 1_000 });
    const error = await chain.invoke("x".repeat(2_000), session("big")).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INVALID_INPUT" });
    expect((error as Error).message).toMatch(/maxInputBytes \(1000\)/);
    expect(ran).toBe(false);
    expect(await store.count({ sessionId: "big" })).toBe(0);
    await expect(chain.invoke("small", session("big"))).resolves.toBe("ok");
    // Its quick bound (six bytes a character) is over the limit, its text is not: stored.
    await expect(chain.invoke("y".repeat(500), session("big"))).resolves.toBe("ok");
    expect(await store.count({ sessionId: "big" })).toBe(4);
    expect(() => new RunnableWithMessageHistory({ runnable: model, store, maxInputBytes: -1 })).toThrow(/maxInputBytes/);
  });
});

describe("in-memory store housekeeping", () => {
  it("a rejected setState creates no session", async () => {
    const store = createInMemoryStore();
    await expect(store.setState({ sessionId: "s" }, "1bad name", "x")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(store.setState({ sessionId: "s" }, "ok", (() => {}) as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect((await store.list()).sessions).toEqual([]);
  });

  it("frees expired sessions as they expire: they are never reported as evicted to make room", async () => {
    const evicted: string[] = [];
    const store = createInMemoryStore({ ttlSeconds: 0.2, maxSessions: 2, onEvict: (key) => evicted.push(key.sessionId as string) });
    await store.append({ sessionId: "old-1" }, [new HumanMessage("a")]);
    await store.append({ sessionId: "old-2" }, [new AIMessage("b")]);
    await new Promise((resolve) => setTimeout(resolve, 450));
    await store.append({ sessionId: "new-1" }, [new HumanMessage("c")]);
    await store.append({ sessionId: "new-2" }, [new HumanMessage("d")]);
    expect(evicted).toEqual([]);
    await store.close();
  });
});

describe("LangChain's conventions", () => {
  it("hands the wrapped runnable the session's chat history as configurable.messageHistory", async () => {
    const store = createInMemoryStore();
    await store.append({ sessionId: "h" }, [new HumanMessage("earlier")]);
    let seen: unknown;
    const chain = new RunnableWithMessageHistory({
      store,
      runnable: RunnableLambda.from(async (_: unknown, config) => {
        seen = config?.configurable?.messageHistory;
        return "ok";
      }),
    });
    await chain.invoke("now", session("h"));
    expect(seen).toBeInstanceOf(StoreChatMessageHistory);
    // The live session: read after the turn, it holds the turn too.
    expect((await (seen as StoreChatMessageHistory).getMessages()).map((m) => m.content)).toEqual(["earlier", "now", "ok"]);
  });

  it("names the keys it found when a dict output has no obvious answer, and suggests outputMessagesKey", async () => {
    const chain = new RunnableWithMessageHistory({ store: createInMemoryStore(), runnable: RunnableLambda.from(() => ({ answer: "a", sources: [] })) });
    const error = await chain.invoke("q", session("d")).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INVALID_OUTPUT" });
    expect((error as Error).message).toBe(
      'The runnable returned an object with keys "answer", "sources" and no "output" key; set outputMessagesKey to the key that holds the answer.',
    );
    const keyed = new RunnableWithMessageHistory({
      store: createInMemoryStore(),
      outputMessagesKey: "answer",
      runnable: RunnableLambda.from(() => ({ answer: "a", sources: [] })),
    });
    await expect(keyed.invoke("q", session("d"))).resolves.toEqual({ answer: "a", sources: [] });
  });
});

describe("thread-returning agents", () => {
  it("stores only what the agent added after the history and input it was given", async () => {
    const store = createInMemoryStore();
    const agent = RunnableLambda.from(async ({ messages }: { messages: BaseMessage[] }) => ({
      messages: [
        ...messages,
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "t", args: {}, type: "tool_call" }] }),
        new ToolMessage({ content: "r", tool_call_id: "c1" }),
        new AIMessage("done"),
      ],
    }));
    const chain = new RunnableWithMessageHistory({ runnable: agent, store, inputMessagesKey: "messages", outputMessagesKey: "messages" });
    await chain.invoke({ messages: [new HumanMessage("one")] }, session("a"));
    await chain.invoke({ messages: [new HumanMessage("two")] }, session("a"));
    expect((await store.read({ sessionId: "a" })).map((m) => `${m.getType()}:${m.content}`)).toEqual([
      "human:one",
      "ai:",
      "tool:r",
      "ai:done",
      "human:two",
      "ai:",
      "tool:r",
      "ai:done",
    ]);
  });

  it("keeps a list output that does not echo the input whole", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => [new AIMessage("a"), new AIMessage("b")]), store });
    await chain.invoke("q", session("b"));
    expect((await store.read({ sessionId: "b" })).map((m) => m.content)).toEqual(["q", "a", "b"]);
  });
});

describe("streamEvents", () => {
  it("shows the history's load and save as chain runs of their own, as LangChain's wrapper shows insertHistory and loadHistory", async () => {
    const chain = new RunnableWithMessageHistory({ store: createInMemoryStore(), runnable: RunnableLambda.from(() => "ok") });
    const starts: string[] = [];
    for await (const event of chain.streamEvents("hi", { ...session("events"), version: "v2" })) {
      if (event.event === "on_chain_start") starts.push(event.name);
    }
    expect(starts).toEqual(["RunnableWithMessageHistory", "insertHistory", "loadHistory", "RunnableLambda", "saveHistory"]);
  });

  it("gives the call's runName to the wrapper's run only: the wrapped runnable's run keeps its own name", async () => {
    const chain = new RunnableWithMessageHistory({ store: createInMemoryStore(), runnable: RunnableLambda.from(() => "ok") });
    const starts: string[] = [];
    for await (const event of chain.streamEvents("hi", { ...session("named"), runName: "my-chat", version: "v2" })) {
      if (event.event === "on_chain_start") starts.push(event.name);
    }
    expect(starts).toEqual(["my-chat", "insertHistory", "loadHistory", "RunnableLambda", "saveHistory"]);
  });
});
