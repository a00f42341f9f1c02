import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { type Runnable, RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { type IncompleteTurnPolicy, RunnableWithMessageHistory, createInMemoryStore } from "../src/index.js";
import { deferred, transcript } from "./helpers.js";

const session = { configurable: { sessionId: "stream" } };
const key = session.configurable;

/** A model that streams the given pieces, optionally throwing after `failAfter` of them. */
function streamingModel(pieces: string[], options: { failAfter?: number; usage?: boolean } = {}): Runnable<BaseMessage[], AIMessageChunk> {
  return RunnableLambda.from(async function* (_messages: BaseMessage[]) {
    for (const [i, piece] of pieces.entries()) {
      if (options.failAfter === i) throw new Error("stream broke");
      yield new AIMessageChunk({
        content: piece,
        id: "run-1",
        usage_metadata: options.usage && i === pieces.length - 1 ? { input_tokens: 3, output_tokens: 4, total_tokens: 7 } : undefined,
      });
    }
  }) as unknown as Runnable<BaseMessage[], AIMessageChunk>;
}

function wrap(runnable: ReturnType<typeof streamingModel>, policies: { saveOnError?: IncompleteTurnPolicy; saveOnCancel?: IncompleteTurnPolicy } = {}) {
  const store = createInMemoryStore();
  return { store, chain: new RunnableWithMessageHistory({ runnable, store, ...policies }) };
}

describe("streaming", () => {
  it("yields each chunk before the model produces the next", async () => {
    const gate = deferred();
    const model = RunnableLambda.from(async function* () {
      yield new AIMessageChunk("first");
      await gate.promise;
      yield new AIMessageChunk(" second");
    });
    const { chain, store } = wrap(model as never);
    const stream = await chain.stream("hi", session);
    const reader = stream[Symbol.asyncIterator]();
    expect(((await reader.next()).value as AIMessageChunk).content).toBe("first");
    expect(await store.count(key)).toBe(0);
    gate.resolve();
    expect(((await reader.next()).value as AIMessageChunk).content).toBe(" second");
    expect((await reader.next()).done).toBe(true);
    expect(transcript(await store.read(key))).toEqual(["human: hi", "ai: first second"]);
  });

  it("saves the aggregated message with its usage metadata as one AI message", async () => {
    const { chain, store } = wrap(streamingModel(["Hel", "lo", "!"], { usage: true }));
    for await (const _ of await chain.stream("hi", session)) void _;
    const stored = await store.read(key);
    expect(stored).toHaveLength(2);
    expect(stored[1]).toBeInstanceOf(AIMessage);
    expect(stored[1]!.content).toBe("Hello!");
    expect((stored[1] as AIMessage).usage_metadata).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
  });

  it("saves the partial answer, marked, when the consumer stops early (default)", async () => {
    const { chain, store } = wrap(streamingModel(["one ", "two ", "three"]));
    for await (const chunk of await chain.stream("count", session)) {
      if ((chunk as AIMessageChunk).content === "two ") break;
    }
    const stored = await store.read(key);
    expect(transcript(stored)).toEqual(["human: count", "ai: one two "]);
    expect((stored[1]!.response_metadata as Record<string, unknown>).memoria_partial).toBe("cancelled");
  });

  it.each([
    ["nothing", []],
    ["input", ["human: count"]],
  ] as const)('with saveOnCancel: "%s" an early stop stores %j', async (policy, expected) => {
    const { chain, store } = wrap(streamingModel(["one ", "two "]), { saveOnCancel: policy });
    for await (const _ of await chain.stream("count", session)) break;
    expect(transcript(await store.read(key))).toEqual(expected);
  });

  it.each([
    ["nothing", []],
    ["input", ["human: go"]],
    ["partial", ["human: go", "ai: a b "]],
  ] as const)('when the model throws mid-stream, saveOnError: "%s" stores %j', async (policy, expected) => {
    const { chain, store } = wrap(streamingModel(["a ", "b ", "c"], { failAfter: 2 }), { saveOnError: policy });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of await chain.stream("go", session)) seen.push(String((chunk as AIMessageChunk).content));
      })(),
    ).rejects.toThrow("stream broke");
    expect(seen).toEqual(["a ", "b "]);
    expect(transcript(await store.read(key))).toEqual(expected);
  });

  it("a stream that fails before its first chunk follows saveOnError, not saveOnCancel", async () => {
    const { chain, store } = wrap(streamingModel(["a "], { failAfter: 0 }), { saveOnError: "input", saveOnCancel: "nothing" });
    await expect(
      (async () => {
        for await (const _ of await chain.stream("go", session));
      })(),
    ).rejects.toThrow("stream broke");
    expect(transcript(await store.read(key))).toEqual(["human: go"]);
  });

  it("holds the session while streaming, so the next turn sees the streamed answer", async () => {
    const store = createInMemoryStore();
    const seen: number[] = [];
    const model = RunnableLambda.from(async function* (messages: BaseMessage[]) {
      seen.push(messages.length);
      yield new AIMessageChunk("x");
      await new Promise((r) => setTimeout(r, 5));
      yield new AIMessageChunk("y");
    });
    const chain = new RunnableWithMessageHistory({ runnable: model as never, store });
    const consume = async () => {
      for await (const _ of await chain.stream("q", session)) void _;
    };
    await Promise.all([consume(), consume(), consume()]);
    expect(seen).toEqual([1, 3, 5]);
    expect(await store.count(key)).toBe(6);
  });
});
