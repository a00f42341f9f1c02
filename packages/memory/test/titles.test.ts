import { AIMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, type SessionKey } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { bufferMemory, cleanTitle, withTitles } from "../src/index.js";
import { STORES } from "./helpers.js";

/** A title model that waits for `open()` before it answers, and counts its calls. */
function gatedTitler(answer = "“Weather in Paris”\nExtra line") {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const prompts: string[] = [];
  const model = RunnableLambda.from(async (prompt: string) => {
    prompts.push(prompt);
    await gate;
    return new AIMessage(answer);
  });
  return { model, prompts, open };
}

const echo = RunnableLambda.from((messages: unknown[]) => new AIMessage(`I saw ${messages.length} messages`));

describe.each(STORES)("withTitles on %s", (_name, makeStore) => {
  it("titles a session after its first turn, without holding the turn up", async () => {
    const store = makeStore();
    const titler = gatedTitler();
    const memory = withTitles(bufferMemory(), { model: titler.model });
    const chain = new RunnableWithMessageHistory({ runnable: echo, store, memory });
    const config = { configurable: { sessionId: `t-${crypto.randomUUID()}` } };
    await chain.invoke("What is the weather in Paris?", config); // resolves while the title model still waits
    const key = { sessionId: config.configurable.sessionId };
    expect((await store.info!(key))?.title).toBeUndefined();
    titler.open();
    await memory.idle();
    expect(await store.info!(key)).toMatchObject({ title: "Weather in Paris", messageCount: 2 });
    expect(titler.prompts[0]).toContain("Human: What is the weather in Paris?\nAI: I saw 1 messages");
    await chain.invoke("And tomorrow?", config);
    await memory.idle();
    expect(titler.prompts).toHaveLength(1); // titled already: the model is not asked again
    await store.close();
  });

  it("keeps an app's own title, and does not bring back a session erased before its title was written", async () => {
    const store = makeStore();
    const titler = gatedTitler();
    const memory = withTitles(bufferMemory(), { model: titler.model });
    const chain = new RunnableWithMessageHistory({ runnable: echo, store, memory });
    const titled: SessionKey = { sessionId: `own-${crypto.randomUUID()}` };
    await store.setInfo!(titled, { title: "Mine" });
    await chain.invoke("hello", { configurable: titled });
    const erased: SessionKey = { sessionId: `gone-${crypto.randomUUID()}` };
    await chain.invoke("hello", { configurable: erased });
    await store.clear(erased);
    titler.open();
    await memory.idle();
    expect((await store.info!(titled))?.title).toBe("Mine");
    expect(await store.info!(erased)).toBeUndefined();
    expect(await store.count(erased)).toBe(0);
    await store.close();
  });

  it("sends a failure to onError, never to the turn", async () => {
    const store = makeStore();
    const failures: [string, SessionKey][] = [];
    const model = RunnableLambda.from(async (): Promise<string> => {
      throw new Error("model down");
    });
    const memory = withTitles(bufferMemory(), { model, onError: (error, key) => failures.push([(error as Error).message, key]) });
    const chain = new RunnableWithMessageHistory({ runnable: echo, store, memory });
    const key = { sessionId: `f-${crypto.randomUUID()}` };
    await expect(chain.invoke("hello", { configurable: key })).resolves.toMatchObject({ content: "I saw 1 messages" });
    await memory.idle();
    expect(failures).toEqual([["model down", key]]);
    await store.close();
  });
});

describe("cleanTitle", () => {
  it("keeps one line, without quotes, a 'Title:' prefix or control characters, and shortens long answers", () => {
    expect(cleanTitle('Title: "Trip to Paris"\nMore')).toBe("Trip to Paris");
    expect(cleanTitle("\n\n  «Budget»  ")).toBe("Budget");
    expect(cleanTitle("a\u0007b")).toBe("a");
    expect(cleanTitle("x".repeat(200))).toHaveLength(80);
    expect(cleanTitle("   ")).toBe("");
  });
});
