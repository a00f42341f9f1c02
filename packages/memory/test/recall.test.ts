import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, memoryContext } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { entityMemory, knowledgeGraphMemory, memoryBlock, vectorRecallMemory } from "../src/index.js";
import { HashingEmbeddings } from "../src/long-term.js";
import { STORES } from "./helpers.js";

/**
 * A deterministic extraction model: names are the capitalized words of the human
 * lines; an entity's summary gathers the human sentences that mention it; triples
 * come from "X likes Y" / "X lives in Y" sentences. It records every prompt.
 */
function extractor() {
  const prompts: string[] = [];
  const model = RunnableLambda.from((prompt: string) => {
    prompts.push(prompt);
    const humanLines = [...prompt.matchAll(/^Human: (.*)$/gm)].map((m) => m[1] as string);
    if (prompt.startsWith("You read a conversation")) {
      const names = new Set(
        humanLines.flatMap((line) => line.match(/\b[A-Z][a-z]+\b/g) ?? []).filter((w) => !["I", "What", "Where", "Who", "Tell"].includes(w)),
      );
      return names.size ? [...names].join(", ") : "NONE";
    }
    const entity = /about "([^"]+)"/.exec(prompt)?.[1];
    if (entity) {
      const previous = /Existing summary:\n(.*)\n/.exec(prompt)?.[1] ?? "";
      return [previous, ...humanLines.filter((line) => line.includes(entity))].filter(Boolean).join(" ");
    }
    const triples = humanLines.flatMap((line) =>
      [...line.matchAll(/([A-Z][a-z]+) (likes|lives in) ([A-Z]?[a-z]+)/g)].map((m) => `${m[1]} | ${m[2]} | ${m[3]}`),
    );
    return triples.length ? triples.join("\n") : "NONE";
  });
  return { model, prompts };
}

function seen() {
  const prompts: BaseMessage[][] = [];
  const model = RunnableLambda.from((messages: BaseMessage[]) => {
    prompts.push(messages);
    return new AIMessage("noted");
  });
  return { model, prompts };
}

describe.each(STORES)("entity, knowledge-graph and vector recall on %s", (_, makeStore) => {
  it("entityMemory injects what is known about the entities the input names", async () => {
    const store = makeStore();
    const { model: extract } = extractor();
    const { model, prompts } = seen();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: entityMemory({ model: extract, k: 1 }) });
    const config = { configurable: { sessionId: "e" } };
    for (const text of ["Ada works at Babbage Labs", "Grace lives in Arlington", "the weather is mild", "Tell me about Ada"]) {
      await chain.invoke([new HumanMessage(text)], config);
    }
    const last = prompts[prompts.length - 1]!;
    expect(last[0]).toBeInstanceOf(SystemMessage);
    expect(last[0]!.content).toBe(memoryBlock("entities", "What is known about what this message mentions", "- Ada: Ada works at Babbage Labs"));
    expect(String(last[0]!.content)).not.toContain("Grace");
    const state = (await store.getState(config.configurable, "entities")) as { entities: Record<string, string> };
    expect(Object.keys(state.entities).sort()).toEqual(["Ada", "Arlington", "Babbage", "Grace", "Labs"]);
    await store.close();
  });

  it("entityMemory catches up on turns a crash left unprocessed, without a model call at load otherwise", async () => {
    const store = makeStore();
    const key = { sessionId: "e2" };
    await store.append(key, [new HumanMessage("Linus likes kernels"), new AIMessage("ok")]);
    const { model: extract, prompts } = extractor();
    const memory = entityMemory({ model: extract });
    await memory.load(memoryContext(store, key, { input: [new HumanMessage("What about Linus?")] }));
    const calls = prompts.length;
    expect(calls).toBeGreaterThan(0);
    const loaded = await memory.load(memoryContext(store, key, { input: [new HumanMessage("And Linus again?")] }));
    expect(prompts.length).toBe(calls); // nothing new to process: no model call
    expect(loaded[0]!.content).toContain("Linus: Linus likes kernels");
    await store.close();
  });

  it("knowledgeGraphMemory keeps triples and injects those the input mentions", async () => {
    const store = makeStore();
    const { model: extract } = extractor();
    const { model, prompts } = seen();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: knowledgeGraphMemory({ model: extract, k: 0 }) });
    const config = { configurable: { sessionId: "kg" } };
    for (const text of ["Ada likes tea", "Grace lives in Arlington", "Ada likes tea", "What does Ada like?"])
      await chain.invoke([new HumanMessage(text)], config);
    expect(prompts[3]![0]!.content).toBe(memoryBlock("knowledge", "Known facts about what this message mentions", "- Ada likes tea"));
    const state = (await store.getState(config.configurable, "knowledge-graph")) as { triples: string[][] };
    expect(state.triples).toEqual([
      ["Ada", "likes", "tea"],
      ["Grace", "lives in", "Arlington"],
    ]);
    await store.close();
  });

  it("vectorRecallMemory recalls the relevant earlier messages beside the window, never duplicating it", async () => {
    const store = makeStore();
    const { model, prompts } = seen();
    const memory = vectorRecallMemory({ embeddings: new HashingEmbeddings(), k: 2, window: 2 });
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory });
    const config = { configurable: { sessionId: "v" } };
    const topics = [
      "I collect stamps from small islands",
      "my sister plays the cello",
      "we adopted a grey cat",
      "the garden needs watering",
      "I bake sourdough on Sundays",
      "the train was late again",
    ];
    for (const text of topics) await chain.invoke([new HumanMessage(text)], config);
    await chain.invoke([new HumanMessage("which islands were the stamps from?")], config);
    const prompt = prompts[prompts.length - 1]!;
    expect(prompt[0]!.content).toBe(memoryBlock("recall", "Earlier in this conversation", "- Human: I collect stamps from small islands"));
    const windowLines = prompt.slice(1).map((m) => String(m.content));
    expect(windowLines).toEqual(["I bake sourdough on Sundays", "noted", "the train was late again", "noted", "which islands were the stamps from?"]);
    expect(await store.getState(config.configurable, "vectors")).toEqual({ processed: 14 }); // the vectors are in the recall index, not the state
    const index = store.recallIndex();
    if (index) expect(await index.search("sessionId=v", new HashingEmbeddings().vector("stamps"), 100)).toHaveLength(14);
    await store.close();
  });
});

describe("classic entity, knowledge-graph and vector-store memories", () => {
  it("EntityMemory gives history and an entities object for what the input names", async () => {
    const { EntityMemory } = await import("../src/classic.js");
    const { model } = extractor();
    const memory = new EntityMemory({ llm: model, k: 1 });
    await memory.saveContext({ input: "Ada works at Babbage Labs" }, { output: "noted" });
    await memory.saveContext({ input: "the weather is mild" }, { output: "indeed" });
    const vars = await memory.loadMemoryVariables({ input: "Where does Ada work?" });
    expect(vars.entities).toEqual({ Ada: "Ada works at Babbage Labs" });
    expect(vars.history).toBe("Human: the weather is mild\nAI: indeed");
    expect(memory.memoryKeys).toEqual(["history", "entities"]);
  });

  it("ConversationKGMemory gives the triples about what the input names", async () => {
    const { ConversationKGMemory } = await import("../src/classic.js");
    const { model } = extractor();
    const memory = new ConversationKGMemory({ llm: model });
    await memory.saveContext({ input: "Grace lives in Arlington" }, { output: "ok" });
    await memory.saveContext({ input: "Ada likes tea" }, { output: "ok" });
    expect(await memory.loadMemoryVariables({ input: "Tell me about Grace" })).toEqual({ history: "Grace lives in Arlington." });
  });

  it("VectorStoreRetrieverMemory recalls the saved exchange most like the input", async () => {
    const { VectorStoreRetrieverMemory } = await import("../src/classic.js");
    const { MemoryVectorStore } = await import("@langchain/classic/vectorstores/memory");
    const store = new MemoryVectorStore(new HashingEmbeddings());
    const memory = new VectorStoreRetrieverMemory({ vectorStoreRetriever: store.asRetriever(1), memoryKey: "history" });
    await memory.saveContext({ input: "My favorite food is pizza" }, { output: "that's good to know" });
    await memory.saveContext({ input: "My favorite sport is soccer" }, { output: "nice" });
    expect(await memory.loadMemoryVariables({ input: "what food do I like?" })).toEqual({
      history: "input: My favorite food is pizza\noutput: that's good to know",
    });
  });
});
