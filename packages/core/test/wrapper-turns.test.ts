import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { FakeChatModel } from "@langchain/core/utils/testing";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { describe, expect, it } from "vitest";
import {
  InvalidSessionKeyError,
  MemoriaError,
  type MemoryStrategy,
  RunnableWithMessageHistory,
  SaveError,
  SessionBusyError,
  StoreChatMessageHistory,
  type TurnSaveOptions,
  createInMemoryStore,
} from "../src/index.js";
import { deferred, recordingStore, transcript, withTurns } from "./helpers.js";

const echo = () => new FakeChatModel({});
const session = (sessionId: string) => ({ configurable: { sessionId } });

describe("session keys", () => {
  it.each([
    ["missing", {}],
    ["empty", { sessionId: "" }],
    ["a fraction", { sessionId: 4.2 }],
    ["NaN", { sessionId: Number.NaN }],
    ["a boolean", { sessionId: true }],
    ["an object", { sessionId: { id: "x" } }],
    ["too long", { sessionId: "x".repeat(257) }],
    ["holding a newline", { sessionId: "a\nb" }],
  ])("rejects a session id that is %s, naming the field, before reading or writing", async (_, configurable) => {
    const { store, calls } = recordingStore(createInMemoryStore());
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    const error = await chain.invoke("hi", { configurable }).catch((e: unknown) => e);
    expect(InvalidSessionKeyError.isInstance(error)).toBe(true);
    expect((error as InvalidSessionKeyError).field).toBe("sessionId");
    expect((error as Error).message).toContain('configurable":{"sessionId"');
    expect(calls).toEqual([]);
  });

  it("takes a whole-number session id as its decimal string, as LangChain does", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    await chain.invoke("numbered", { configurable: { sessionId: 42 } });
    await chain.invoke("again", { configurable: { sessionId: "42" } });
    expect(transcript(await store.read({ sessionId: "42" }))).toEqual(["human: numbered", "ai: numbered", "human: again", "ai: numbered\nnumbered\nagain"]);
  });

  it("names a session by several fields and keeps them apart", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store, sessionFields: ["userId", "conversationId"] });
    await chain.invoke("for u1/c1", { configurable: { userId: "u1", conversationId: "c1" } });
    await chain.invoke("for u2/c1", { configurable: { userId: "u2", conversationId: "c1" } });
    const error = await chain.invoke("x", { configurable: { userId: "u1" } }).catch((e: unknown) => e);
    expect((error as InvalidSessionKeyError).field).toBe("conversationId");
    expect(transcript(await store.read({ userId: "u1", conversationId: "c1" }))).toEqual(["human: for u1/c1", "ai: for u1/c1"]);
    expect((await store.list({ conversationId: "c1" })).sessions).toHaveLength(2);
  });

  it("does not read a session id from the config's prototype", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    const configurable = Object.create({ sessionId: "inherited" });
    await expect(chain.invoke("hi", { configurable })).rejects.toThrow(/sessionId/);
  });

  it("passes every field value to getMessageHistory, in order", async () => {
    const seen: string[][] = [];
    const { InMemoryChatMessageHistory } = await import("@langchain/core/chat_history");
    const chain = new RunnableWithMessageHistory({
      runnable: echo(),
      sessionFields: ["userId", "conversationId"],
      getMessageHistory: (...values: string[]) => {
        seen.push(values);
        return new InMemoryChatMessageHistory();
      },
    });
    await chain.invoke("hi", { configurable: { userId: "u", conversationId: "c" } });
    expect(seen).toEqual([["u", "c"]]);
  });
});

describe("saving a turn", () => {
  it("saves input and output in one call tagged with a turn id, the turn's last write", async () => {
    const saves: { messages: readonly BaseMessage[]; options: TurnSaveOptions | undefined }[] = [];
    const store = withTurns(createInMemoryStore(), (turn) => ({
      save: (messages, options) => {
        saves.push({ messages, options });
        return turn.save(messages, options);
      },
    }));
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    await chain.invoke("hi", session("s"));
    expect(saves).toHaveLength(1);
    expect(transcript(saves[0]!.messages)).toEqual(["human: hi", "ai: hi"]);
    expect(saves[0]!.options).toMatchObject({ turnId: expect.stringMatching(/^[0-9a-f-]{36}$/), keepTurnId: false, last: true });
  });

  it("reads the history once per turn, only as much as the strategy asks for", async () => {
    const { store, calls } = recordingStore(createInMemoryStore());
    const lastTwo: MemoryStrategy = { name: "last-2", load: ({ read }) => read({ last: 2 }) };
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store, memory: lastTwo });
    for (const text of ["a", "b", "c"]) await chain.invoke(text, session("s"));
    const reads = calls.filter((c) => c.method === "read");
    expect(reads).toHaveLength(3);
    for (const read of reads) expect(read.args[1]).toEqual({ last: 2 });
    // The third turn saw only the second turn's two messages ("b" and its echo "a a b").
    expect(transcript(await store.read({ sessionId: "s" }, { last: 1 }))).toEqual(["ai: b\na\na\nb\nc"]);
  });

  it("rejects the call when the save fails, and stores nothing of the turn", async () => {
    const inner = createInMemoryStore();
    const failing = withTurns(inner, () => ({ save: async () => Promise.reject(new Error("disk full")) }));
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store: failing });
    const error = await chain.invoke("hi", session("s")).catch((e: unknown) => e);
    expect(SaveError.isInstance(error)).toBe(true);
    expect((error as SaveError).message).toContain("disk full");
    expect((error as SaveError).sessionKey).toEqual({ sessionId: "s" });
    expect(await inner.count({ sessionId: "s" })).toBe(0);
  });

  it("hands a failed save to onSaveError when one is given, and resolves", async () => {
    const failing = withTurns(createInMemoryStore(), () => ({ save: async () => Promise.reject(new Error("down")) }));
    const reported: { error: SaveError; count: number }[] = [];
    const chain = new RunnableWithMessageHistory({
      runnable: echo(),
      store: failing,
      onSaveError: (error, context) => {
        reported.push({ error, count: context.messages.length });
      },
    });
    expect((await chain.invoke("hi", session("s"))).content).toBe("hi");
    expect(reported).toHaveLength(1);
    expect(reported[0]!.error.code).toBe("SAVE_FAILED");
    expect(reported[0]!.count).toBe(2);
  });

  it("stores nothing when the runnable fails (default)", async () => {
    const store = createInMemoryStore();
    const failing = RunnableLambda.from(() => {
      throw new Error("model down");
    });
    const chain = new RunnableWithMessageHistory({ runnable: failing, store });
    await expect(chain.invoke("hi", session("s"))).rejects.toThrow("model down");
    expect(await store.count({ sessionId: "s" })).toBe(0);
  });

  it('stores the input when the runnable fails, with saveOnError: "input"', async () => {
    const store = createInMemoryStore();
    const failing = RunnableLambda.from(() => {
      throw new Error("model down");
    });
    const chain = new RunnableWithMessageHistory({ runnable: failing, store, saveOnError: "input" });
    await expect(chain.invoke("hi", session("s"))).rejects.toThrow("model down");
    expect(transcript(await store.read({ sessionId: "s" }))).toEqual(["human: hi"]);
  });

  it("stores every message an agent returns, in order", async () => {
    const store = createInMemoryStore();
    const agent = RunnableLambda.from(() => [
      new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "weather", args: { city: "Oslo" }, type: "tool_call" }] }),
      new ToolMessage({ content: "-3C", tool_call_id: "call_1", name: "weather" }),
      new AIMessage("It is -3C in Oslo."),
    ]);
    const chain = new RunnableWithMessageHistory({ runnable: agent, store });
    await chain.invoke("weather in Oslo?", session("s"));
    const stored = await store.read({ sessionId: "s" });
    expect(stored.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    expect((stored[1] as AIMessage).tool_calls?.[0]?.args).toEqual({ city: "Oslo" });
    expect((stored[2] as ToolMessage).tool_call_id).toBe("call_1");
  });

  it("refuses input it could not store before the model runs", async () => {
    const store = createInMemoryStore();
    let ran = false;
    const model = RunnableLambda.from(() => {
      ran = true;
      return "ok";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store });
    const bad = new HumanMessage({ content: "hi", additional_kwargs: { when: new Date() } });
    const error = await chain.invoke([bad], session("s")).catch((e: unknown) => e);
    expect(MemoriaError.hasCode(error, "INVALID_MESSAGE")).toBe(true);
    expect((error as Error).message).toContain("additional_kwargs.when");
    expect(ran).toBe(false);
    expect(await store.count({ sessionId: "s" })).toBe(0);
  });

  it("rejects an output that holds no messages, storing nothing", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => ({ a: 1, b: 2 })), store });
    const error = await chain.invoke("hi", session("s")).catch((e: unknown) => e);
    expect(MemoriaError.hasCode(error, "INVALID_OUTPUT")).toBe(true);
    expect(await store.count({ sessionId: "s" })).toBe(0);
  });

  it("reads outputs under outputMessagesKey and LLM generations", async () => {
    const store = createInMemoryStore();
    const dict = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from(() => ({ answer: new AIMessage("from dict"), other: 1 })),
      store,
      outputMessagesKey: "answer",
    });
    const generations = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from(() => ({ generations: [[{ text: "t", message: new AIMessage("from generations") }]] })),
      store,
    });
    await dict.invoke("a", session("s"));
    await generations.invoke("b", session("s"));
    expect(transcript(await store.read({ sessionId: "s" }))).toEqual(["human: a", "ai: from dict", "human: b", "ai: from generations"]);
  });
});

describe("turns of one session", () => {
  it("50 concurrent invokes store 100 messages in pairs, each turn seeing all before it", async () => {
    const store = createInMemoryStore();
    const seen: number[] = [];
    const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
      seen.push(messages.length);
      await new Promise((r) => setTimeout(r, Math.random() * 3));
      return new AIMessage(`answer to ${messages[messages.length - 1]!.content}`);
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store });
    await Promise.all(Array.from({ length: 50 }, (_, i) => chain.invoke(`q${i}`, session("busy"))));
    const stored = await store.read({ sessionId: "busy" });
    expect(stored).toHaveLength(100);
    for (let i = 0; i < 100; i += 2) {
      expect(stored[i]!.getType()).toBe("human");
      expect(stored[i + 1]!.content).toBe(`answer to ${stored[i]!.content}`);
    }
    // Turn n saw the 2n messages of the turns before it, plus its own input.
    expect(seen).toEqual(Array.from({ length: 50 }, (_, n) => 2 * n + 1));
    expect(new Set(stored.filter((m) => m.getType() === "human").map((m) => m.content)).size).toBe(50);
  });

  it("never makes turns of different sessions wait on each other", async () => {
    const store = createInMemoryStore();
    const gate = deferred();
    const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
      if (messages[messages.length - 1]!.content === "slow") await gate.promise;
      return "done";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store });
    const slow = chain.invoke("slow", session("a"));
    await expect(chain.invoke("fast", session("b"))).resolves.toBe("done");
    gate.resolve();
    await slow;
  });

  it('rejects a second simultaneous turn with busySession: "reject"', async () => {
    const store = createInMemoryStore();
    const gate = deferred();
    const entered = deferred();
    const model = RunnableLambda.from(async () => {
      entered.resolve();
      await gate.promise;
      return "done";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store, busySession: "reject" });
    const first = chain.invoke("one", session("s"));
    await entered.promise; // the first turn holds the session now
    const error = await chain.invoke("two", session("s")).catch((e: unknown) => e);
    expect(SessionBusyError.isInstance(error)).toBe(true);
    gate.resolve();
    await first;
    expect(await store.count({ sessionId: "s" })).toBe(2);
  });

  it('lets turns overlap with busySession: "proceed"', async () => {
    const store = createInMemoryStore();
    const gate = deferred();
    const bothInside = deferred();
    let running = 0;
    let most = 0;
    const model = RunnableLambda.from(async () => {
      most = Math.max(most, ++running);
      if (running === 2) bothInside.resolve();
      await gate.promise;
      running--;
      return "done";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store, busySession: "proceed" });
    const turns = [chain.invoke("one", session("s")), chain.invoke("two", session("s"))];
    await bothInside.promise; // never resolves, and the test times out, if the second turn waited
    gate.resolve();
    await Promise.all(turns);
    expect(most).toBe(2);
  });

  it("releases the session after a failed turn", async () => {
    const store = createInMemoryStore();
    let fail = true;
    const model = RunnableLambda.from(() => {
      if (fail) throw new Error("boom");
      return "ok";
    });
    const chain = new RunnableWithMessageHistory({ runnable: model, store });
    await expect(chain.invoke("a", session("s"))).rejects.toThrow("boom");
    fail = false;
    await expect(chain.invoke("b", session("s"))).resolves.toBe("ok");
  });
});

describe("composition", () => {
  it("works after withConfig() carrying the session", async () => {
    const store = createInMemoryStore();
    const bound = new RunnableWithMessageHistory({ runnable: echo(), store }).withConfig(session("cfg"));
    await bound.invoke("one");
    await bound.invoke("two");
    expect(await store.count({ sessionId: "cfg" })).toBe(4);
  });

  it("works under withRetry(), storing only the attempt that succeeded", async () => {
    const store = createInMemoryStore();
    let attempts = 0;
    const flaky = RunnableLambda.from(() => {
      if (++attempts < 2) throw new Error("flaky");
      return "finally";
    });
    const chain = new RunnableWithMessageHistory({ runnable: flaky, store }).withRetry({ stopAfterAttempt: 2 });
    await expect(chain.invoke("hi", session("r"))).resolves.toBe("finally");
    expect(transcript(await store.read({ sessionId: "r" }))).toEqual(["human: hi", "ai: finally"]);
  });

  it("batches with one shared config: every turn stored, in order of completion", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    await chain.batch(["a", "b", "c"], session("batch"));
    const humans = (await store.read({ sessionId: "batch" })).filter((m) => m.getType() === "human");
    expect(humans.map((m) => m.content).sort()).toEqual(["a", "b", "c"]);
    expect(await store.count({ sessionId: "batch" })).toBe(6);
  });

  it("nests inside other runnables", async () => {
    const store = createInMemoryStore();
    const inner = new RunnableWithMessageHistory({ runnable: echo(), store });
    const outer = RunnableSequence.from([
      RunnableLambda.from((text: string) => text.toUpperCase()),
      inner,
      RunnableLambda.from((message: AIMessage) => `<${message.content}>`),
    ]);
    expect(await outer.invoke("hi", session("n"))).toBe("<HI>");
    expect(await outer.invoke("again", session("n"))).toBe("<HI\nHI\nAGAIN>");
  });

  it("reports to callbacks as one chain run, with the history's load and save as child runs beside the model", async () => {
    const store = createInMemoryStore();
    const events: string[] = [];
    class Recorder extends BaseCallbackHandler {
      name = "recorder";
      override handleChainStart(
        _chain: unknown,
        _inputs: unknown,
        _runId: string,
        _parent?: string,
        _tags?: string[],
        meta?: Record<string, unknown>,
        _type?: string,
        runName?: string,
      ) {
        const key = meta?.memoria_session_key ? ` ${JSON.stringify(meta.memoria_session_key)}` : "";
        events.push(`chain:${runName}${key}${meta?.memoria_messages !== undefined ? ` ${meta.memoria_messages} messages` : ""}`);
      }
      override handleChatModelStart() {
        events.push("model");
      }
    }
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    await chain.invoke("hi", { ...session("cb"), callbacks: [new Recorder()] });
    expect(events).toEqual([
      "chain:RunnableWithMessageHistory",
      'chain:insertHistory {"sessionId":"cb"}',
      'chain:loadHistory {"sessionId":"cb"}',
      "model",
      'chain:saveHistory {"sessionId":"cb"} 2 messages',
    ]);
  });

  it("uses the store behind a StoreChatMessageHistory from getMessageHistory", async () => {
    const { store, calls } = recordingStore(createInMemoryStore());
    const chain = new RunnableWithMessageHistory({
      runnable: echo(),
      getMessageHistory: (sessionId) => new StoreChatMessageHistory(store, { sessionId }),
    });
    await chain.invoke("hi", session("h"));
    expect(calls.map((c) => c.method)).toEqual(["openTurn"]); // the turn's read and save are the turn's own
    expect(calls[0]!.args[1]).toMatchObject({ read: {} });
  });
});

describe("input shapes", () => {
  it("accepts a message, message-likes and nested message lists", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store });
    await chain.invoke(new HumanMessage("message") as never, session("i"));
    await chain.invoke([["human", "tuple"]] as never, session("i"));
    await chain.invoke({ input: [[new HumanMessage("nested")]] } as never, session("i"));
    const humans = (await store.read({ sessionId: "i" })).filter((m) => m.getType() === "human");
    expect(humans.map((m) => m.content)).toEqual(["message", "tuple", "nested"]);
  });

  it("rejects a string input when historyMessagesKey needs an object", async () => {
    const chain = new RunnableWithMessageHistory({ runnable: echo(), store: createInMemoryStore(), historyMessagesKey: "history" });
    const error = await chain.invoke("plain", session("x")).catch((e: unknown) => e);
    expect(MemoriaError.hasCode(error, "INVALID_INPUT")).toBe(true);
  });
});
